package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// checkFor polls fn until it returns nil or total passes (nats-server's
// checkFor): the only way tests wait for asynchronous state.
func checkFor(t testing.TB, total time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	var err error
	for {
		if err = fn(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %v", total, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// answer is how the pusher answered one message.
type answer struct {
	ok     bool
	level  int
	reason string
}

// recorder collects the answers of every delivery made with deliver, by
// message id, and counts double answers (which must never happen).
type recorder struct {
	mu      sync.Mutex
	got     map[string]answer
	order   []string // message ids in answer order
	doubles int
	notify  chan struct{}
}

func newRecorder() *recorder {
	return &recorder{got: map[string]answer{}, notify: make(chan struct{}, 1)}
}

// deliver builds a Delivery (as a consume service would) whose answers go
// to the recorder.
func (r *recorder) deliver(qid int, orderly bool, msgs []*core.Message) *consumer.Delivery {
	mq := core.MessageQueue{Topic: "orders", QueueID: qid}
	return consumer.NewDeliveryReasons("g", mq, orderly, msgs, func(i int, ok bool, level int, reason string) {
		r.mu.Lock()
		id := msgs[i].ID
		if _, dup := r.got[id]; dup {
			r.doubles++
		} else {
			r.got[id] = answer{ok: ok, level: level, reason: reason}
			r.order = append(r.order, id)
		}
		r.mu.Unlock()
		select {
		case r.notify <- struct{}{}:
		default:
		}
	})
}

// wait blocks until n messages are answered.
func (r *recorder) wait(t testing.TB, n int, total time.Duration) {
	t.Helper()
	timer := time.NewTimer(total)
	defer timer.Stop()
	for {
		r.mu.Lock()
		have := len(r.got)
		r.mu.Unlock()
		if have >= n {
			return
		}
		select {
		case <-r.notify:
		case <-timer.C:
			t.Fatalf("only %d of %d messages answered within %s", have, n, total)
		}
	}
}

func (r *recorder) get(id string) (answer, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.got[id]
	return a, ok
}

func (r *recorder) counts() (acked, nacked, doubles int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.got {
		if a.ok {
			acked++
		} else {
			nacked++
		}
	}
	return acked, nacked, r.doubles
}

// makeMsgs returns n text messages with ids prefix-0 … prefix-(n-1).
func makeMsgs(prefix string, qid, n int) []*core.Message {
	now := time.Now()
	ms := make([]*core.Message, n)
	for i := range ms {
		ms[i] = &core.Message{
			ID:          prefix + "-" + strconv.Itoa(i),
			Topic:       "orders",
			QueueID:     qid,
			QueueOffset: int64(i),
			Body:        []byte(fmt.Sprintf(`{"n":%d}`, i)),
			BodyIsText:  true,
			Tags:        "created",
			Keys:        []string{"k" + strconv.Itoa(i)},
			BornAt:      now,
			StoredAt:    now,
		}
	}
	return ms
}

// newTestPusher starts a pusher allowed to reach loopback and closes it at
// the end of the test.
func newTestPusher(t testing.TB, pc core.PushConfig, o Options) *Pusher {
	t.Helper()
	if pc.Secret == "" {
		pc.Secret = testSecret
	}
	p, err := New("g", pc, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// receiver starts a real HTTP server on 127.0.0.1:0.
func receiver(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
