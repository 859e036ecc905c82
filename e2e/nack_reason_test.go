package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// reasonPage is a DLQ page with lastReason.
type reasonPage struct {
	Messages []struct {
		MessageID  string `json:"messageId"`
		Body       string `json:"body"`
		LastReason string `json:"lastReason"`
	} `json:"messages"`
}

// dlqReasons lists the group's dead letters as body → lastReason.
func dlqReasons(t *testing.T, s *server, group string) map[string]string {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group+"/dlq?limit=1000", nil)
	want(t, r, http.StatusOK)
	var p reasonPage
	r.JSON(t, &p)
	out := map[string]string{}
	for _, m := range p.Messages {
		out[m.Body] = m.LastReason
	}
	return out
}

// TestNackReasonInDLQ: a nack's reason travels with the retry copy and the
// dead letter and shows as lastReason; a later failure without a reason
// clears it; a lease that runs out records itself; a reason over 256
// characters is a 400 that changes nothing.
func TestNackReasonInDLQ(t *testing.T) {
	s := startDelayServer(t, t.TempDir(), shortLevels)
	createTopic(t, s, "orders", 1)
	r := s.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}}, "maxReconsumeTimes": 1,
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	for _, b := range []string{"now", "ladder", "cleared", "lease"} {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": b}), http.StatusCreated)
	}
	got := receiveN(t, s, "g", 4, 10*time.Second)
	h := map[string]string{}
	for _, m := range got {
		h[*m.Body] = m.ReceiptHandle
	}
	wantProblem(t, s.do(t, "POST", "/v1/groups/g/nack", map[string]any{
		"receiptHandles": []string{h["now"]}, "reason": strings.Repeat("x", 257),
	}), http.StatusBadRequest, "reason")
	nack := func(handle string, level int, reason string) {
		t.Helper()
		body := map[string]any{"receiptHandles": []string{handle}, "delayLevel": level}
		if reason != "" {
			body["reason"] = reason
		}
		st, err := answer(s, "g", "nack", body)
		if err != nil || st[0] != "ok" {
			t.Fatalf("nack: %v %v", st, err)
		}
	}
	long := strings.Repeat("é", 256) // 256 characters, 512 bytes: allowed
	nack(h["now"], -1, long)
	nack(h["ladder"], 1, "first failure")
	nack(h["cleared"], 1, "will be cleared")
	// "lease" is left to expire: its retry copy records the timeout.
	r = s.do(t, "POST", "/v1/groups/g/extend", map[string]any{"receiptHandles": []string{h["lease"]}, "invisibleSeconds": 1})
	want(t, r, http.StatusOK)

	// The retries come back (reconsumeTimes 1 = maxReconsumeTimes): the
	// next failure dead-letters them.
	retries := receiveN(t, s, "g", 3, 15*time.Second)
	for _, m := range retries {
		switch *m.Body {
		case "ladder":
			nack(m.ReceiptHandle, 0, "second failure")
		case "cleared":
			nack(m.ReceiptHandle, 0, "")
		case "lease":
			nack(m.ReceiptHandle, 0, "after the lease")
		default:
			t.Fatalf("unexpected retry %q", *m.Body)
		}
	}
	var reasons map[string]string
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		reasons = dlqReasons(t, s, "g")
		if len(reasons) < 4 {
			return fmt.Errorf("DLQ holds %v", reasons)
		}
		return nil
	})
	wantReasons := map[string]string{"now": long, "ladder": "second failure", "cleared": "", "lease": "after the lease"}
	for b, w := range wantReasons {
		if reasons[b] != w {
			t.Errorf("dead letter %q: lastReason %q, want %q", b, reasons[b], w)
		}
	}
}

// TestLeaseExpiryReason: a lease that runs out dead-letters (here
// maxReconsumeTimes 0) with a lastReason saying so.
func TestLeaseExpiryReason(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 1)
	r := s.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}}, "maxReconsumeTimes": 0,
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "slow"}), http.StatusCreated)
	got := receiveN(t, s, "g", 1, 10*time.Second)
	// Shorten the lease to 1 s and answer nothing.
	want(t, s.do(t, "POST", "/v1/groups/g/extend", map[string]any{"receiptHandles": []string{got[0].ReceiptHandle}, "invisibleSeconds": 1}), http.StatusOK)
	checkFor(t, 15*time.Second, 50*time.Millisecond, func() error {
		reasons := dlqReasons(t, s, "g")
		if !strings.HasPrefix(reasons["slow"], "lease expired at ") {
			return fmt.Errorf("DLQ reasons %v", reasons)
		}
		return nil
	})
}
