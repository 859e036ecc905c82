package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

type blockedEntry struct {
	Topic       string `json:"topic"`
	QueueID     int    `json:"queueId"`
	ShardingKey string `json:"shardingKey"`
	MessageID   string `json:"messageId"`
	Since       string `json:"since"`
	Attempts    int    `json:"attempts"`
	LastReason  string `json:"lastReason"`
	State       string `json:"state"`
}

func blockedList(t *testing.T, s *server, group string) []blockedEntry {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group+"/blocked", nil)
	want(t, r, http.StatusOK)
	var out struct {
		Blocked []blockedEntry `json:"blocked"`
	}
	r.JSON(t, &out)
	return out.Blocked
}

func blockedAction(t *testing.T, s *server, group, action, key string) blockedEntry {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/blocked/"+action, map[string]any{"topic": "ord", "queueId": 0, "shardingKey": key})
	want(t, r, http.StatusOK)
	var e blockedEntry
	r.JSON(t, &e)
	return e
}

func settle(t *testing.T, s *server, group, verb string, m orderlyMsg) {
	t.Helper()
	var res handleResults
	r := s.do(t, "POST", "/v1/groups/"+group+"/"+verb, map[string]any{"receiptHandles": []string{m.ReceiptHandle}})
	want(t, r, http.StatusOK)
	r.JSON(t, &res)
	if res.Results[0].Status != "ok" {
		t.Fatalf("%s %s: %s", verb, m.Body, res.Results[0].Status)
	}
}

// receiveAck receives the next message, checks its body and acks it.
func receiveAck(t *testing.T, s *server, group, body string) orderlyMsg {
	t.Helper()
	m := receiveWait(t, s, group)
	if m.Body != body {
		t.Fatalf("got %q (key %s, reconsumeTimes %d), want %q", m.Body, m.ShardingKey, m.ReconsumeTimes, body)
	}
	settle(t, s, group, "ack", m)
	return m
}

func dlqBodies(t *testing.T, s *server, group string) []string {
	t.Helper()
	var page struct {
		Messages []struct {
			Body string `json:"body"`
		} `json:"messages"`
	}
	s.do(t, "GET", "/v1/groups/"+group+"/dlq", nil).JSON(t, &page)
	var out []string
	for _, m := range page.Messages {
		out = append(out, m.Body)
	}
	return out
}

// TestBlockedKeys: a poison message of an ORDERLY group shows as blocked
// with its attempts; skip dead-letters it and the queue continues; park
// sets a key aside while the others continue in order, across a restart;
// resume releases the parked messages in order.
func TestBlockedKeys(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	want(t, s.do(t, "PUT", "/v1/topics/ord", map[string]any{"queues": 1}), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/bk", map[string]any{
		"subscriptions": []map[string]any{{"topic": "ord"}}, "consumeMode": "ORDERLY",
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	pub := func(body, key string) string {
		var res struct {
			MessageID string `json:"messageId"`
		}
		r := s.do(t, "POST", "/v1/topics/ord/messages", map[string]any{"body": body, "shardingKey": key})
		want(t, r, http.StatusCreated)
		r.JSON(t, &res)
		return res.MessageID
	}
	p1 := pub("p1", "P")
	pub("a1", "A")
	pub("p2", "P")
	pub("a2", "A")

	if got := blockedList(t, s, "bk"); len(got) != 0 {
		t.Fatalf("blocked before any failure: %+v", got)
	}
	// p1 fails twice: blocked, attempts counting.
	for attempt := 1; attempt <= 2; attempt++ {
		m := receiveWait(t, s, "bk")
		if m.Body != "p1" || m.ReconsumeTimes != attempt-1 {
			t.Fatalf("attempt %d: got %q reconsumeTimes %d", attempt, m.Body, m.ReconsumeTimes)
		}
		reason := fmt.Sprintf("card declined (%d)", attempt)
		r := s.do(t, "POST", "/v1/groups/bk/nack", map[string]any{"receiptHandles": []string{m.ReceiptHandle}, "reason": reason})
		want(t, r, http.StatusOK)
		checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			got := blockedList(t, s, "bk")
			if len(got) != 1 || got[0].State != "BLOCKED" || got[0].ShardingKey != "P" || got[0].MessageID != p1 ||
				got[0].Attempts != attempt || got[0].Topic != "ord" || got[0].QueueID != 0 || got[0].Since == "" ||
				got[0].LastReason != reason {
				return fmt.Errorf("blocked = %+v, want p1 BLOCKED after %d attempts", got, attempt)
			}
			return nil
		})
	}
	// The receive says so too.
	e := wantReason(t, s, "bk", "KEYS_BLOCKED")
	if len(e.BlockedKeys) != 1 || e.BlockedKeys[0] != "P" {
		t.Errorf("blockedKeys %v, want [P]", e.BlockedKeys)
	}

	// skip: p1 goes to the DLQ, the queue continues with a1. The dead
	// letter keeps the head's last nack reason and says who skipped it.
	if got := blockedAction(t, s, "bk", "skip", "P"); got.State != "SKIPPED" || got.MessageID != p1 || got.LastReason != "card declined (2)" {
		t.Fatalf("skip answered %+v", got)
	}
	receiveAck(t, s, "bk", "a1")
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := dlqBodies(t, s, "bk"); len(got) != 1 || got[0] != "p1" {
			return fmt.Errorf("dlq %v, want [p1]", got)
		}
		return nil
	})
	var dlq struct {
		Messages []struct {
			LastReason string `json:"lastReason"`
		} `json:"messages"`
	}
	s.do(t, "GET", "/v1/groups/bk/dlq", nil).JSON(t, &dlq)
	if got, wantR := dlq.Messages[0].LastReason, "skipped by operator; last: card declined (2)"; got != wantR {
		t.Fatalf("skipped dead letter's lastReason %q, want %q", got, wantR)
	}
	if got := blockedList(t, s, "bk"); len(got) != 0 {
		t.Fatalf("blocked after skip: %+v", got)
	}
	// skip of a queue that is not blocked: 404.
	want(t, s.do(t, "POST", "/v1/groups/bk/blocked/skip", map[string]any{"topic": "ord", "queueId": 0, "shardingKey": "A"}), http.StatusNotFound)

	// park P: p2 is set aside, A continues in order.
	if got := blockedAction(t, s, "bk", "park", "P"); got.State != "PARKED" {
		t.Fatalf("park answered %+v", got)
	}
	receiveAck(t, s, "bk", "a2")
	pub("p3", "P")
	pub("a3", "A")
	receiveAck(t, s, "bk", "a3")
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		got := blockedList(t, s, "bk")
		if len(got) != 1 || got[0].State != "PARKED" || got[0].ShardingKey != "P" || got[0].Attempts != 2 {
			return fmt.Errorf("blocked = %+v, want P PARKED with 2 messages", got)
		}
		return nil
	})

	// A park survives a restart.
	s.stop(t)
	s = startServer(t, dir)
	pub("p4", "P")
	pub("a4", "A")
	receiveAck(t, s, "bk", "a4")
	if got := blockedList(t, s, "bk"); len(got) != 1 || got[0].State != "PARKED" || got[0].Attempts != 3 {
		t.Fatalf("after the restart blocked = %+v, want P PARKED with 3 messages", got)
	}

	// resume: p2, p3, p4 come back in order; nothing else is pending.
	if got := blockedAction(t, s, "bk", "resume", "P"); got.State != "RESUMED" {
		t.Fatalf("resume answered %+v", got)
	}
	for _, b := range []string{"p2", "p3", "p4"} {
		receiveAck(t, s, "bk", b)
	}
	if got := blockedList(t, s, "bk"); len(got) != 0 {
		t.Fatalf("blocked after resume: %+v", got)
	}
	if got := dlqBodies(t, s, "bk"); len(got) != 1 || got[0] != "p1" {
		t.Fatalf("dlq after resume %v, want [p1]", got)
	}
	wantReason(t, s, "bk", "NO_MESSAGES")
	want(t, s.do(t, "POST", "/v1/groups/bk/blocked/resume", map[string]any{"topic": "ord", "queueId": 0, "shardingKey": "P"}), http.StatusNotFound)
}
