package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestConsumeBroadcastingHTTP: a BROADCASTING group with three consumer
// ids; each gets every message exactly once and has its own offsets; a
// receive without consumerId is a 400 naming the field; after a restart
// each consumer id resumes from its own committed offsets.
func TestConsumeBroadcastingHTTP(t *testing.T) {
	const n = 60
	dir := t.TempDir()
	s := startServer(t, dir)
	consumeSetup(t, s, "fanout", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"messageModel":  "BROADCASTING",
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	wantProblem(t, s.do(t, "POST", "/v1/groups/fanout/receive", map[string]any{"waitSeconds": 0}), http.StatusBadRequest, "consumerId")
	wantProblem(t, s.do(t, "GET", "/v1/groups/fanout/offsets", nil), http.StatusBadRequest, "consumerId")
	publishBatches(t, s, "orders", "b", n, func(i int) string { return fmt.Sprint("k", i%7) })

	consumers := []string{"c1", "c2", "c3"}
	// drain receives and acks as consumer id until it has want messages.
	drain := func(s *server, id string, want int) map[string]int {
		t.Helper()
		got := map[string]int{}
		total := 0
		checkFor(t, 20*time.Second, 0, func() error {
			ms := receive(t, s, "fanout", map[string]any{"maxMessages": 32, "waitSeconds": 1, "consumerId": id})
			if len(ms) > 0 {
				var hs []string
				for _, m := range ms {
					got[m.Body]++
					total++
					hs = append(hs, m.ReceiptHandle)
				}
				for _, r := range ack(t, s, "fanout", hs...).Results {
					if r.Status != "ok" {
						return fmt.Errorf("%s: ack answered %q", id, r.Status)
					}
				}
			}
			if total < want {
				return fmt.Errorf("%s: %d of %d", id, total, want)
			}
			return nil
		})
		// Nothing more: every message once.
		if extra := receive(t, s, "fanout", map[string]any{"maxMessages": 32, "waitSeconds": 1, "consumerId": id}); len(extra) != 0 {
			t.Fatalf("%s: %d messages beyond the %d published", id, len(extra), want)
		}
		return got
	}
	for _, id := range consumers {
		got := drain(s, id, n)
		for i := range n {
			if c := got[fmt.Sprintf("b-%d", i)]; c != 1 {
				t.Fatalf("%s got b-%d %d times", id, i, c)
			}
		}
	}
	var g struct {
		Status struct {
			Consumers []string `json:"consumers"`
		} `json:"status"`
	}
	s.do(t, "GET", "/v1/groups/fanout", nil).JSON(t, &g)
	slices.Sort(g.Status.Consumers)
	if !slices.Equal(g.Status.Consumers, consumers) {
		t.Fatalf("status consumers %v, want %v", g.Status.Consumers, consumers)
	}
	for _, id := range consumers {
		checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
			_, err := drained(t, s, "fanout", "?consumerId="+id)
			return err
		})
	}
	// A fourth consumer id, seen for the first time, starts from its
	// consumeFrom (FIRST_OFFSET) and gets everything too.
	if got := drain(s, "c4", n); len(got) != n {
		t.Fatalf("c4 got %d distinct messages", len(got))
	}

	// Restart: each consumer id resumes from its own offsets, so only
	// what was published since comes (c1 and c2 only asked again).
	s.stop(t)
	s = startServer(t, dir)
	publishBatches(t, s, "orders", "after", 10, nil)
	for _, id := range consumers[:2] {
		got := drain(s, id, 10)
		for b, c := range got {
			if c != 1 || b[:5] != "after" {
				t.Fatalf("%s after restart got %q %d times", id, b, c)
			}
		}
	}
}
