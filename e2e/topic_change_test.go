package e2e

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"testing"
	"time"
)

// Topic changes under running groups (SPEC §8 items 7 and 8): a topic
// created or grown reaches the groups subscribed to it within a second or
// two — not on the 20 s periodic rebalance — and an ORDERLY group keeps a
// sharding key's order when growth moves the key to another queue.

// queueOfKey is the engine's queue selection (FNV-1a of the sharding key
// modulo the queue count, RocketMQ SelectMessageQueueByHash).
func queueOfKey(key string, queues int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(queues))
}

// keyOnQueue finds a sharding key on queue q of n.
func keyOnQueue(t *testing.T, n, q int) string {
	t.Helper()
	for i := range 10000 {
		if k := fmt.Sprint("key", i); queueOfKey(k, n) == q {
			return k
		}
	}
	t.Fatal("no key found")
	return ""
}

func publishKeyed(t *testing.T, s *server, topic, body, key string) {
	t.Helper()
	want(t, s.do(t, "POST", "/v1/topics/"+topic+"/messages", map[string]any{"body": body, "shardingKey": key}), http.StatusCreated)
}

// receiveOrderly is receive that keeps queue ids and sharding keys.
func receiveOrderly(t *testing.T, s *server, group string, req map[string]any) []orderlyMsg {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/receive", req)
	want(t, r, http.StatusOK)
	var out struct {
		Messages []orderlyMsg `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Messages
}

// receiveAll receives and acks until want distinct bodies arrived or
// within passes; it returns them with their queue ids.
func receiveAll(t *testing.T, s *server, group string, n int, within time.Duration) map[string]int {
	t.Helper()
	got := map[string]int{}
	deadline := time.Now().Add(within)
	for len(got) < n {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("received %d of %d within %v: %v", len(got), n, within, got)
		}
		msgs := receiveOrderly(t, s, group, map[string]any{"maxMessages": 32, "waitSeconds": max(1, int(left/time.Second))})
		var handles []string
		for _, m := range msgs {
			got[m.Body] = m.QueueID
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) > 0 {
			ack(t, s, group, handles...)
		}
	}
	return got
}

func TestTopicCreatedAndGrownReachGroupAtOnce(t *testing.T) {
	s := startServer(t, t.TempDir())
	r := s.do(t, "PUT", "/v1/groups/early", map[string]any{
		"subscriptions": []map[string]any{{"topic": "later"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired (consumption answers 503)")
	}
	want(t, r, http.StatusCreated)
	// A receive before the topic exists finds nothing (and starts the
	// group's client).
	if msgs := receiveOrderly(t, s, "early", map[string]any{"maxMessages": 1, "waitSeconds": 0}); len(msgs) != 0 {
		t.Fatalf("received %d before the topic existed", len(msgs))
	}

	want(t, s.do(t, "PUT", "/v1/topics/later", map[string]any{"queues": 2}), http.StatusCreated)
	start := time.Now()
	for q := range 2 {
		publishKeyed(t, s, "later", fmt.Sprint("old", q), keyOnQueue(t, 2, q))
	}
	// Before the topic watch this took up to the 20 s rebalance interval.
	receiveAll(t, s, "early", 2, 5*time.Second)
	t.Logf("created topic consumed after %v", time.Since(start))

	want(t, s.do(t, "PUT", "/v1/topics/later", map[string]any{"queues": 6}), http.StatusOK)
	start = time.Now()
	for q := 2; q < 6; q++ {
		publishKeyed(t, s, "later", fmt.Sprint("new", q), keyOnQueue(t, 6, q))
	}
	got := receiveAll(t, s, "early", 4, 3*time.Second)
	for q := 2; q < 6; q++ {
		if got[fmt.Sprint("new", q)] != q {
			t.Fatalf("new%d came from queue %d", q, got[fmt.Sprint("new", q)])
		}
	}
	t.Logf("grown queues consumed after %v", time.Since(start))
}

// An ORDERLY group holds a moved key's new queue until the old layout is
// consumed: K:3 is not handed out while K:0 is in flight and K:1, K:2 wait
// on the old queue; then K:0 … K:5 arrive in order.
func TestOrderlyKeyOrderSurvivesGrowth(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/moving", map[string]any{"queues": 2}), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/seq", map[string]any{
		"subscriptions": []map[string]any{{"topic": "moving"}},
		"consumeMode":   "ORDERLY",
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired (consumption answers 503)")
	}
	want(t, r, http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/groups/any", map[string]any{
		"subscriptions": []map[string]any{{"topic": "moving"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), http.StatusCreated)

	key := ""
	for i := range 10000 {
		if k := fmt.Sprint("K", i); queueOfKey(k, 8) >= 2 {
			key = k
			break
		}
	}
	for i := range 3 {
		publishKeyed(t, s, "moving", fmt.Sprintf("%s:%d", key, i), key)
	}
	first := receiveOrderly(t, s, "seq", map[string]any{"maxMessages": 1, "waitSeconds": 5})
	if len(first) != 1 || first[0].Body != key+":0" {
		t.Fatalf("first receive %+v", first)
	}
	inFlight := first[0].ReceiptHandle // K:0 stays unacked across the growth

	want(t, s.do(t, "PUT", "/v1/topics/moving", map[string]any{"queues": 8}), http.StatusOK)
	for i := 3; i < 6; i++ {
		publishKeyed(t, s, "moving", fmt.Sprintf("%s:%d", key, i), key)
	}
	// The CONCURRENTLY group is not held back: it gets everything,
	// including the new queue's K:3 … K:5, at once.
	got := receiveAll(t, s, "any", 6, 3*time.Second)
	if q := got[key+":3"]; q != queueOfKey(key, 8) {
		t.Fatalf("%s:3 came from queue %d, want %d", key, q, queueOfKey(key, 8))
	}
	// The ORDERLY group's new queue was given its time (the concurrent
	// group above read it): while K:0 is in flight nothing is handed out.
	if msgs := receiveOrderly(t, s, "seq", map[string]any{"maxMessages": 32, "waitSeconds": 1}); len(msgs) != 0 {
		t.Fatalf("while %s:0 is in flight the ORDERLY group handed out %s", key, msgs[0].Body)
	}
	ack(t, s, "seq", inFlight)
	order := []string{key + ":0"}
	deadline := time.Now().Add(10 * time.Second)
	for len(order) < 6 && time.Now().Before(deadline) {
		msgs := receiveOrderly(t, s, "seq", map[string]any{"maxMessages": 32, "waitSeconds": 2})
		for _, m := range msgs {
			order = append(order, m.Body)
			ack(t, s, "seq", m.ReceiptHandle)
		}
	}
	wantOrder := []string{key + ":0", key + ":1", key + ":2", key + ":3", key + ":4", key + ":5"}
	if !slices.Equal(order, wantOrder) {
		t.Fatalf("ORDERLY group consumed %v, want %v", order, wantOrder)
	}
}

// A topic deleted and created again under a running group is consumed
// from the new incarnation's beginning (FIRST_OFFSET group), within
// seconds. (Where a fresh queue starts is computePullFromWhere's; this
// checks that the old incarnation's queues are let go at once.)
func TestTopicRecreatedUnderGroup(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/again", map[string]any{"queues": 2}), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "again"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired (consumption answers 503)")
	}
	want(t, r, http.StatusCreated)
	for q := range 2 {
		for i := range 3 {
			publishKeyed(t, s, "again", fmt.Sprint("old", q, i), keyOnQueue(t, 2, q))
		}
	}
	receiveAll(t, s, "g", 6, 5*time.Second)
	// The old incarnation's offsets are committed (3 per queue).
	checkFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		rows, err := drained(t, s, "g", "")
		for _, o := range rows {
			if o.Topic == "again" && o.CommittedOffset != 3 {
				return fmt.Errorf("not committed: %+v", o)
			}
		}
		return err
	})

	want(t, s.do(t, "DELETE", "/v1/topics/again", nil), http.StatusNoContent)
	want(t, s.do(t, "PUT", "/v1/topics/again", map[string]any{"queues": 2}), http.StatusCreated)
	// The group moves to the new incarnation (its committed offsets go
	// back to its start) without waiting for the periodic rebalance.
	checkFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		rows, _ := drained(t, s, "g", "")
		n := 0
		for _, o := range rows {
			if o.Topic != "again" {
				continue
			}
			if o.CommittedOffset != 0 {
				return fmt.Errorf("still at the old offsets: %+v", o)
			}
			n++
		}
		if n != 2 {
			return fmt.Errorf("%d queues listed", n)
		}
		return nil
	})
	for q := range 2 {
		publishKeyed(t, s, "again", fmt.Sprint("new", q), keyOnQueue(t, 2, q))
	}
	got := receiveAll(t, s, "g", 2, 5*time.Second)
	for q := range 2 {
		if _, ok := got[fmt.Sprint("new", q)]; !ok {
			t.Fatalf("new incarnation: got %v", got)
		}
	}
}
