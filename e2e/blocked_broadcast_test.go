package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// receiveAs receives one message of a BROADCASTING group as consumer id,
// waiting until one comes.
func receiveAs(t *testing.T, s *server, group, id string) orderlyMsg {
	t.Helper()
	var got orderlyMsg
	checkFor(t, 10*time.Second, time.Millisecond, func() error {
		r := s.do(t, "POST", "/v1/groups/"+group+"/receive", map[string]any{"consumerId": id, "waitSeconds": 1, "invisibleSeconds": 30})
		want(t, r, http.StatusOK)
		var out struct {
			Messages []orderlyMsg `json:"messages"`
		}
		r.JSON(t, &out)
		if len(out.Messages) == 0 {
			return fmt.Errorf("%s: nothing yet", id)
		}
		got = out.Messages[0]
		return nil
	})
	return got
}

func blockedOf(t *testing.T, s *server, group, consumerID string) []blockedEntry {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group+"/blocked?consumerId="+consumerID, nil)
	want(t, r, http.StatusOK)
	var out struct {
		Blocked []blockedEntry `json:"blocked"`
	}
	r.JSON(t, &out)
	return out.Blocked
}

// TestBlockedKeysBroadcasting: in a BROADCASTING ORDERLY group each
// consumerId has its own queues, so its own blocked heads. A head that
// failed for c1 is listed for c1 only; skip drops it for c1 (a broadcast
// failure has no retry or DLQ copy) and c1's queue continues, while c2
// still gets it in order. Park and resume answer 409; without consumerId
// the list and the actions answer 400.
func TestBlockedKeysBroadcasting(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "ord", 1)
	r := s.do(t, "PUT", "/v1/groups/bo", map[string]any{
		"subscriptions": []map[string]any{{"topic": "ord"}}, "messageModel": "BROADCASTING", "consumeMode": "ORDERLY",
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	for _, b := range []struct{ body, key string }{{"a1", "ka"}, {"b1", "kb"}, {"a2", "ka"}} {
		want(t, s.do(t, "POST", "/v1/topics/ord/messages", map[string]any{"body": b.body, "shardingKey": b.key}), http.StatusCreated)
	}

	// c1 fails a1 with a reason: c1's queue is blocked on ka, c2's is not.
	m := receiveAs(t, s, "bo", "c1")
	if m.Body != "a1" {
		t.Fatalf("c1 got %q first, want a1", m.Body)
	}
	want(t, s.do(t, "POST", "/v1/groups/bo/nack", map[string]any{"receiptHandles": []string{m.ReceiptHandle}, "reason": "bad account"}), http.StatusOK)
	var head blockedEntry
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		bl := blockedOf(t, s, "bo", "c1")
		if len(bl) != 1 || bl[0].State != "BLOCKED" || bl[0].ShardingKey != "ka" {
			return fmt.Errorf("c1 blocked %+v", bl)
		}
		head = bl[0]
		return nil
	})
	if head.MessageID != m.MessageID || head.Attempts < 1 || head.LastReason != "bad account" {
		t.Errorf("c1's entry %+v, want head %s with attempts >= 1 and the nack reason", head, m.MessageID)
	}
	if bl := blockedOf(t, s, "bo", "c2"); len(bl) != 0 {
		t.Fatalf("c2 has blocked keys before receiving anything: %+v", bl)
	}

	// Park and resume do not apply; a missing consumerId is a 400.
	key := map[string]any{"topic": "ord", "queueId": 0, "shardingKey": "ka", "consumerId": "c1"}
	wantProblem(t, s.do(t, "POST", "/v1/groups/bo/blocked/park", key), http.StatusConflict)
	wantProblem(t, s.do(t, "POST", "/v1/groups/bo/blocked/resume", key), http.StatusConflict)
	wantProblem(t, s.do(t, "GET", "/v1/groups/bo/blocked", nil), http.StatusBadRequest, "consumerId")
	wantProblem(t, s.do(t, "POST", "/v1/groups/bo/blocked/skip", map[string]any{"topic": "ord", "queueId": 0, "shardingKey": "ka"}),
		http.StatusBadRequest, "consumerId")
	wantProblem(t, s.do(t, "POST", "/v1/groups/bo/blocked/skip", map[string]any{"topic": "ord", "queueId": 0, "shardingKey": "ka", "consumerId": "c2"}),
		http.StatusNotFound)

	// Skip for c1: a1 is dropped for c1, whose queue goes on with b1, a2.
	r = s.do(t, "POST", "/v1/groups/bo/blocked/skip", key)
	want(t, r, http.StatusOK)
	var e blockedEntry
	r.JSON(t, &e)
	if e.State != "SKIPPED" || e.MessageID != m.MessageID {
		t.Fatalf("skip answered %+v", e)
	}
	for _, body := range []string{"b1", "a2"} {
		got := receiveAs(t, s, "bo", "c1")
		if got.Body != body {
			t.Fatalf("c1 after the skip got %q (reconsumeTimes %d), want %s", got.Body, got.ReconsumeTimes, body)
		}
		settle(t, s, "bo", "ack", got)
	}
	if bl := blockedOf(t, s, "bo", "c1"); len(bl) != 0 {
		t.Fatalf("c1 still blocked after the skip: %+v", bl)
	}
	// c2 is untouched: it gets all three, in order, a1 first.
	for _, body := range []string{"a1", "b1", "a2"} {
		got := receiveAs(t, s, "bo", "c2")
		if got.Body != body || got.ReconsumeTimes != 0 {
			t.Fatalf("c2 got %q (reconsumeTimes %d), want %s", got.Body, got.ReconsumeTimes, body)
		}
		settle(t, s, "bo", "ack", got)
	}
	// The timeline shows the skip.
	if evs := eventTypes(timeline(t, s, "bo", m.MessageID)); !slices.Contains(evs, "SKIPPED") {
		t.Errorf("a1's timeline %v has no SKIPPED", evs)
	}
}
