package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// offsetRow is one row of GET /v1/groups/{group}/offsets.
type offsetRow struct {
	Topic           string `json:"topic"`
	QueueID         int    `json:"queueId"`
	CommittedOffset int64  `json:"committedOffset"`
	MaxOffset       int64  `json:"maxOffset"`
	Lag             int64  `json:"lag"`
	InFlight        int    `json:"inFlight"`
}

// drained checks that every offset row of the group (retry queue
// included) has lag 0 and nothing in flight, and returns the rows.
func drained(t *testing.T, s *server, group, query string) ([]offsetRow, error) {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group+"/offsets"+query, nil)
	if r.Status != http.StatusOK {
		return nil, fmt.Errorf("offsets: %d %s", r.Status, r.Body)
	}
	var out struct {
		Offsets []offsetRow `json:"offsets"`
	}
	r.JSON(t, &out)
	for _, o := range out.Offsets {
		if o.Lag != 0 || o.InFlight != 0 || o.CommittedOffset != o.MaxOffset {
			return out.Offsets, fmt.Errorf("not drained: %+v", o)
		}
	}
	return out.Offsets, nil
}

// publishBatches publishes n text messages "prefix-i" in batches of up to
// 1000 (each batch goes to the topic's next queue, round robin).
func publishBatches(t *testing.T, s *server, topic, prefix string, n int, shardingKey func(i int) string) {
	t.Helper()
	for i := 0; i < n; i += 1000 {
		var msgs []map[string]any
		for j := i; j < min(i+1000, n); j++ {
			m := map[string]any{"body": fmt.Sprintf("%s-%d", prefix, j)}
			if shardingKey != nil {
				m["shardingKey"] = shardingKey(j)
			}
			msgs = append(msgs, m)
		}
		want(t, s.do(t, "POST", "/v1/topics/"+topic+"/messages/batch", map[string]any{"messages": msgs}), http.StatusCreated)
	}
}

// TestConsumeEightPollersExactlyOnce: 4 queues × 1,000 messages, 8
// concurrent long pollers (maxMessages 32, waitSeconds 1) acking what they
// get: every message is delivered exactly once, every ack answers ok, and
// the offsets end with lag 0 and nothing in flight.
func TestConsumeEightPollersExactlyOnce(t *testing.T) {
	const queues, perQueue, pollers = 4, 1000, 8
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "load", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	publishBatches(t, s, "orders", "m", queues*perQueue, nil)
	var topic struct {
		Stats struct {
			Queues []struct {
				MaxOffset int64 `json:"maxOffset"`
			} `json:"queues"`
		} `json:"stats"`
	}
	s.do(t, "GET", "/v1/topics/orders", nil).JSON(t, &topic)
	for i, q := range topic.Stats.Queues {
		if q.MaxOffset != perQueue {
			t.Fatalf("queue %d holds %d messages, want %d", i, q.MaxOffset, perQueue)
		}
	}

	var (
		mu     sync.Mutex
		seen   = map[string]int{} // body → deliveries
		unique int
		done   = make(chan struct{})
		wg     sync.WaitGroup
	)
	start := time.Now()
	for p := range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				msgs, err := tryReceive(s, "load", map[string]any{"maxMessages": 32, "waitSeconds": 1})
				if err != nil {
					t.Errorf("poller %d: %v", p, err)
					return
				}
				if len(msgs) == 0 {
					continue
				}
				if len(msgs) > 32 {
					t.Errorf("poller %d: %d messages for maxMessages 32", p, len(msgs))
				}
				handles := make([]string, len(msgs))
				for i, m := range msgs {
					handles[i] = m.ReceiptHandle
				}
				r, err := s.try("POST", "/v1/groups/load/ack", map[string]any{"receiptHandles": handles})
				if err != nil || r.Status != http.StatusOK {
					t.Errorf("poller %d: ack: %v %v", p, err, r)
					return
				}
				var res handleResults
				if err := json.Unmarshal(r.Body, &res); err != nil {
					t.Errorf("poller %d: %v", p, err)
					return
				}
				for _, h := range res.Results {
					if h.Status != "ok" {
						t.Errorf("poller %d: ack answered %q", p, h.Status)
					}
				}
				mu.Lock()
				for _, m := range msgs {
					seen[m.Body]++
					if seen[m.Body] == 1 {
						unique++
					}
				}
				if unique == queues*perQueue {
					select {
					case <-done:
					default:
						close(done)
					}
				}
				mu.Unlock()
			}
		}()
	}
	timer := time.NewTimer(45 * time.Second)
	select {
	case <-done:
	case <-timer.C:
		close(done)
		wg.Wait()
		t.Fatalf("after 45s: %d of %d messages received", unique, queues*perQueue)
	}
	timer.Stop()
	elapsed := time.Since(start)
	wg.Wait() // every poller's last receive (≤ 1s wait) is counted too

	for i := range queues * perQueue {
		if n := seen[fmt.Sprintf("m-%d", i)]; n != 1 {
			t.Errorf("m-%d delivered %d times", i, n)
		}
	}
	if len(seen) != queues*perQueue {
		t.Errorf("%d distinct bodies, want %d", len(seen), queues*perQueue)
	}
	t.Logf("%d messages received and acked by %d pollers in %v (%.0f msgs/s)",
		queues*perQueue, pollers, elapsed.Round(time.Millisecond), float64(queues*perQueue)/elapsed.Seconds())

	rows := []offsetRow(nil)
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var err error
		rows, err = drained(t, s, "load", "")
		return err
	})
	var committed int64
	for _, o := range rows {
		if o.Topic == "orders" {
			committed += o.CommittedOffset
		}
	}
	if committed != queues*perQueue {
		t.Fatalf("committed %d in all, want %d: %+v", committed, queues*perQueue, rows)
	}
	if got := receive(t, s, "load", map[string]any{"maxMessages": 32}); len(got) != 0 {
		t.Fatalf("a drained group handed out %d more", len(got))
	}
}
