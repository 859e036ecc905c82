package e2e

import (
	"net/http"
	"testing"
	"time"
)

// TestDelayPublishFields: publishing delayed messages over HTTP answers
// deliverAt and no queue position, for delayLevel (a level above the last
// configured one means the last), delaySeconds and deliverAt, single and
// batch; the pending message can be read by id (under its real topic,
// without a position) and is consumed after its time. Bad delay fields
// answer 400 naming the field; nack accepts any level ≥ -1 (above the last
// = the last).
func TestDelayPublishFields(t *testing.T) {
	const levels = "100ms 200ms 300ms"
	s := startDelayServer(t, t.TempDir(), levels)
	createTopic(t, s, "later", 2)
	want(t, s.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "later"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), http.StatusCreated)

	publish := func(body map[string]any) publishResult {
		t.Helper()
		r := s.do(t, "POST", "/v1/topics/later/messages", body)
		want(t, r, http.StatusCreated)
		var pr publishResult
		r.JSON(t, &pr)
		if pr.DeliverAt == "" || !rfc3339ms.MatchString(pr.DeliverAt) || pr.QueueID != nil || pr.QueueOffset != nil {
			t.Fatalf("delayed publish %v answered %s: want deliverAt and no queue position", body, r.Body)
		}
		return pr
	}
	// A level above the last (3 here) waits the last level, 300 ms.
	before := time.Now()
	pr := publish(map[string]any{"body": "top", "delayLevel": 99})
	if d := parseAPITime(t, pr.DeliverAt).Sub(before); d < 290*time.Millisecond || d > 5*time.Second {
		t.Fatalf("delayLevel 99 over %q: deliverAt %v after publishing, want about 300ms", levels, d)
	}
	// While pending, the message is readable by id under its real topic.
	r := s.do(t, "GET", "/v1/topics/later/messages/"+pr.MessageID, nil)
	want(t, r, http.StatusOK)
	var m message
	r.JSON(t, &m)
	if m.MessageID != pr.MessageID || m.Topic != "later" || m.QueueID != nil || m.QueueOffset != nil || deref(m.Body) != "top" {
		t.Fatalf("pending message %s read as %s: want topic later, no queue position", pr.MessageID, r.Body)
	}

	at := time.Now().Add(700 * time.Millisecond).UTC().Truncate(time.Millisecond)
	pa := publish(map[string]any{"body": "at", "deliverAt": at.Format(time.RFC3339Nano)})
	if !parseAPITime(t, pa.DeliverAt).Equal(at) {
		t.Fatalf("deliverAt %s answered as %s", at.Format(time.RFC3339Nano), pa.DeliverAt)
	}
	ps := publish(map[string]any{"body": "secs", "delaySeconds": 1})
	// Timer messages (deliverAt, delaySeconds) read the same way while
	// they wait in the timer index.
	for _, p := range []publishResult{pa, ps} {
		r := s.do(t, "GET", "/v1/topics/later/messages/"+p.MessageID, nil)
		want(t, r, http.StatusOK)
		var m message
		r.JSON(t, &m)
		if m.MessageID != p.MessageID || m.Topic != "later" || m.QueueID != nil || m.QueueOffset != nil || deref(m.DeliverAt) != p.DeliverAt {
			t.Fatalf("pending timer message %s read as %s: want topic later, its deliverAt, no queue position", p.MessageID, r.Body)
		}
	}

	r = s.do(t, "POST", "/v1/topics/later/messages/batch", map[string]any{"messages": []map[string]any{
		{"body": "b-level", "delayLevel": 1}, {"body": "b-now"},
	}})
	want(t, r, http.StatusCreated)
	var batch struct {
		Results []publishResult `json:"results"`
	}
	r.JSON(t, &batch)
	if len(batch.Results) != 2 || batch.Results[0].DeliverAt == "" || batch.Results[0].QueueID != nil ||
		batch.Results[1].DeliverAt != "" || batch.Results[1].QueueID == nil || batch.Results[1].QueueOffset == nil {
		t.Fatalf("mixed batch answered %s: want deliverAt only on the delayed one, a position only on the other", r.Body)
	}

	dueOf := map[string]time.Time{
		pr.MessageID: parseAPITime(t, pr.DeliverAt), pa.MessageID: at, ps.MessageID: parseAPITime(t, ps.DeliverAt),
		batch.Results[0].MessageID: parseAPITime(t, batch.Results[0].DeliverAt), batch.Results[1].MessageID: {},
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(dueOf) > 0 && time.Now().Before(deadline) {
		msgs, got, err := receiveOnce(s, "g", 10, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range msgs {
			due, ok := dueOf[d.MessageID]
			if !ok {
				t.Fatalf("unexpected or repeated delivery %+v", d)
			}
			if got.Before(due) {
				t.Fatalf("%s received %v before its deliverAt", deref(d.Body), due.Sub(got))
			}
			delete(dueOf, d.MessageID)
			ack(t, s, "g", d.ReceiptHandle)
		}
	}
	if len(dueOf) > 0 {
		t.Fatalf("%d messages never delivered: %v", len(dueOf), dueOf)
	}

	// Invalid delay fields: nothing is stored.
	wantProblem(t, s.do(t, "POST", "/v1/topics/later/messages", map[string]any{"body": "x", "delayLevel": 1, "delaySeconds": 5}), http.StatusBadRequest, "delayLevel")
	wantProblem(t, s.do(t, "POST", "/v1/topics/later/messages", map[string]any{"body": "x", "delayLevel": -1}), http.StatusBadRequest, "delayLevel")
	wantProblem(t, s.do(t, "POST", "/v1/topics/later/messages", map[string]any{"body": "x", "delaySeconds": -1}), http.StatusBadRequest, "delaySeconds")
	wantProblem(t, s.do(t, "POST", "/v1/topics/later/messages", map[string]any{"body": "x", "deliverAt": time.Now().Add(41 * 24 * time.Hour).Format(time.RFC3339)}), http.StatusBadRequest, "deliverAt")

	// Nack: a level above the last configured one is the last; below -1 is refused.
	want(t, s.do(t, "POST", "/v1/topics/later/messages", map[string]any{"body": "n"}), http.StatusCreated)
	got := receiveN(t, s, "g", 1, 10*time.Second)
	wantProblem(t, s.do(t, "POST", "/v1/groups/g/nack", map[string]any{"receiptHandles": []string{got[0].ReceiptHandle}, "delayLevel": -2}), http.StatusBadRequest, "delayLevel")
	nacked := time.Now() // before the server starts the delay
	st, err := answer(s, "g", "nack", map[string]any{"receiptHandles": []string{got[0].ReceiptHandle}, "delayLevel": 40})
	if err != nil || st[0] != "ok" {
		t.Fatalf("nack with delayLevel 40 over 3 levels: %v %v", st, err)
	}
	again := receiveN(t, s, "g", 1, 10*time.Second)
	if gap := time.Since(nacked); again[0].MessageID != got[0].MessageID || again[0].ReconsumeTimes != 1 || gap < 300*time.Millisecond {
		t.Fatalf("after nack level 40: %+v %v later; want the same message, reconsumeTimes 1, after the last level (300ms)", again[0], gap)
	}
	ack(t, s, "g", again[0].ReceiptHandle)
}
