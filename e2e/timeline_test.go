package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

type timelineEvent struct {
	At         string `json:"at"`
	Type       string `json:"type"`
	ConsumerID string `json:"consumerId"`
	Attempt    int    `json:"attempt"`
	DelayLevel *int   `json:"delayLevel"`
	JobID      string `json:"jobId"`
}

func timeline(t *testing.T, s *server, group, id string) []timelineEvent {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group+"/messages/"+id+"/timeline", nil)
	want(t, r, http.StatusOK)
	var out struct {
		Events []timelineEvent `json:"events"`
	}
	r.JSON(t, &out)
	return out.Events
}

func eventTypes(evs []timelineEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// TestMessageTimeline: a message nacked twice, dead-lettered, redriven and
// acked lists exactly those events, in order; once redriven by message id,
// once by a filter job (its REDRIVEN names the job).
func TestMessageTimeline(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/tl", map[string]any{"queues": 1}), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/tlg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "tl"}}, "maxReconsumeTimes": 1,
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	var pubRes struct {
		MessageID string `json:"messageId"`
	}
	r = s.do(t, "POST", "/v1/topics/tl/messages", map[string]any{"body": "x"})
	want(t, r, http.StatusCreated)
	r.JSON(t, &pubRes)
	id := pubRes.MessageID

	// Unknown message: 404.
	want(t, s.do(t, "GET", "/v1/groups/tlg/messages/nope/timeline", nil), http.StatusNotFound)

	nack := func(m orderlyMsg) {
		want(t, s.do(t, "POST", "/v1/groups/tlg/nack", map[string]any{"receiptHandles": []string{m.ReceiptHandle}, "delayLevel": 1}), http.StatusOK)
	}
	nack(receiveWait(t, s, "tlg")) // retried after level 1 (1 s)
	nack(receiveWait(t, s, "tlg")) // reconsumeTimes 1 = max: dead-lettered
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := eventTypes(timeline(t, s, "tlg", id)); !slices.Contains(got, "DEAD_LETTERED") {
			return fmt.Errorf("timeline %v has no DEAD_LETTERED yet", got)
		}
		return nil
	})
	want(t, s.do(t, "POST", "/v1/groups/tlg/dlq/redrive", map[string]any{"messageIds": []string{id}}), http.StatusOK)
	m := receiveWait(t, s, "tlg")
	settle(t, s, "tlg", "ack", m)

	evs := timeline(t, s, "tlg", id)
	wantTypes := []string{"PUBLISHED", "DELIVERED", "NACKED", "RETRY_SCHEDULED", "DELIVERED", "NACKED", "DEAD_LETTERED", "REDRIVEN", "DELIVERED", "ACKED"}
	if got := eventTypes(evs); !slices.Equal(got, wantTypes) {
		t.Fatalf("timeline %v\nwant     %v", got, wantTypes)
	}
	var prev time.Time
	for i, e := range evs {
		at := parseTime(t, e.At)
		if at.Before(prev) {
			t.Errorf("event %d (%s) at %v before the previous %v", i, e.Type, at, prev)
		}
		prev = at
	}
	for i, attempt := range map[int]int{1: 1, 4: 2, 8: 1} {
		if evs[i].Attempt != attempt || evs[i].ConsumerID == "" {
			t.Errorf("event %d: attempt %d consumerId %q, want attempt %d", i, evs[i].Attempt, evs[i].ConsumerID, attempt)
		}
	}
	for _, i := range []int{2, 3, 5} {
		if evs[i].DelayLevel == nil || *evs[i].DelayLevel != 1 {
			t.Errorf("event %d (%s): delayLevel %v, want 1", i, evs[i].Type, evs[i].DelayLevel)
		}
	}
	if evs[7].JobID != "" {
		t.Errorf("a redrive by id names job %q", evs[7].JobID)
	}

	// The same life, redriven by a filter job this time.
	r = s.do(t, "POST", "/v1/topics/tl/messages", map[string]any{"body": "y", "properties": map[string]string{"via": "job"}})
	want(t, r, http.StatusCreated)
	r.JSON(t, &pubRes)
	id2 := pubRes.MessageID
	nack(receiveWait(t, s, "tlg"))
	nack(receiveWait(t, s, "tlg"))
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := eventTypes(timeline(t, s, "tlg", id2)); !slices.Contains(got, "DEAD_LETTERED") {
			return fmt.Errorf("timeline %v has no DEAD_LETTERED yet", got)
		}
		return nil
	})
	j := startJob(t, s, "/v1/groups/tlg/dlq/redrive", map[string]any{"filter": map[string]any{"sql": "via = 'job'"}})
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if j = getJob(t, s, j.ID); j.State == "RUNNING" {
			return fmt.Errorf("job %+v", j)
		}
		return nil
	})
	if j.State != "DONE" || j.Moved != 1 {
		t.Fatalf("job %+v, want DONE with 1 moved", j)
	}
	m = receiveWait(t, s, "tlg")
	if m.MessageID != id2 {
		t.Fatalf("received %s after the job, want %s", m.MessageID, id2)
	}
	settle(t, s, "tlg", "ack", m)
	evs = timeline(t, s, "tlg", id2)
	if got := eventTypes(evs); !slices.Equal(got, wantTypes) {
		t.Fatalf("job timeline %v\nwant         %v", got, wantTypes)
	}
	if evs[7].JobID != j.ID {
		t.Errorf("REDRIVEN names job %q, want %q", evs[7].JobID, j.ID)
	}
	// The first message's history is untouched by the second's job.
	if got := eventTypes(timeline(t, s, "tlg", id)); !slices.Equal(got, wantTypes) {
		t.Errorf("first message's timeline now %v", got)
	}
}

// TestTimelineRecordsOnlyWhatHappened: a redrive that moved nothing
// ({"redriven": 0}) adds no REDRIVEN, and a group deleted and created
// again starts with an empty history (issue 23 item 5).
func TestTimelineRecordsOnlyWhatHappened(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/tl", map[string]any{"queues": 1}), http.StatusCreated)
	group := map[string]any{
		"subscriptions": []map[string]any{{"topic": "tl"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}
	r := s.do(t, "PUT", "/v1/groups/tlg", group)
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	var pubRes struct {
		MessageID string `json:"messageId"`
	}
	r = s.do(t, "POST", "/v1/topics/tl/messages", map[string]any{"body": "x"})
	want(t, r, http.StatusCreated)
	r.JSON(t, &pubRes)
	id := pubRes.MessageID
	settle(t, s, "tlg", "ack", receiveWait(t, s, "tlg"))

	// Not in the DLQ: by id and "all", nothing moves, nothing is recorded.
	for _, body := range []map[string]any{{"messageIds": []string{id}}, {}} {
		var res struct {
			Redriven int `json:"redriven"`
		}
		r = s.do(t, "POST", "/v1/groups/tlg/dlq/redrive", body)
		want(t, r, http.StatusOK)
		r.JSON(t, &res)
		if res.Redriven != 0 {
			t.Fatalf("redrive %v moved %d", body, res.Redriven)
		}
	}
	if got, wantTypes := eventTypes(timeline(t, s, "tlg", id)), []string{"PUBLISHED", "DELIVERED", "ACKED"}; !slices.Equal(got, wantTypes) {
		t.Fatalf("timeline %v, want %v", got, wantTypes)
	}

	want(t, s.do(t, "DELETE", "/v1/groups/tlg", nil), http.StatusNoContent)
	want(t, s.do(t, "PUT", "/v1/groups/tlg", group), http.StatusCreated)
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := eventTypes(timeline(t, s, "tlg", id)); !slices.Equal(got, []string{"PUBLISHED"}) {
			return fmt.Errorf("the new group's timeline %v, want the old events gone", got)
		}
		return nil
	})
	// The new group records its own life.
	if m := receiveWait(t, s, "tlg"); m.MessageID != id {
		t.Fatalf("received %s, want %s", m.MessageID, id)
	}
	if got := eventTypes(timeline(t, s, "tlg", id)); !slices.Equal(got, []string{"PUBLISHED", "DELIVERED"}) {
		t.Fatalf("the new group's timeline %v", got)
	}
}
