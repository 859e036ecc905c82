package e2e

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestJetStreamIdempotencyAcrossKill: 1,000 publishes, each sent 4 times
// (the original and 3 retries) with the same Idempotency-Key through two
// JetStream gateways, one of which is killed (kill -9) and restarted
// while they run: exactly 1,000 messages are stored, and every attempt of
// a key that was answered answered the same message id.
func TestJetStreamIdempotencyAcrossKill(t *testing.T) {
	cl := natsCluster(t, 3)
	flags := jsFlags(t, cl, filepath.Join(t.TempDir(), "handle.key"))
	var mu sync.Mutex
	gws := []*server{startServer(t, t.TempDir(), flags...), startServer(t, t.TempDir(), flags...)}
	gw := func(i int) *server {
		mu.Lock()
		defer mu.Unlock()
		return gws[i%2]
	}
	want(t, gws[0].do(t, "PUT", "/v1/topics/idem", map[string]any{"queues": 4}), 201)

	const keys, attempts, workers = 1000, 4, 8
	ids := make([]string, keys)
	var next, done, replayed atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= keys {
					return
				}
				key := fmt.Sprintf("order-%d", k)
				body := map[string]any{"body": "order " + key, "shardingKey": key}
				for a := 0; a < attempts; {
					// Alternate instances between attempts; an attempt
					// that does not get an answer (the instance was
					// killed) is retried on the other one.
					r, err := gw(w+k+a).try("POST", "/v1/topics/idem/messages", body, "Idempotency-Key", key)
					if err != nil || r.Status >= 500 {
						time.Sleep(20 * time.Millisecond)
						w++
						continue
					}
					if r.Status != 201 {
						errc <- fmt.Errorf("%s attempt %d: %d %s", key, a, r.Status, r.Body)
						return
					}
					var res struct {
						MessageID string `json:"messageId"`
						Replayed  bool   `json:"replayed"`
					}
					r.JSON(t, &res)
					if a == 0 && ids[k] == "" {
						ids[k] = res.MessageID
					} else if res.MessageID != ids[k] || !res.Replayed || r.Header.Get("Idempotent-Replayed") != "true" {
						errc <- fmt.Errorf("%s attempt %d: %s replayed=%v (header %q), first answer %s",
							key, a, res.MessageID, res.Replayed, r.Header.Get("Idempotent-Replayed"), ids[k])
						return
					}
					if a > 0 {
						replayed.Add(1)
					}
					a++
				}
				done.Add(1)
			}
		})
	}
	// kill -9 instance 0 a third of the way through, and start it again.
	checkFor(t, 120*time.Second, 20*time.Millisecond, func() error {
		if done.Load() < keys/3 {
			return fmt.Errorf("%d keys done", done.Load())
		}
		return nil
	})
	gws[0].kill()
	again := startServer(t, t.TempDir(), flags...)
	mu.Lock()
	gws[0] = again
	mu.Unlock()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	var st struct {
		Stats struct {
			Messages int64 `json:"messages"`
		} `json:"stats"`
	}
	r := gws[1].do(t, "GET", "/v1/topics/idem", nil)
	want(t, r, 200)
	r.JSON(t, &st)
	if st.Stats.Messages != keys {
		t.Fatalf("%d messages stored, want %d", st.Stats.Messages, keys)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	if len(seen) != keys {
		t.Fatalf("%d distinct message ids, want %d", len(seen), keys)
	}
	t.Logf("%d keys, %d replayed answers, 1 gateway killed: %d stored", keys, replayed.Load(), st.Stats.Messages)
}
