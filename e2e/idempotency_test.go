package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

type pubResult struct {
	MessageID   string `json:"messageId"`
	Topic       string `json:"topic"`
	QueueID     *int   `json:"queueId"`
	QueueOffset *int64 `json:"queueOffset"`
	Replayed    bool   `json:"replayed"`
}

// publishIdem publishes body to topic with an Idempotency-Key.
func publishIdem(s *server, topic, key, body string) (*response, pubResult, error) {
	var res pubResult
	r, err := s.try("POST", "/v1/topics/"+topic+"/messages", map[string]any{"body": body}, "Idempotency-Key", key)
	if err != nil {
		return nil, res, err
	}
	if r.Status == 201 {
		if err := json.Unmarshal(r.Body, &res); err != nil {
			return r, res, err
		}
	}
	return r, res, nil
}

// retryKeyed repeats a keyed publish n times and checks each answer is
// the original result, marked replayed.
func retryKeyed(t *testing.T, s *server, topic, key, body, wantID string, n int) {
	t.Helper()
	for range n {
		r, res, err := publishIdem(s, topic, key, body)
		if err != nil {
			t.Errorf("retry %s: %v", key, err)
			return
		}
		if r.Status != 201 || res.MessageID != wantID || !res.Replayed || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry of %s: status %d id %s (want %s) replayed %v header %q", key, r.Status, res.MessageID, wantID, res.Replayed, r.Header.Get("Idempotent-Replayed"))
			return
		}
	}
}

func topicMessageCount(t *testing.T, s *server, name string) int64 {
	t.Helper()
	var tp struct {
		Stats struct {
			Messages int64 `json:"messages"`
		} `json:"stats"`
	}
	r := s.do(t, "GET", "/v1/topics/"+name, nil)
	want(t, r, 200)
	r.JSON(t, &tp)
	return tp.Stats.Messages
}

// TestIdempotentPublishAcrossKill9 is issue 11's proof: 1,000 keyed
// publishes, each retried 3 times with the same key; 200 of them are in
// flight when the server is killed with SIGKILL and retried after the
// restart. Exactly 1,000 messages are stored and every retry answers the
// id of the original publish (the first 201 the client saw, before or
// after the kill).
func TestIdempotentPublishAcrossKill9(t *testing.T) {
	const total, acrossKill, retries, workers = 1000, 200, 3, 8
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "idem", 4)
	key := func(i int) string { return fmt.Sprintf("order-%04d", i) }
	body := func(i int) string { return fmt.Sprintf("order %d created", i) }

	// 800 keys: publish, then retry 3 times on the same server.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < total-acrossKill; i = int(next.Add(1)) - 1 {
				r, res, err := publishIdem(s, "idem", key(i), body(i))
				if err != nil || r.Status != 201 || res.Replayed || r.Header.Get("Idempotent-Replayed") != "" {
					t.Errorf("publish %d: %v %+v %+v", i, err, r, res)
					return
				}
				retryKeyed(t, s, "idem", key(i), body(i), res.MessageID, retries)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// 200 keys published concurrently while the server is killed.
	first := make([]string, total) // id of the first 201 seen per key
	next.Store(total - acrossKill)
	var answered atomic.Int64
	halfway := make(chan struct{})
	var once sync.Once
	var killWG sync.WaitGroup
	for range workers {
		killWG.Go(func() {
			for i := int(next.Add(1)) - 1; i < total; i = int(next.Add(1)) - 1 {
				r, res, err := publishIdem(s, "idem", key(i), body(i))
				if err != nil || r.Status != 201 {
					continue // lost with the server: retried after the restart
				}
				first[i] = res.MessageID
				if answered.Add(1) == acrossKill/2 {
					once.Do(func() { close(halfway) })
				}
			}
		})
	}
	allSent := make(chan struct{})
	go func() { killWG.Wait(); close(allSent) }()
	select {
	case <-halfway:
	case <-allSent: // every publish answered before half were: kill anyway
	}
	s.kill()
	<-allSent
	t.Logf("%d of %d publishes answered before the kill", answered.Load(), acrossKill)

	s = startServer(t, dir)
	for i := total - acrossKill; i < total; i++ {
		if first[i] == "" {
			r, res, err := publishIdem(s, "idem", key(i), body(i))
			if err != nil || r.Status != 201 {
				t.Fatalf("publish %d after restart: %v %+v", i, err, r)
			}
			first[i] = res.MessageID // replayed if it committed before the kill
		}
		retryKeyed(t, s, "idem", key(i), body(i), first[i], retries)
	}
	if n := topicMessageCount(t, s, "idem"); n != total {
		t.Fatalf("%d messages stored, want %d", n, total)
	}

	// A key reused with another body is refused and stores nothing.
	r, _, err := publishIdem(s, "idem", key(0), "something else")
	if err != nil {
		t.Fatal(err)
	}
	wantProblem(t, r, 422)
	r, _, _ = publishIdem(s, "idem", strings.Repeat("k", 129), body(0))
	wantProblem(t, r, 400, "Idempotency-Key")

	// Racing duplicates on the real server store once.
	const racers = 6
	ids := make([][racers]string, 20)
	for k := range ids {
		for j := range racers {
			wg.Go(func() {
				r, res, err := publishIdem(s, "idem", fmt.Sprint("race-", k), "race")
				if err != nil || r.Status != 201 {
					t.Errorf("race publish: %v %+v", err, r)
					return
				}
				ids[k][j] = res.MessageID
			})
		}
	}
	wg.Wait()
	for k := range ids {
		for j := range racers {
			if ids[k][j] != ids[k][0] {
				t.Fatalf("race key %d answered ids %v", k, ids[k])
			}
		}
	}
	if n := topicMessageCount(t, s, "idem"); n != total+int64(len(ids)) {
		t.Fatalf("%d messages after the race, want %d", n, total+len(ids))
	}
}

// TestIdempotentBatch: deduplicationId per entry, results in order.
func TestIdempotentBatch(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "b", 2)
	type batchRes struct {
		Results []pubResult `json:"results"`
	}
	send := func(msgs ...map[string]any) (*response, batchRes) {
		var out batchRes
		r := s.do(t, "POST", "/v1/topics/b/messages/batch", map[string]any{"messages": msgs})
		if r.Status == 201 {
			r.JSON(t, &out)
		}
		return r, out
	}
	m := func(body, id string) map[string]any {
		if id == "" {
			return map[string]any{"body": body}
		}
		return map[string]any{"body": body, "deduplicationId": id}
	}
	r, a := send(m("a", "da"), m("plain", ""), m("b", "db"))
	want(t, r, 201)
	r, b := send(m("c", "dc"), m("b", "db"), m("a", "da"))
	want(t, r, 201)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("partly replayed batch has Idempotent-Replayed")
	}
	if b.Results[0].Replayed || !b.Results[1].Replayed || b.Results[1].MessageID != a.Results[2].MessageID ||
		!b.Results[2].Replayed || b.Results[2].MessageID != a.Results[0].MessageID {
		t.Fatalf("second batch %+v after %+v", b, a)
	}
	r, c := send(m("a", "da"), m("b", "db"))
	want(t, r, 201)
	if r.Header.Get("Idempotent-Replayed") != "true" || c.Results[0].MessageID != a.Results[0].MessageID {
		t.Fatalf("fully replayed batch: %q %+v", r.Header.Get("Idempotent-Replayed"), c)
	}
	if n := topicMessageCount(t, s, "b"); n != 4 {
		t.Fatalf("%d messages, want 4", n)
	}
	r, _ = send(m("changed", "da"))
	wantProblem(t, r, 422)
	r = s.do(t, "POST", "/v1/topics/b/messages/batch", map[string]any{"messages": []any{m("x", "")}}, "Idempotency-Key", "k")
	wantProblem(t, r, 400, "Idempotency-Key")
	r = s.do(t, "POST", "/v1/topics/b/messages", m("x", "d1"))
	wantProblem(t, r, 400, "deduplicationId")
}
