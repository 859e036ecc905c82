package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// hookSink is a loopback webhook receiver recording the bodies it acked.
type hookSink struct {
	srv *httptest.Server

	mu     sync.Mutex
	bodies map[string]int // message body → times received
	fail   bool           // answer 500
}

func newHookSink(t *testing.T) *hookSink {
	s := &hookSink{bodies: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var p struct {
			Messages []struct {
				Body string `json:"body"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		for _, m := range p.Messages {
			s.bodies[m.Body]++
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *hookSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// newPushEnv is newRealEnv with webhooks allowed to reach loopback and
// metrics in reg.
func newPushEnv(t *testing.T, reg prometheus.Registerer) *realEnv {
	t.Helper()
	dir := t.TempDir()
	// Short delay levels: a sent-back message is due again in 100 ms.
	levels := make([]time.Duration, 18)
	for i := range levels {
		levels[i] = 100 * time.Millisecond
	}
	eng, err := engine.Open(engine.Options{Dir: dir, DelayLevels: levels})
	if err != nil {
		t.Fatal(err)
	}
	gr, err := groups.OpenWith(eng.Store(), groups.Options{Offsets: eng})
	if err != nil {
		t.Fatal(err)
	}
	deps := consumer.Deps{Reader: eng, SendBack: SettlingSendBack{Engine: eng, Registry: gr}, Coordinator: gr}
	return startRealEnv(t, eng, gr, Options{
		Dir: dir, Groups: gr, InstanceID: "gw1",
		NewClient: ConsumerFactory(deps, func(o *consumer.Options) {
			o.PersistInterval = 50 * time.Millisecond
		}),
		Webhook: webhook.Options{AllowLoopback: true, Registerer: reg},
	})
}

func pushGroup(name, url string) core.GroupConfig {
	c := clustering(name)
	c.Subscriptions = []core.Subscription{{Topic: "orders", Filter: "*"}}
	c.ConsumeFrom = core.ConsumeFromFirstOffset
	c.MaxReconsumeTimes = 16
	c.Push = &core.PushConfig{URL: url, MaxInFlight: 4, TimeoutSeconds: 5}
	return c
}

// TestPushGroupLifecycle follows one group through the registry: pull →
// push (a leased message is not lost) → new URL → push removed (receive
// works again) → deleted (its pusher's metric series are gone).
func TestPushGroupLifecycle(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newPushEnv(t, reg)
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "orders", Queues: 2}); err != nil {
		t.Fatal(err)
	}
	a, b := newHookSink(t), newHookSink(t)

	// A pull group with one message leased and never answered.
	pull := pushGroup("g", "")
	pull.Push = nil
	if _, _, err := e.reg.Put(pull); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "orders", 10, nil)
	got, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 1, Wait: 5 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(got))
	}

	// Becoming a push group: every message, the leased one included,
	// reaches the webhook; receive answers 409.
	if _, _, err := e.reg.Put(pushGroup("g", a.srv.URL)); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, func() error {
		if n := a.count(); n != 10 {
			return fmt.Errorf("receiver a has %d of 10", n)
		}
		return nil
	})
	if _, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 1}); core.ErrorCode(err) != core.EConflict {
		t.Fatalf("receive on a push group: %v, want EConflict", err)
	}
	// The receiver counts a message before the pusher has read the answer
	// and counted it delivered: poll.
	var st core.GroupStatus
	checkFor(t, 5*time.Second, func() error {
		var err error
		if st, err = e.gw.GroupStatus(context.Background(), "g"); err != nil {
			return err
		}
		if st.Push == nil || st.Push.URL != a.srv.URL || st.Push.Delivered < 10 || st.Push.LastSuccessAt.IsZero() {
			return fmt.Errorf("push status %+v", st.Push)
		}
		return nil
	})
	if len(st.Clients) != 1 || st.Clients[0].ClientID != "gw1" || len(st.Clients[0].Queues) < 2 {
		t.Fatalf("push group clients %+v", st.Clients)
	}

	// A new URL takes effect without a restart.
	if _, _, err := e.reg.Put(pushGroup("g", b.srv.URL)); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, func() error {
		st, err := e.gw.GroupStatus(context.Background(), "g")
		if err != nil || st.Push == nil || st.Push.URL != b.srv.URL {
			return fmt.Errorf("status %+v, %v", st.Push, err)
		}
		return nil
	})
	e.publish(t, "orders", 5, func(int) string { return "" })
	checkFor(t, 10*time.Second, func() error {
		if n := b.count(); n != 5 {
			return fmt.Errorf("receiver b has %d of 5", n)
		}
		return nil
	})

	// Every answer is in (the sink counts a message before the pusher
	// reads its answer): nothing pushed is left to deliver again.
	checkFor(t, 5*time.Second, func() error {
		offs, err := e.admin.Offsets(context.Background(), "g", "")
		if err != nil {
			return err
		}
		for _, o := range offs {
			if o.Queue.Topic == "orders" && o.Lag != 0 {
				return fmt.Errorf("queue %d lag %d", o.Queue.QueueID, o.Lag)
			}
		}
		return nil
	})

	// Push removed: a pull group again, receives get new messages and
	// the webhook gets none.
	if _, _, err := e.reg.Put(pull); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, func() error {
		st, err := e.gw.GroupStatus(context.Background(), "g")
		if err != nil || st.Push != nil {
			return fmt.Errorf("still pushing: %+v, %v", st.Push, err)
		}
		return nil
	})
	e.publish(t, "orders", 1, nil)
	got, err = e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 32, Wait: 5 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("receive after push removed: %v, %d messages", err, len(got))
	}
	if res, _ := e.gw.Ack(context.Background(), "g", handles(got)); res[0].Status != core.HandleOK {
		t.Fatalf("ack: %s", res[0].Status)
	}
	if n := a.count() + b.count(); n != 15 {
		t.Fatalf("webhooks got %d messages after push was removed, want 15 in all", n)
	}

	// Push again, then delete: the pusher's series leave /metrics.
	if _, _, err := e.reg.Put(pushGroup("g", a.srv.URL)); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "orders", 1, nil)
	checkFor(t, 5*time.Second, func() error {
		if n := seriesOf(t, reg, "g"); n == 0 {
			return errors.New("no webhook series for g")
		}
		return nil
	})
	if err := e.reg.Delete("g"); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, func() error {
		if n := seriesOf(t, reg, "g"); n != 0 {
			return fmt.Errorf("%d webhook series of a deleted group", n)
		}
		return nil
	})
}

// TestPushFailuresGoThroughRetry: a receiver answering 500 gets its
// messages again (the engine's sendMessageBack), none lost.
func TestPushFailuresGoThroughRetry(t *testing.T) {
	e := newPushEnv(t, nil)
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "orders", Queues: 2}); err != nil {
		t.Fatal(err)
	}
	s := newHookSink(t)
	s.fail = true
	if _, _, err := e.reg.Put(pushGroup("g", s.srv.URL)); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "orders", 20, nil)
	checkFor(t, 5*time.Second, func() error {
		st, err := e.gw.GroupStatus(context.Background(), "g")
		if err != nil || st.Push == nil || st.Push.Failed < 20 || st.Push.ConsecutiveFailures == 0 {
			return fmt.Errorf("status %+v, %v", st.Push, err)
		}
		return nil
	})
	s.mu.Lock()
	s.fail = false
	s.mu.Unlock()
	checkFor(t, 10*time.Second, func() error {
		if n := s.count(); n != 20 {
			st, _ := e.gw.GroupStatus(context.Background(), "g")
			ts, _ := e.eng.TopicStats(core.RetryTopic("g"))
			return fmt.Errorf("receiver has %d of 20; %+v %+v; retry %+v; counters %+v", n, st.Push, st.Clients, ts, e.eng.Counters())
		}
		return nil
	})
	st, err := e.gw.GroupStatus(context.Background(), "g")
	if err != nil || st.Push.ConsecutiveFailures != 0 || st.Push.LastError == "" {
		t.Fatalf("status after recovery %+v, %v", st.Push, err)
	}
}

// seriesOf counts the mqgate_webhook_* series labelled group=g.
func seriesOf(t *testing.T, reg *prometheus.Registry, g string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "group" && l.GetValue() == g {
					n++
				}
			}
		}
	}
	return n
}
