package gateway

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
)

// realEnv is the gateway over a real engine, group registry and push
// consumer on one bbolt file in a temp dir.
type realEnv struct {
	eng   *engine.Engine
	reg   *groups.Registry
	gw    *Embedded
	admin *Admin
}

type nopSendBack struct{}

func (nopSendBack) SendMessagesBack(context.Context, string, []consumer.SendBack) error {
	return nil
}

func newRealEnv(t *testing.T) *realEnv {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.Open(engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := groups.OpenWith(eng.Store(), groups.Options{Offsets: eng})
	if err != nil {
		t.Fatal(err)
	}
	deps := consumer.Deps{Reader: eng, SendBack: nopSendBack{}, Coordinator: reg}
	return startRealEnv(t, eng, reg, Options{
		Dir: dir, Groups: reg, InstanceID: "gw1",
		NewClient: ConsumerFactory(deps, func(o *consumer.Options) {
			o.PersistInterval = 50 * time.Millisecond
			o.SuspendTime = 100 * time.Millisecond
		}),
	})
}

// startRealEnv starts a gateway with opts over eng and reg; the test's
// cleanup closes the gateway, then reg, then eng.
func startRealEnv(t *testing.T, eng *engine.Engine, reg *groups.Registry, opts Options) *realEnv {
	t.Helper()
	gw, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := gw.Close(ctx); err != nil {
			t.Error(err)
		}
		reg.Close()
		eng.Close()
	})
	return &realEnv{eng: eng, reg: reg, gw: gw, admin: &Admin{Registry: reg, Engine: eng, Service: gw}}
}

func (e *realEnv) publish(t *testing.T, topic string, n int, key func(i int) string) {
	t.Helper()
	for i := 0; i < n; i += 100 {
		var msgs []core.PutMessage
		for j := i; j < min(i+100, n); j++ {
			m := core.PutMessage{Body: []byte(strconv.Itoa(j)), BodyIsText: true}
			if key != nil {
				m.ShardingKey = key(j)
			}
			msgs = append(msgs, m)
		}
		if _, err := e.eng.Put(context.Background(), topic, msgs); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRealExactlyOnceAndLagZero: 4 queues × n messages, 8 concurrent long
// pollers receiving up to 32 and acking: each message once, lag 0.
func TestRealExactlyOnceAndLagZero(t *testing.T) {
	perQueue := 1000
	if testing.Short() {
		perQueue = 200
	}
	e := newRealEnv(t)
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "orders", Queues: 4}); err != nil {
		t.Fatal(err)
	}
	cfg := clustering("g")
	cfg.Subscriptions = []core.Subscription{{Topic: "orders", Filter: "*"}}
	cfg.ConsumeFrom = core.ConsumeFromFirstOffset
	if _, _, err := e.reg.Put(cfg); err != nil {
		t.Fatal(err)
	}
	total := 4 * perQueue
	e.publish(t, "orders", total, nil)

	var mu sync.Mutex
	seen := map[string]int{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				got, err := e.gw.Receive(ctx, "g", core.ReceiveRequest{MaxMessages: 32, Wait: time.Second})
				if err != nil {
					return
				}
				mu.Lock()
				for _, r := range got {
					seen[string(r.Message.Body)]++
				}
				done := len(seen) == total
				mu.Unlock()
				if len(got) > 0 {
					res, err := e.gw.Ack(context.Background(), "g", handles(got))
					if err != nil {
						t.Error(err)
						return
					}
					for _, r := range res {
						if r.Status != core.HandleOK {
							t.Errorf("ack: %s", r.Status)
						}
					}
				}
				if done {
					cancel()
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if len(seen) != total {
		t.Fatalf("received %d distinct messages, want %d", len(seen), total)
	}
	for b, n := range seen {
		if n != 1 {
			t.Fatalf("message %s received %d times", b, n)
		}
	}
	t.Logf("%d messages received and acked in %v (%.0f msg/s)", total, el, float64(total)/el.Seconds())
	checkFor(t, 5*time.Second, func() error {
		offs, err := e.admin.Offsets(context.Background(), "g", "")
		if err != nil {
			return err
		}
		for _, o := range offs {
			if o.Lag != 0 || o.InFlight != 0 {
				return fmt.Errorf("%s/%d: lag %d, in flight %d", o.Queue.Topic, o.Queue.QueueID, o.Lag, o.InFlight)
			}
		}
		return nil
	})
}

// TestRealOrderlyPerKey: ORDERLY with random nacks and short leases that
// expire; every key's messages are first seen, and finally acked, in
// publish order.
func TestRealOrderlyPerKey(t *testing.T) {
	e := newRealEnv(t)
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "orders", Queues: 4}); err != nil {
		t.Fatal(err)
	}
	cfg := orderly("g")
	cfg.Subscriptions = []core.Subscription{{Topic: "orders", Filter: "*"}}
	cfg.ConsumeFrom = core.ConsumeFromFirstOffset
	cfg.MaxReconsumeTimes = 1000
	if _, _, err := e.reg.Put(cfg); err != nil {
		t.Fatal(err)
	}
	const keys, perKey = 8, 20
	e.publish(t, "orders", keys*perKey, func(i int) string { return "k" + strconv.Itoa(i%keys) })

	acked := map[string][]int{} // key → bodies acked in order
	rng := rand.New(rand.NewPCG(1, 2))
	deadline := time.Now().Add(30 * time.Second)
	n := 0
	for n < keys*perKey && time.Now().Before(deadline) {
		got, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 8, Wait: time.Second, Invisible: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			body, _ := strconv.Atoi(string(r.Message.Body))
			switch p := rng.IntN(20); {
			case p < 2:
				e.gw.Nack(context.Background(), "g", []string{r.ReceiptHandle}, 0, "")
			case p == 2:
				// let it expire
			default:
				res, _ := e.gw.Ack(context.Background(), "g", []string{r.ReceiptHandle})
				if res[0].Status == core.HandleOK {
					k := "k" + strconv.Itoa(body%keys)
					acked[k] = append(acked[k], body)
					n++
				}
			}
		}
	}
	if n != keys*perKey {
		t.Fatalf("acked %d of %d in time", n, keys*perKey)
	}
	for k, bodies := range acked {
		for i := 1; i < len(bodies); i++ {
			if bodies[i] <= bodies[i-1] {
				t.Fatalf("key %s acked out of order: %v", k, bodies)
			}
		}
		if len(bodies) != perKey {
			t.Fatalf("key %s: %d acked, want %d", k, len(bodies), perKey)
		}
	}
}
