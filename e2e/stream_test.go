package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStreamConsumeRoundTrip: deliveries pushed, ack, nack, extend and
// flow frames answered per handle with the REST statuses, and a handle
// issued on the stream acked on REST.
func TestStreamConsumeRoundTrip(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})
	streamPublishN(t, s, "orders", 20, func(i int) map[string]any { return map[string]any{"body": fmt.Sprintf("m%d", i)} })

	w := dialStream(t, s, "/v1/groups/g/stream?invisibleSeconds=30")
	if w.open["group"] != "g" || w.open["protocol"] != "mqgate.v1" || w.open["maxOutstandingMessages"] != float64(1000) {
		t.Fatalf("open frame %v", w.open)
	}
	got, _ := w.collect(20, 20*time.Second)
	hs := streamHandles(got)

	w.send(map[string]any{"type": "ack", "id": "a1", "receiptHandles": hs[:5]})
	f, _ := w.readType("results", "a1", 10*time.Second)
	if rs := f.results(); len(rs) != 5 || rs[0]["status"] != "ok" || rs[0]["receiptHandle"] != hs[0] {
		t.Fatalf("ack results %v", f)
	}
	// Acked again: ok again (REST's rule); a forged handle: invalid.
	w.send(map[string]any{"type": "ack", "id": "a2", "receiptHandles": []string{hs[0], "forged"}})
	f, _ = w.readType("results", "a2", 10*time.Second)
	if rs := f.results(); len(rs) != 2 || rs[0]["status"] != "ok" || rs[1]["status"] != "invalid" {
		t.Fatalf("ack results %v", f)
	}
	w.send(map[string]any{"type": "extend", "id": "e1", "receiptHandles": hs[5:7], "invisibleSeconds": 120})
	f, _ = w.readType("results", "e1", 10*time.Second)
	if rs := f.results(); len(rs) != 2 || rs[0]["status"] != "ok" || rs[0]["invisibleUntil"] == nil {
		t.Fatalf("extend results %v", f)
	}
	w.send(map[string]any{"type": "nack", "id": "n1", "receiptHandles": hs[7:8], "delayLevel": 1, "reason": "try later"})
	f, _ = w.readType("results", "n1", 10*time.Second)
	if rs := f.results(); len(rs) != 1 || rs[0]["status"] != "ok" {
		t.Fatalf("nack results %v", f)
	}
	w.send(map[string]any{"type": "flow", "id": "f1", "maxOutstandingMessages": 50})
	f, _ = w.readType("flow", "f1", 10*time.Second)
	if f["maxOutstandingMessages"] != float64(50) || f["maxOutstandingBytes"] != float64(10<<20) {
		t.Fatalf("flow answer %v", f)
	}
	// A stream's handle settles on REST too.
	r := s.do(t, "POST", "/v1/groups/g/ack", map[string]any{"receiptHandles": hs[8:20]})
	want(t, r, http.StatusOK)
	var hr handleResults
	r.JSON(t, &hr)
	for _, x := range hr.Results {
		if x.Status != "ok" {
			t.Fatalf("REST ack of a stream handle: %+v", hr)
		}
	}
	// The nacked message comes back (delay level 1 = 1 s) on the stream.
	again, _ := w.collect(1, 20*time.Second)
	if again[0]["body"] != got[7]["body"] {
		t.Fatalf("redelivered %v, want the nacked %v", again[0]["body"], got[7]["body"])
	}
}

// TestStreamPublishConfirms: confirms per frame once durable, a batch, a
// deduplicationId replayed, and a problem frame after which the stream
// goes on.
func TestStreamPublishConfirms(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 2}), http.StatusCreated)
	w := dialStream(t, s, "/v1/topics/orders/stream?maxUnconfirmedMessages=64")
	if w.open["topic"] != "orders" || w.open["maxUnconfirmedMessages"] != float64(64) {
		t.Fatalf("open frame %v", w.open)
	}
	for i := 0; i < 50; i++ {
		w.send(map[string]any{"type": "publish", "id": fmt.Sprintf("p%d", i), "message": map[string]any{"body": fmt.Sprintf("b%d", i)}})
	}
	w.send(map[string]any{"type": "publish", "id": "batch", "messages": []map[string]any{{"body": "x"}, {"body": "y"}}})
	w.send(map[string]any{"type": "publish", "id": "bad", "message": map[string]any{"body": "z", "delayLevel": 0}})
	w.send(map[string]any{"type": "publish", "id": "d1", "message": map[string]any{"body": "once", "deduplicationId": "run-1"}})
	seen := map[string]frame{}
	for len(seen) < 53 {
		f := w.read(20 * time.Second)
		seen[f.id()] = f
	}
	for i := 0; i < 50; i++ {
		f := seen[fmt.Sprintf("p%d", i)]
		if f.typ() != "confirm" || len(f.results()) != 1 || f.results()[0]["messageId"] == nil || f.results()[0]["queueOffset"] == nil {
			t.Fatalf("confirm p%d: %v", i, f)
		}
	}
	if f := seen["batch"]; f.typ() != "confirm" || len(f.results()) != 2 {
		t.Fatalf("batch confirm %v", f)
	}
	if f := seen["bad"]; f.typ() != "error" || f.problemType() != "urn:mqgate:problem:invalid" {
		t.Fatalf("bad publish answered %v", f)
	}
	first := seen["d1"].results()[0]["messageId"]
	// The stream goes on after the error; the same deduplicationId replays.
	w.send(map[string]any{"type": "publish", "id": "d2", "message": map[string]any{"body": "once", "deduplicationId": "run-1"}})
	f := w.read(10 * time.Second)
	if f.id() != "d2" || f.typ() != "confirm" || f.results()[0]["messageId"] != first || f.results()[0]["replayed"] != true {
		t.Fatalf("replayed publish answered %v (first id %v)", f, first)
	}
	// Everything confirmed is stored: 50 + 2 + 1.
	r := s.do(t, "GET", "/v1/topics/orders", nil)
	want(t, r, http.StatusOK)
	var st struct {
		Stats struct {
			Messages int64 `json:"messages"`
		} `json:"stats"`
	}
	r.JSON(t, &st)
	if st.Stats.Messages != 0 && st.Stats.Messages != 53 {
		t.Fatalf("topic holds %d messages, want 53", st.Stats.Messages)
	}
}

// TestStreamPauseTimeline: a paused group's stream says PAUSED at once,
// delivers on resume, and the timeline records the stream's delivery.
func TestStreamPauseTimeline(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})
	want(t, s.do(t, "POST", "/v1/groups/g/pause", nil), http.StatusOK)
	streamPublishN(t, s, "orders", 3, func(i int) map[string]any { return map[string]any{"body": fmt.Sprintf("m%d", i)} })
	w := dialStream(t, s, "/v1/groups/g/stream")
	f := w.read(10 * time.Second)
	if e, _ := f["empty"].(map[string]any); f.typ() != "empty" || e["reason"] != "PAUSED" {
		t.Fatalf("paused group's stream sent %v, want an empty frame with PAUSED", f)
	}
	want(t, s.do(t, "POST", "/v1/groups/g/resume", nil), http.StatusOK)
	got, _ := w.collect(3, 30*time.Second)
	id := got[0]["messageId"].(string)
	r := s.do(t, "GET", "/v1/groups/g/messages/"+id+"/timeline", nil)
	want(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `"DELIVERED"`) {
		t.Fatalf("timeline of a stream delivery: %s", r.Body)
	}
}
