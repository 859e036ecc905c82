package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestConsumeHandlesAcrossRestart: leases live in memory, the signing key
// in the data dir. After a clean restart a handle from before still
// verifies but answers expired (ack, nack and extend alike), a forged one
// is still invalid, and the un-acked message is delivered again under a
// new handle that acks ok.
func TestConsumeHandlesAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	consumeSetup(t, s, "g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "acked"}), http.StatusCreated)
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "pending"}), http.StatusCreated)
	var before []recvMsg
	checkFor(t, 10*time.Second, 0, func() error {
		before = append(before, receive(t, s, "g", map[string]any{"maxMessages": 2, "waitSeconds": 1, "invisibleSeconds": 3600})...)
		if len(before) < 2 {
			return fmt.Errorf("received %d of 2", len(before))
		}
		return nil
	})
	var pending recvMsg
	for _, m := range before {
		if m.Body == "acked" {
			if res := ack(t, s, "g", m.ReceiptHandle); res.Results[0].Status != "ok" {
				t.Fatalf("ack before restart: %+v", res)
			}
		} else {
			pending = m
		}
	}

	s.stop(t)
	s = startServer(t, dir)

	h := pending.ReceiptHandle
	forged := h[:len(h)-2] + "zz"
	if forged == h {
		forged = h[:len(h)-2] + "yy"
	}
	for path, body := range map[string]map[string]any{
		"ack": {}, "nack": {"delayLevel": 1}, "extend": {"invisibleSeconds": 60},
	} {
		body["receiptHandles"] = []string{h, forged}
		var res handleResults
		r := s.do(t, "POST", "/v1/groups/g/"+path, body)
		want(t, r, http.StatusOK)
		r.JSON(t, &res)
		if res.Results[0].Status != "expired" || res.Results[1].Status != "invalid" {
			t.Fatalf("%s after restart: %s (want expired, invalid)", path, r.Body)
		}
	}
	var again []recvMsg
	checkFor(t, 10*time.Second, 0, func() error {
		again = append(again, receive(t, s, "g", map[string]any{"maxMessages": 32, "waitSeconds": 1})...)
		if len(again) == 0 {
			return fmt.Errorf("the un-acked message has not come back")
		}
		return nil
	})
	if len(again) != 1 || again[0].Body != "pending" || again[0].MessageID != pending.MessageID || again[0].ReceiptHandle == h {
		t.Fatalf("after restart received %+v, want only %q again under a new handle", again, "pending")
	}
	if res := ack(t, s, "g", again[0].ReceiptHandle); res.Results[0].Status != "ok" {
		t.Fatalf("ack of the redelivery: %+v", res)
	}
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		_, err := drained(t, s, "g", "")
		return err
	})
}
