package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConsumeKill9DuringConsumption: four pollers receive and ack; the
// server is killed with SIGKILL half-way. After a restart on the same data
// dir, every message that had not been acked ok before the kill is
// delivered again (nothing un-acked is lost); messages acked in the last
// offset-persist window may come twice, and the test reports how many.
func TestConsumeKill9DuringConsumption(t *testing.T) {
	const total, pollers = 2000, 4
	dir := t.TempDir()
	s := startServer(t, dir)
	consumeSetup(t, s, "crash", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	publishBatches(t, s, "orders", "c", total, func(i int) string { return fmt.Sprint("k", i%16) })

	var (
		mu          sync.Mutex
		ackedBefore = map[string]bool{}
		killed      atomic.Bool
		wg          sync.WaitGroup
		killNow     = make(chan struct{})
		once        sync.Once
	)
	for p := range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !killed.Load() {
				msgs, err := tryReceive(s, "crash", map[string]any{"maxMessages": 16, "waitSeconds": 1})
				if err != nil {
					if !killed.Load() {
						t.Errorf("poller %d: %v", p, err)
					}
					return
				}
				if len(msgs) == 0 {
					continue
				}
				hs := make([]string, len(msgs))
				for i, m := range msgs {
					hs[i] = m.ReceiptHandle
				}
				r, err := s.try("POST", "/v1/groups/crash/ack", map[string]any{"receiptHandles": hs})
				if err != nil || r.Status != http.StatusOK {
					if !killed.Load() {
						t.Errorf("poller %d: ack: %v %v", p, err, r)
					}
					return
				}
				var res handleResults
				if err := json.Unmarshal(r.Body, &res); err != nil {
					t.Errorf("poller %d: %v", p, err)
					return
				}
				mu.Lock()
				for i, h := range res.Results {
					if h.Status == "ok" {
						ackedBefore[msgs[i].Body] = true
					}
				}
				if len(ackedBefore) >= total/2 {
					once.Do(func() { close(killNow) })
				}
				mu.Unlock()
			}
		}()
	}
	timer := time.NewTimer(30 * time.Second)
	select {
	case <-killNow:
	case <-timer.C:
		t.Errorf("half the messages were not acked within 30s")
	}
	timer.Stop()
	killed.Store(true)
	s.kill()
	wg.Wait()
	if t.Failed() {
		return
	}
	mu.Lock()
	before := len(ackedBefore)
	mu.Unlock()

	s = startServer(t, dir)
	after := map[string]int{}
	checkFor(t, 30*time.Second, 0, func() error {
		ms := receive(t, s, "crash", map[string]any{"maxMessages": 32, "waitSeconds": 1})
		if len(ms) > 0 {
			hs := make([]string, len(ms))
			for i, m := range ms {
				after[m.Body]++
				hs[i] = m.ReceiptHandle
			}
			ack(t, s, "crash", hs...)
		}
		for i := range total {
			b := fmt.Sprintf("c-%d", i)
			if !ackedBefore[b] && after[b] == 0 {
				return fmt.Errorf("%s (not acked before the kill) not delivered after the restart", b)
			}
		}
		return nil
	})
	dups := 0
	for b, n := range after {
		if n > 1 {
			t.Errorf("%s delivered %d times after the restart", b, n)
		}
		if ackedBefore[b] {
			dups++
		}
	}
	t.Logf("acked before kill -9: %d; delivered after restart: %d, of which %d had been acked (persist window)", before, len(after), dups)
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		_, err := drained(t, s, "crash", "")
		return err
	})
}
