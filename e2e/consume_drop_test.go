package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// groupBuffered reads the group's status: messages buffered in the gateway
// and in flight.
func groupBuffered(t *testing.T, s *server, group string) (buffered, inFlight int) {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group, nil)
	want(t, r, http.StatusOK)
	var g struct {
		Status struct {
			Buffered int `json:"buffered"`
			InFlight int `json:"inFlight"`
		} `json:"status"`
	}
	r.JSON(t, &g)
	return g.Status.Buffered, g.Status.InFlight
}

// Issue 9 item 4 against the binary: after offsets/reset to LAST_OFFSET the
// messages the gateway had buffered are never handed out, the handles
// already issued answer expired, and new messages flow.
func TestConsumeResetDropsBufferedMessages(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	for i := range 20 {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint("old", i)}), http.StatusCreated)
	}
	checkFor(t, 10*time.Second, 0, func() error {
		if b, _ := groupBuffered(t, s, "g"); b != 20 {
			return fmt.Errorf("%d buffered", b)
		}
		return nil
	})
	held := receive(t, s, "g", map[string]any{"maxMessages": 2, "invisibleSeconds": 60})
	if len(held) != 2 {
		t.Fatalf("got %d", len(held))
	}
	want(t, s.do(t, "POST", "/v1/groups/g/offsets/reset", map[string]any{"topic": "orders", "position": "LAST_OFFSET"}), http.StatusOK)
	// The reset answers once the old ProcessQueues are dropped: no wait.
	if got := receive(t, s, "g", map[string]any{"maxMessages": 32}); len(got) != 0 {
		t.Fatalf("right after the reset, receive handed out %d old messages (first %q)", len(got), got[0].Body)
	}
	if b, f := groupBuffered(t, s, "g"); b != 0 || f != 0 {
		t.Fatalf("right after the reset: %d buffered, %d in flight", b, f)
	}
	if got := receive(t, s, "g", map[string]any{"maxMessages": 32, "waitSeconds": 1}); len(got) != 0 {
		t.Fatalf("after the reset, receive handed out %d old messages (first %q)", len(got), got[0].Body)
	}
	res := ack(t, s, "g", held[0].ReceiptHandle, held[1].ReceiptHandle)
	for _, r := range res.Results {
		if r.Status != "expired" {
			t.Fatalf("ack of a message of the dropped ProcessQueue: %s", r.Status)
		}
	}
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "new"}), http.StatusCreated)
	var got []recvMsg
	checkFor(t, 10*time.Second, 0, func() error {
		got = append(got, receive(t, s, "g", map[string]any{"maxMessages": 32, "waitSeconds": 1})...)
		if len(got) == 0 {
			return fmt.Errorf("nothing yet")
		}
		return nil
	})
	if len(got) != 1 || got[0].Body != "new" {
		t.Fatalf("after the reset got %+v, want only \"new\"", got)
	}
}

// Issue 9 item 10 against the binary: acking an acked handle answers ok
// also after its lease deadline; an expired one answers expired.
func TestConsumeReAckAfterLeaseDeadline(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	for i := range 2 {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint(i)}), http.StatusCreated)
	}
	var got []recvMsg
	checkFor(t, 10*time.Second, 0, func() error {
		got = append(got, receive(t, s, "g", map[string]any{"maxMessages": 2, "waitSeconds": 1, "invisibleSeconds": 1})...)
		if len(got) < 2 {
			return fmt.Errorf("got %d", len(got))
		}
		return nil
	})
	if r := ack(t, s, "g", got[0].ReceiptHandle); r.Results[0].Status != "ok" {
		t.Fatalf("ack: %s", r.Results[0].Status)
	}
	time.Sleep(1500 * time.Millisecond) // past both lease deadlines: the test is about time passing
	for range 2 {
		r := ack(t, s, "g", got[0].ReceiptHandle, got[1].ReceiptHandle)
		if r.Results[0].Status != "ok" || r.Results[1].Status != "expired" {
			t.Fatalf("after the deadline: acked handle %s (want ok), expired one %s (want expired)", r.Results[0].Status, r.Results[1].Status)
		}
	}
}

// Issue 9 item 6 against the binary: a BROADCASTING + ORDERLY group serves
// every consumerId everything, each sharding key in publish order (no
// per-group queue lock starves the second consumerId).
func TestConsumeBroadcastingOrderlyEveryConsumer(t *testing.T) {
	const n = 40
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "bo", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"messageModel":  "BROADCASTING",
		"consumeMode":   "ORDERLY",
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	publishBatches(t, s, "orders", "m", n, func(i int) string { return fmt.Sprint("k", i%4) })
	for _, id := range []string{"c1", "c2"} {
		var bodies []string
		checkFor(t, 15*time.Second, 0, func() error {
			ms := receive(t, s, "bo", map[string]any{"maxMessages": 32, "waitSeconds": 1, "consumerId": id})
			var hs []string
			for _, m := range ms {
				bodies = append(bodies, m.Body)
				hs = append(hs, m.ReceiptHandle)
			}
			if len(hs) > 0 {
				for _, r := range ack(t, s, "bo", hs...).Results {
					if r.Status != "ok" {
						return fmt.Errorf("%s: ack answered %q", id, r.Status)
					}
				}
			}
			if len(bodies) < n {
				return fmt.Errorf("%s: %d of %d", id, len(bodies), n)
			}
			return nil
		})
		last := map[int]int{} // key → last seq
		for _, b := range bodies {
			var seq int
			if _, err := fmt.Sscanf(b, "m-%d", &seq); err != nil {
				t.Fatalf("%s: body %q", id, b)
			}
			if prev, ok := last[seq%4]; ok && seq <= prev {
				t.Fatalf("%s: key k%d got m-%d after m-%d", id, seq%4, seq, prev)
			}
			last[seq%4] = seq
		}
		if len(bodies) != n {
			t.Fatalf("%s: %d deliveries, want %d", id, len(bodies), n)
		}
	}
}
