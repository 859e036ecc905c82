package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// acked is one publish the server answered 2xx: it must survive anything.
type acked struct {
	id   string
	body []byte
	text bool
}

// TestKill9 is SPEC §8.1: concurrent publishers (single and batch, text
// and binary) run against the server, which is killed with SIGKILL in mid
// stream; after a restart on the same data dir, every publish that was
// answered 2xx before the kill is readable by id, byte for byte, and the
// queues have no gaps.
func TestKill9(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "orders", 4)

	publishers, minAcked := 8, 400
	if testing.Short() {
		minAcked = 100
	}
	if v, err := strconv.Atoi(os.Getenv("MQGATE_E2E_KILL_ACKED")); err == nil && v > 0 {
		minAcked = v
	}

	var (
		mu   sync.Mutex
		acks []acked
		wg   sync.WaitGroup
	)
	enough := make(chan struct{})
	var enoughOnce sync.Once
	for p := range publishers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 42))
			for i := 0; ; i++ {
				// After the kill every request fails: that ends the publisher.
				var got []acked
				var err error
				if i%5 == 4 {
					got, err = publishBatch(s, rng, p, i)
				} else {
					got, err = publishOne(s, rng, p, i)
				}
				if err != nil {
					return
				}
				mu.Lock()
				acks = append(acks, got...)
				if len(acks) >= minAcked {
					enoughOnce.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Log("timed out waiting for acks; killing anyway")
	}
	s.kill() // SIGKILL while the publishers are still sending
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(acks) == 0 {
		t.Fatal("no publish was acknowledged before the kill")
	}
	t.Logf("%d publishes acknowledged before kill -9", len(acks))

	s2 := startServer(t, dir)
	// The publishes since the last checkpoint came back from the
	// log-ahead (the bbolt file is synced only at checkpoints).
	if !strings.Contains(s2.Logs(), "log-ahead: redid") {
		t.Errorf("the restart after kill -9 redid no log-ahead record:\n%s", s2.Logs())
	}
	// The checkpoint it went back to wrote the freelist: bbolt loaded it
	// instead of walking the tree to rebuild it, and a large file is
	// pre-checked by its meta pages and freelist alone (a file of at most
	// 64 MiB of pages, as this one may be, is read page by page anyway:
	// core/store FullCheckLimit).
	if !strings.Contains(s2.Logs(), `"freelistNamed":true`) {
		t.Errorf("the restart after kill -9 read every page (its checkpoint named no freelist):\n%s", s2.Logs())
	}
	for _, a := range acks {
		r := s2.do(t, "GET", "/v1/topics/orders/messages/"+a.id, nil)
		if r.Status != 200 {
			t.Fatalf("acknowledged message %s lost after kill -9: %d %s", a.id, r.Status, r.Body)
		}
		var m message
		r.JSON(t, &m)
		var got []byte
		switch {
		case a.text && m.Body != nil:
			got = []byte(*m.Body)
		case !a.text && m.BodyBase64 != nil:
			got, _ = base64.StdEncoding.DecodeString(*m.BodyBase64)
		default:
			t.Fatalf("message %s came back with the wrong body field: %s", a.id, r.Body)
		}
		if !bytes.Equal(got, a.body) {
			t.Fatalf("message %s body differs after kill -9", a.id)
		}
	}

	// Queues are gapless: browsing each from its min offset sees every
	// offset once, in order.
	r := s2.do(t, "GET", "/v1/topics/orders", nil)
	var tp topic
	r.JSON(t, &tp)
	total := int64(0)
	for _, q := range tp.Stats.Queues {
		next := q.MinOffset
		for next < q.MaxOffset {
			r := s2.do(t, "GET", fmt.Sprintf("/v1/topics/orders/messages?queueId=%d&offset=%d&limit=1000", q.QueueID, next), nil)
			want(t, r, 200)
			var ml messageList
			r.JSON(t, &ml)
			if len(ml.Messages) == 0 {
				t.Fatalf("queue %d: nothing at offset %d below max %d", q.QueueID, next, q.MaxOffset)
			}
			for _, m := range ml.Messages {
				if *m.QueueOffset != next {
					t.Fatalf("queue %d: offset %d where %d was expected", q.QueueID, *m.QueueOffset, next)
				}
				next++
			}
		}
		total += q.MaxOffset - q.MinOffset
	}
	if total < int64(len(acks)) {
		t.Fatalf("%d messages stored, %d acknowledged", total, len(acks))
	}
}

func randomBody(rng *rand.Rand) ([]byte, bool) {
	n := 1 + rng.IntN(2048)
	if rng.IntN(2) == 0 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b, true
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b, false
}

func bodyField(b []byte, text bool) map[string]any {
	if text {
		return map[string]any{"body": string(b)}
	}
	return map[string]any{"bodyBase64": base64.StdEncoding.EncodeToString(b)}
}

func publishOne(s *server, rng *rand.Rand, p, i int) ([]acked, error) {
	body, text := randomBody(rng)
	m := bodyField(body, text)
	m["keys"] = []string{fmt.Sprintf("p%d-%d", p, i)}
	r, err := s.try("POST", "/v1/topics/orders/messages", m)
	if err != nil {
		return nil, err
	}
	if r.Status != 201 {
		return nil, fmt.Errorf("status %d: %s", r.Status, r.Body)
	}
	var pr publishResult
	if err := jsonUnmarshal(r.Body, &pr); err != nil {
		return nil, err
	}
	return []acked{{id: pr.MessageID, body: body, text: text}}, nil
}

func publishBatch(s *server, rng *rand.Rand, p, i int) ([]acked, error) {
	n := 2 + rng.IntN(20)
	msgs := make([]map[string]any, n)
	out := make([]acked, n)
	for j := range msgs {
		body, text := randomBody(rng)
		msgs[j] = bodyField(body, text)
		out[j] = acked{body: body, text: text}
	}
	r, err := s.try("POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": msgs})
	if err != nil {
		return nil, err
	}
	if r.Status != 201 {
		return nil, fmt.Errorf("status %d: %s", r.Status, r.Body)
	}
	var br struct{ Results []publishResult }
	if err := jsonUnmarshal(r.Body, &br); err != nil {
		return nil, err
	}
	if len(br.Results) != n {
		return nil, fmt.Errorf("%d results for %d messages", len(br.Results), n)
	}
	for j := range out {
		out[j].id = br.Results[j].MessageID
	}
	return out, nil
}
