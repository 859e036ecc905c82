package jetstream_test

import (
	"strings"
	"testing"
	"time"
)

type deadLetters struct {
	Messages []struct {
		MessageID  string `json:"messageId"`
		LastReason string `json:"lastReason"`
	} `json:"messages"`
}

// A nack's reason reaches the DLQ copy (lastReason); a nack without one
// dead-letters with none, even after a retry that had one; a message
// dead-lettered at receive after its lease ran out says so.
func TestNackReasonToDLQ(t *testing.T) {
	e := newEnv(t)
	e.topic("why", 1)
	e.group("why-g", groupCfg("why", map[string]any{"maxReconsumeTimes": 1}))
	a := e.publish(e.lb.URL, "why", map[string]any{"body": "a"})
	got := e.receive(e.lb.URL, "why-g", 1, 5, 30)
	if len(got) != 1 || got[0].MessageID != a {
		t.Fatalf("receive: %+v", got)
	}
	e.settle(e.gws[0].URL(), "why-g", "nack", []string{got[0].ReceiptHandle},
		map[string]any{"delayLevel": -1, "reason": "payment service answered 503"})
	var dl deadLetters
	mustDo(t, "GET", e.lb.URL+"/v1/groups/why-g/dlq?limit=10", nil, &dl, 200)
	if len(dl.Messages) != 1 || dl.Messages[0].LastReason != "payment service answered 503" {
		t.Fatalf("DLQ = %+v, want lastReason from the nack", dl.Messages)
	}

	// A retry with a reason, then a failure without one: no reason.
	b := e.publish(e.lb.URL, "why", map[string]any{"body": "b"})
	got = e.receive(e.lb.URL, "why-g", 1, 5, 30)
	e.settle(e.lb.URL, "why-g", "nack", []string{got[0].ReceiptHandle}, map[string]any{"delayLevel": 5, "reason": "first try"})
	deadline := time.Now().Add(10 * time.Second)
	for got = nil; len(got) == 0 && time.Now().Before(deadline); {
		got = e.receive(e.gws[len(got)%2].URL(), "why-g", 1, 1, 30)
	}
	if len(got) != 1 || got[0].MessageID != b || got[0].ReconsumeTimes != 1 {
		t.Fatalf("retry: %+v", got)
	}
	e.settle(e.lb.URL, "why-g", "nack", []string{got[0].ReceiptHandle}, nil)
	mustDo(t, "GET", e.lb.URL+"/v1/groups/why-g/dlq?limit=10", nil, &dl, 200)
	if len(dl.Messages) != 2 || dl.Messages[1].MessageID != b || dl.Messages[1].LastReason != "" {
		t.Fatalf("DLQ = %+v, want %s without a reason", dl.Messages, b)
	}

	// An over-long reason is refused.
	c := e.publish(e.lb.URL, "why", map[string]any{"body": "c"})
	got = e.receive(e.lb.URL, "why-g", 1, 5, 30)
	if len(got) != 1 || got[0].MessageID != c {
		t.Fatalf("receive c: %+v", got)
	}
	body := map[string]any{"receiptHandles": []string{got[0].ReceiptHandle}, "reason": strings.Repeat("x", 257)}
	if st := do(t, "POST", e.lb.URL+"/v1/groups/why-g/nack", body, nil); st != 400 {
		t.Fatalf("257-character reason: %d, want 400", st)
	}

	// maxReconsumeTimes 0 and a lease that runs out: dead-lettered at
	// the next receive, with the lease's reason.
	e.group("why-x", groupCfg("why", map[string]any{"maxReconsumeTimes": 0}))
	// Each of the topic's 3 messages is leased once; a receive may return
	// fewer than it asked (a fetch answers with what is ready), so this
	// takes receives until all 3 were delivered, each exactly once.
	leased := map[string]bool{}
	deadline = time.Now().Add(15 * time.Second)
	for len(leased) < 3 {
		for _, m := range e.receive(e.lb.URL, "why-x", 32, 1, 1) {
			if leased[m.MessageID] || m.ReconsumeTimes != 0 {
				t.Fatalf("delivered after its one lease ran out: %+v", m)
			}
			leased[m.MessageID] = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("why-x leased %d of 3 messages", len(leased))
		}
	}
	deadline = time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		for _, m := range e.receive(e.gws[i%2].URL(), "why-x", 32, 1, 30) {
			t.Fatalf("delivered after its one lease ran out: %+v", m)
		}
		mustDo(t, "GET", e.lb.URL+"/v1/groups/why-x/dlq?limit=10", nil, &dl, 200)
		if len(dl.Messages) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing dead-lettered after the lease ran out")
		}
	}
	for _, m := range dl.Messages {
		if !strings.Contains(m.LastReason, "lease expired") {
			t.Fatalf("DLQ = %+v, want lastReason lease expired", dl.Messages)
		}
	}
}
