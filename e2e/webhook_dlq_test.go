package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"
)

// TestWebhookAlwaysFailingGoesToDLQ: a receiver that always answers 500
// gets each message 1 + maxReconsumeTimes times (attempt numbers in
// reconsumeTimes), then the message lands in the group's DLQ and is
// pushed no more.
func TestWebhookAlwaysFailingGoesToDLQ(t *testing.T) {
	const n, maxReconsume = 20, 3
	s := startPushServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/dead", map[string]any{"queues": 2}), http.StatusCreated)
	rc := newReceiver(t, func(*http.Request, []hookMsg) (int, http.Header) {
		return http.StatusInternalServerError, nil
	})
	putPushGroup(t, s, "dead", "dead", map[string]any{"url": rc.srv.URL, "secret": hookSecret},
		map[string]any{"maxReconsumeTimes": maxReconsume})
	publishN(t, s, "dead", "d", n, nil)

	checkFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if d := getGroup(t, s, "dead").Status.DLQDepth; d != n {
			return fmt.Errorf("dlqDepth %d, want %d", d, n)
		}
		return nil
	})
	var page struct {
		Messages []struct {
			MessageID      string `json:"messageId"`
			Topic          string `json:"topic"`
			Body           string `json:"body"`
			ReconsumeTimes int    `json:"reconsumeTimes"`
		} `json:"messages"`
	}
	r := s.do(t, "GET", "/v1/groups/dead/dlq?limit=100", nil)
	want(t, r, http.StatusOK)
	r.JSON(t, &page)
	if len(page.Messages) != n {
		t.Fatalf("DLQ lists %d messages, want %d", len(page.Messages), n)
	}
	ids := map[string]bool{}
	for _, m := range page.Messages {
		if m.Topic != "dead" || m.ReconsumeTimes != maxReconsume {
			t.Fatalf("dead letter %+v: want topic dead, reconsumeTimes %d", m, maxReconsume)
		}
		ids[m.MessageID] = true
	}
	// Give a straggler time to show up, then count attempts: each message
	// was POSTed exactly 1 + maxReconsumeTimes times, with reconsumeTimes
	// 0, 1, 2, 3 and the same messageId every time.
	time.Sleep(500 * time.Millisecond) // a quiet period, not synchronisation: nothing more may arrive
	attempts := map[string][]int{}
	for _, req := range rc.requests() {
		for _, m := range req.Msgs {
			if !ids[m.MessageID] {
				t.Fatalf("pushed message %s is not in the DLQ", m.MessageID)
			}
			attempts[m.Body] = append(attempts[m.Body], m.ReconsumeTimes)
		}
	}
	if len(attempts) != n {
		t.Fatalf("%d distinct messages pushed, want %d", len(attempts), n)
	}
	for body, rs := range attempts {
		sort.Ints(rs)
		if fmt.Sprint(rs) != fmt.Sprint([]int{0, 1, 2, 3}) {
			t.Fatalf("message %s pushed with reconsumeTimes %v, want [0 1 2 3]", body, rs)
		}
	}
	rc.checkSignatures(t)
	if st := getGroup(t, s, "dead").Status.Push; st == nil || st.Delivered != 0 || st.Failed != n*(maxReconsume+1) || st.ConsecutiveFailures == 0 {
		t.Fatalf("status.push %+v", st)
	}
}
