package jetstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/backend/jetstream"
)

type pubResult struct {
	MessageID   string    `json:"messageId"`
	QueueID     int       `json:"queueId"`
	QueueOffset int64     `json:"queueOffset"`
	DeliverAt   time.Time `json:"deliverAt"`
	Replayed    bool      `json:"replayed"`
	Results     []struct {
		MessageID   string `json:"messageId"`
		QueueID     int    `json:"queueId"`
		QueueOffset int64  `json:"queueOffset"`
		Replayed    bool   `json:"replayed"`
	} `json:"results"`
}

// publishKey publishes body to topic through base with an Idempotency-Key
// (path "/batch" for a batch) and returns the status, the
// Idempotent-Replayed header and the result.
func publishKey(t *testing.T, base, topic, path, key string, body any) (int, string, pubResult) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+"/v1/topics/"+topic+"/messages"+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var r pubResult
	if resp.StatusCode == 201 {
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("decode %s: %v", out, err)
		}
	}
	return resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), r
}

// stored counts the messages of topic's queues.
func stored(t *testing.T, b *jetstream.Backend, topic string) int64 {
	t.Helper()
	st, err := b.TopicStats(topic)
	if err != nil {
		t.Fatal(err)
	}
	return st.Messages
}

// The same Idempotency-Key answers the original result (same id, queue,
// offset) with Idempotent-Replayed on either instance and after a
// gateway restart, stores nothing; another body under it answers 422.
func TestIdempotentPublish(t *testing.T) {
	e := newEnv(t)
	e.topic("idem", 4)
	a, b := e.gws[0].URL(), e.gws[1].URL()
	st, rep, first := publishKey(t, a, "idem", "", "order-1", map[string]any{"body": "one"})
	if st != 201 || rep != "" || first.Replayed {
		t.Fatalf("first publish: %d %q %+v", st, rep, first)
	}
	check := func(name, base string) {
		t.Helper()
		st, rep, again := publishKey(t, base, "idem", "", "order-1", map[string]any{"body": "one"})
		if st != 201 || rep != "true" || !again.Replayed || again.MessageID != first.MessageID ||
			again.QueueID != first.QueueID || again.QueueOffset != first.QueueOffset {
			t.Fatalf("%s: %d %q %+v, want the replay of %+v", name, st, rep, again, first)
		}
	}
	check("same instance", a)
	check("other instance", b)
	// A fresh instance (a gateway restart) answers the same.
	check("new instance", startGateway(t, 2).URL())
	if st, _, _ := publishKey(t, b, "idem", "", "order-1", map[string]any{"body": "two"}); st != 422 {
		t.Fatalf("another body under the key: %d, want 422", st)
	}
	// The key is per topic; another key stores.
	if st, rep, r := publishKey(t, a, "idem", "", "order-2", map[string]any{"body": "one"}); st != 201 || rep != "" || r.MessageID == first.MessageID {
		t.Fatalf("another key: %d %q %+v", st, rep, r)
	}
	if n := stored(t, e.gws[0].b, "idem"); n != 2 {
		t.Fatalf("%d messages stored, want 2", n)
	}
}

// Batch deduplicationIds: stored entries replay, the others are stored
// together; an id repeated in one batch is stored once; a changed entry
// answers 422 and stores nothing.
func TestIdempotentBatch(t *testing.T) {
	e := newEnv(t)
	e.topic("idemb", 2)
	ent := func(body, id string) map[string]any { return map[string]any{"body": body, "deduplicationId": id} }
	st, rep, r1 := publishKey(t, e.lb.URL, "idemb", "/batch", "", map[string]any{"messages": []any{ent("a", "a"), ent("b", "b")}})
	if st != 201 || rep != "" || len(r1.Results) != 2 {
		t.Fatalf("first batch: %d %q %+v", st, rep, r1)
	}
	st, rep, r2 := publishKey(t, e.lb.URL, "idemb", "/batch", "", map[string]any{"messages": []any{
		ent("a", "a"), ent("c", "c"), ent("c", "c"), map[string]any{"body": "plain"}}})
	if st != 201 || rep != "" || len(r2.Results) != 4 {
		t.Fatalf("mixed batch: %d %q %+v", st, rep, r2)
	}
	if !r2.Results[0].Replayed || r2.Results[0].MessageID != r1.Results[0].MessageID || r2.Results[0].QueueOffset != r1.Results[0].QueueOffset {
		t.Fatalf("a: %+v, want the replay of %+v", r2.Results[0], r1.Results[0])
	}
	if r2.Results[1].Replayed || !r2.Results[2].Replayed || r2.Results[2].MessageID != r2.Results[1].MessageID || r2.Results[3].Replayed {
		t.Fatalf("c, c, plain: %+v", r2.Results[1:])
	}
	st, rep, r3 := publishKey(t, e.lb.URL, "idemb", "/batch", "", map[string]any{"messages": []any{ent("a", "a"), ent("b", "b")}})
	if st != 201 || rep != "true" || r3.Results[1].MessageID != r1.Results[1].MessageID {
		t.Fatalf("all replayed: %d %q %+v", st, rep, r3)
	}
	if st, _, _ := publishKey(t, e.lb.URL, "idemb", "/batch", "", map[string]any{"messages": []any{ent("new", "d"), ent("B", "b")}}); st != 422 {
		t.Fatalf("changed entry: %d, want 422", st)
	}
	if st, _, _ := publishKey(t, e.lb.URL, "idemb", "/batch", "", map[string]any{"messages": []any{ent("x", "e"), ent("y", "e")}}); st != 422 {
		t.Fatalf("one id, two bodies in a batch: %d, want 422", st)
	}
	if n := stored(t, e.gws[0].b, "idemb"); n != 4 {
		t.Fatalf("%d messages stored, want 4 (a, b, c, plain)", n)
	}
}

// A delayed message replays its due time.
func TestIdempotentDelayed(t *testing.T) {
	e := newEnv(t)
	e.topic("idemd", 1)
	body := map[string]any{"body": "later", "delaySeconds": 30}
	st, _, r1 := publishKey(t, e.gws[0].URL(), "idemd", "", "k", body)
	st2, rep, r2 := publishKey(t, e.gws[1].URL(), "idemd", "", "k", body)
	if st != 201 || st2 != 201 || rep != "true" || r2.MessageID != r1.MessageID || !r2.DeliverAt.Equal(r1.DeliverAt) {
		t.Fatalf("delayed: %+v then %d %q %+v", r1, st2, rep, r2)
	}
}

// Concurrent publishes of one key through both instances store one
// message and all answer its id.
func TestIdempotentConcurrent(t *testing.T) {
	e := newEnv(t)
	e.topic("idemc", 4)
	const n = 16
	ids := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			base := e.gws[i%2].URL()
			codes[i], _, _ = publishKey(t, base, "idemc", "", "same", map[string]any{"body": "x"})
			_, _, r := publishKey(t, base, "idemc", "", "same", map[string]any{"body": "x"})
			ids[i] = r.MessageID
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 201 || ids[i] == "" || ids[i] != ids[0] {
			t.Fatalf("publisher %d: %d %q, publisher 0: %q", i, codes[i], ids[i], ids[0])
		}
	}
	if c := stored(t, e.gws[0].b, "idemc"); c != 1 {
		t.Fatalf("%d stored, want 1", c)
	}
}

// A topic stream with a shorter duplicate window than --dedup-window (a
// topic made before keys were kept) is widened at its first idempotent
// publish, so a repeat after the old window is still a replay.
func TestIdempotentWidensOldWindow(t *testing.T) {
	e := newEnv(t)
	e.topic("idemw", 1)
	js, err := jsapi.New(e.gws[0].nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := js.Stream(ctx, "MQ_idemw")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.Duplicates = time.Second
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	// A fresh instance: nothing cached about the topic.
	g := startGateway(t, 2)
	_, _, first := publishKey(t, g.URL(), "idemw", "", "w", map[string]any{"body": "w"})
	time.Sleep(1500 * time.Millisecond) // past the old window
	st2, rep, again := publishKey(t, g.URL(), "idemw", "", "w", map[string]any{"body": "w"})
	if st2 != 201 || rep != "true" || again.MessageID != first.MessageID {
		t.Fatalf("after the old window: %d %q %+v, want the replay of %+v", st2, rep, again, first)
	}
	if st, err = js.Stream(ctx, "MQ_idemw"); err != nil || st.CachedInfo().Config.Duplicates != 5*time.Minute {
		t.Fatalf("window now %v (%v), want 5m", st.CachedInfo().Config.Duplicates, err)
	}
}
