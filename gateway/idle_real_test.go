package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
)

// cachedPerQueue returns each owned queue's cached count.
func (e *realEnv) cachedPerQueue(t *testing.T, group string) map[int]int {
	t.Helper()
	st, err := e.gw.GroupStatus(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, c := range st.Clients {
		for _, q := range c.Queues {
			out[q.Queue.QueueID] = q.Held
		}
	}
	return out
}

// Issue 10 item 2: a pull group nobody receives from drops to the idle
// window (IdlePrefetch + one pull batch per queue, plus what is leased),
// giving back what it had prefetched; the first receive restores the full
// window, and every message is still delivered exactly once.
func TestRealIdleGroupShrinksPrefetch(t *testing.T) {
	for _, mode := range []core.ConsumeMode{core.Concurrently, core.Orderly} {
		t.Run(string(mode), func(t *testing.T) {
			const queues, perQueue, window = 2, 600, 8
			dir := t.TempDir()
			eng, err := engine.Open(engine.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			reg, err := groups.OpenWith(eng.Store(), groups.Options{Offsets: eng})
			if err != nil {
				t.Fatal(err)
			}
			deps := consumer.Deps{Reader: eng, SendBack: SettlingSendBack{Engine: eng, Registry: reg}, Coordinator: reg}
			e := startRealEnv(t, eng, reg, Options{
				Dir: dir, Groups: reg, InstanceID: "gw1",
				IdlePrefetchAfter: time.Second, IdlePrefetch: window,
				NewClient: ConsumerFactory(deps, func(o *consumer.Options) { o.PersistInterval = 50 * time.Millisecond }),
			})
			if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "t", Queues: queues}); err != nil {
				t.Fatal(err)
			}
			e.publish(t, "t", queues*perQueue, nil)
			cfg := clustering("g")
			cfg.ConsumeMode = mode
			cfg.ConsumeFrom = core.ConsumeFromFirstOffset
			if _, _, err := e.reg.Put(cfg); err != nil {
				t.Fatal(err)
			}
			// Prefetched with the default window (1000 ≥ perQueue)...
			peak := 0
			checkFor(t, 10*time.Second, func() error {
				for _, n := range e.cachedPerQueue(t, "g") {
					peak = max(peak, n)
				}
				if peak < perQueue/2 {
					return fmt.Errorf("peak cached %d", peak)
				}
				return nil
			})
			// ... then, idle, down to the window plus one pull batch.
			limit := window + consumer.DefaultPullBatchSize
			checkFor(t, 10*time.Second, func() error {
				cached := e.cachedPerQueue(t, "g")
				if len(cached) != queues {
					return fmt.Errorf("queues %v", cached)
				}
				for q, n := range cached {
					if n > limit {
						return fmt.Errorf("queue %d caches %d, want <= %d", q, n, limit)
					}
				}
				return nil
			})
			t.Logf("%s: per-queue cache %d before idle, %v after (window %d + batch %d)", mode, peak, e.cachedPerQueue(t, "g"),
				window, consumer.DefaultPullBatchSize)

			// Receivers come back: everything, exactly once.
			seen := map[string]int{}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for len(seen) < queues*perQueue && ctx.Err() == nil {
				got, err := e.gw.Receive(ctx, "g", core.ReceiveRequest{MaxMessages: MaxReceiveMessages, Wait: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				var hs []string
				for _, r := range got {
					seen[string(r.Message.Body)]++
					if seen[string(r.Message.Body)] > 1 {
						t.Fatalf("message %s delivered twice", r.Message.Body)
					}
					hs = append(hs, r.ReceiptHandle)
				}
				if len(hs) > 0 {
					if _, err := e.gw.Ack(ctx, "g", hs); err != nil {
						t.Fatal(err)
					}
				}
			}
			if len(seen) != queues*perQueue {
				t.Fatalf("received %d distinct messages, want %d", len(seen), queues*perQueue)
			}
			if extra, _ := e.gw.Receive(ctx, "g", core.ReceiveRequest{MaxMessages: MaxReceiveMessages, Wait: 200 * time.Millisecond}); len(extra) > 0 {
				t.Fatalf("%d messages delivered again", len(extra))
			}
		})
	}
}
