package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Consumption end to end (issue 4). These tests skip while the binary is
// built without a gateway (the consumption routes answer 503).

type recvMsg struct {
	MessageID      string `json:"messageId"`
	Topic          string `json:"topic"`
	Body           string `json:"body"`
	ReceiptHandle  string `json:"receiptHandle"`
	InvisibleUntil string `json:"invisibleUntil"`
}

type handleResults struct {
	Results []struct {
		ReceiptHandle string `json:"receiptHandle"`
		Status        string `json:"status"`
	} `json:"results"`
}

func consumeSetup(t *testing.T, s *server, group string, body map[string]any) {
	t.Helper()
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 4}), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/"+group, body)
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired (consumption answers 503)")
	}
	want(t, r, http.StatusCreated)
}

func receive(t *testing.T, s *server, group string, req map[string]any) []recvMsg {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/receive", req)
	want(t, r, http.StatusOK)
	var out struct {
		Messages []recvMsg `json:"messages"`
	}
	r.JSON(t, &out)
	return out.Messages
}

// tryReceive is receive for pollers on their own goroutines: it reports
// instead of failing the test. A status other than 200 is an error.
func tryReceive(s *server, group string, req map[string]any) ([]recvMsg, error) {
	r, err := s.try("POST", "/v1/groups/"+group+"/receive", req)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, fmt.Errorf("receive: status %d: %s", r.Status, r.Body)
	}
	var out struct {
		Messages []recvMsg `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return nil, err
	}
	return out.Messages, nil
}

func ack(t *testing.T, s *server, group string, handles ...string) handleResults {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/ack", map[string]any{"receiptHandles": handles})
	want(t, r, http.StatusOK)
	var out handleResults
	r.JSON(t, &out)
	return out
}

func TestConsumeRoundTrip(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "billing", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "hello"}), http.StatusCreated)
	got := receive(t, s, "billing", map[string]any{"maxMessages": 10, "waitSeconds": 5})
	if len(got) != 1 || got[0].Body != "hello" || got[0].Topic != "orders" || got[0].ReceiptHandle == "" {
		t.Fatalf("received %+v", got)
	}
	for range 2 {
		if res := ack(t, s, "billing", got[0].ReceiptHandle); res.Results[0].Status != "ok" {
			t.Fatalf("ack: %+v", res)
		}
	}
	h := got[0].ReceiptHandle
	forged := h[:len(h)-1] + map[bool]string{true: "B", false: "A"}[h[len(h)-1] == 'A']
	if res := ack(t, s, "billing", forged); res.Results[0].Status != "invalid" {
		t.Fatalf("forged handle: %+v", res)
	}
	wantProblem(t, s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{"maxMessages": 33}), http.StatusBadRequest, "maxMessages")
	wantProblem(t, s.do(t, "POST", "/v1/groups/nope/receive", map[string]any{}), http.StatusNotFound)
}

func TestConsumeLongPollTiming(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})
	start := time.Now()
	if got := receive(t, s, "g", map[string]any{"waitSeconds": 1}); len(got) != 0 {
		t.Fatalf("empty group gave %d", len(got))
	}
	if el := time.Since(start); el < time.Second || el > 2*time.Second {
		t.Fatalf("empty long poll took %v", el)
	}
	done := make(chan time.Time, 1)
	go func() {
		r, err := s.try("POST", "/v1/groups/g/receive", map[string]any{"waitSeconds": 20})
		if err == nil && r.Status == http.StatusOK {
			done <- time.Now()
		}
		close(done)
	}()
	checkFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		var g struct {
			Status struct {
				Waiting int `json:"waiting"`
			} `json:"status"`
		}
		s.do(t, "GET", "/v1/groups/g", nil).JSON(t, &g)
		if g.Status.Waiting != 1 {
			return fmt.Errorf("%d waiting", g.Status.Waiting)
		}
		return nil
	})
	sent := time.Now()
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "x"}), http.StatusCreated)
	at, ok := <-done
	if !ok {
		t.Fatal("long poll failed")
	}
	if lat := at.Sub(sent); lat > 100*time.Millisecond {
		t.Fatalf("long poll answered %v after the publish", lat)
	}
}

func TestConsumeLeaseExpiryAndKill9(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	consumeSetup(t, s, "g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	for i := range 3 {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint(i)}), http.StatusCreated)
	}
	// A receive answers as soon as one message is buffered: the three
	// queues' pulls may land in more than one receive.
	var first []recvMsg
	checkFor(t, 10*time.Second, 0, func() error {
		first = append(first, receive(t, s, "g", map[string]any{"maxMessages": 3 - len(first), "waitSeconds": 5, "invisibleSeconds": 1})...)
		if len(first) < 3 {
			return fmt.Errorf("got %d of 3", len(first))
		}
		return nil
	})
	if len(first) != 3 {
		t.Fatalf("got %d", len(first))
	}
	ack(t, s, "g", first[0].ReceiptHandle)
	// The two unacked leases expire and come back (after the retry delay).
	again := map[string]bool{}
	checkFor(t, 40*time.Second, 0, func() error {
		for _, m := range receive(t, s, "g", map[string]any{"maxMessages": 3, "waitSeconds": 2, "invisibleSeconds": 60}) {
			again[m.MessageID] = true
		}
		if !again[first[1].MessageID] || !again[first[2].MessageID] {
			return fmt.Errorf("redelivered %v", again)
		}
		return nil
	})
	if res := ack(t, s, "g", first[1].ReceiptHandle); res.Results[0].Status != "expired" {
		t.Fatalf("stale handle: %+v", res)
	}
	// kill -9 with messages in flight: after restart they come back.
	s.kill()
	s = startServer(t, dir)
	back := map[string]bool{}
	checkFor(t, 40*time.Second, 0, func() error {
		for _, m := range receive(t, s, "g", map[string]any{"maxMessages": 3, "waitSeconds": 2}) {
			back[m.MessageID] = true
		}
		if !back[first[1].MessageID] || !back[first[2].MessageID] {
			return fmt.Errorf("after restart: %v", back)
		}
		return nil
	})
}
