package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestDLQOrderlyMovesOn: an ORDERLY group (maxReconsumeTimes 2) fails the
// head of its only queue three times (reconsumeTimes 0, 1, 2; each retry
// after the 1 s suspend, with nothing later of the queue handed out
// meanwhile); the head then goes to the DLQ with reconsumeTimes 2 and the
// queue continues with the next message, in order. A nack with delayLevel
// -1 dead-letters at once and the queue moves on as well.
func TestDLQOrderlyMovesOn(t *testing.T) {
	s := startDelayServer(t, t.TempDir(), shortLevels)
	createTopic(t, s, "seq", 1)
	want(t, s.do(t, "PUT", "/v1/groups/ordered", map[string]any{
		"subscriptions":     []map[string]any{{"topic": "seq"}},
		"consumeMode":       "ORDERLY",
		"consumeFrom":       map[string]any{"position": "FIRST_OFFSET"},
		"maxReconsumeTimes": 2,
	}), http.StatusCreated)
	var msgs []map[string]any
	for i := range 7 {
		msgs = append(msgs, map[string]any{"body": fmt.Sprintf("m%d", i), "shardingKey": "k"})
	}
	r := s.do(t, "POST", "/v1/topics/seq/messages/batch", map[string]any{"messages": msgs})
	want(t, r, http.StatusCreated)
	var pub struct {
		Results []publishResult `json:"results"`
	}
	r.JSON(t, &pub)

	next := func(wantBody string, wantTimes int) delivered {
		t.Helper()
		got := receiveN(t, s, "ordered", 1, 10*time.Second)[0]
		if got.Body == nil || *got.Body != wantBody || got.ReconsumeTimes != wantTimes {
			t.Fatalf("received %q with reconsumeTimes %d, want %q with %d", deref(got.Body), got.ReconsumeTimes, wantBody, wantTimes)
		}
		return got
	}
	nack := func(d delivered, level int) {
		t.Helper()
		if st, err := answer(s, "ordered", "nack", map[string]any{"receiptHandles": []string{d.ReceiptHandle}, "delayLevel": level}); err != nil || st[0] != "ok" {
			t.Fatalf("nack: %v %v", st, err)
		}
	}
	for times := range 3 {
		nack(next("m0", times), 0)
	}
	for i := 1; i <= 4; i++ {
		ack(t, s, "ordered", next(fmt.Sprintf("m%d", i), 0).ReceiptHandle)
	}
	nack(next("m5", 0), -1)
	ack(t, s, "ordered", next("m6", 0).ReceiptHandle)
	wantNothing(t, s, "ordered", 1)

	page := listDLQ(t, s, "ordered", "")
	if len(page.Messages) != 2 {
		t.Fatalf("DLQ %+v: want m0 and m5", page)
	}
	for i, w := range []struct {
		id, body string
		times    int
	}{{pub.Results[0].MessageID, "m0", 2}, {pub.Results[5].MessageID, "m5", 0}} {
		got := page.Messages[i]
		if got.MessageID != w.id || got.Topic != "seq" || deref(got.Body) != w.body || got.ReconsumeTimes != w.times {
			t.Fatalf("dead letter %d: %+v; want %s (%s) with reconsumeTimes %d", i, got, w.body, w.id, w.times)
		}
	}
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		offs, err := drained(t, s, "ordered", "")
		if err != nil {
			return err
		}
		for _, o := range offs {
			if o.Topic == "seq" && o.CommittedOffset != 7 {
				return fmt.Errorf("seq committed at %d, want 7", o.CommittedOffset)
			}
		}
		return nil
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
