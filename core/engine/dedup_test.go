package engine

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

func keyed(body, key string) core.PutMessage {
	m := text(body)
	m.DedupID, m.DedupHash = key, sha256.Sum256([]byte(body))
	return m
}

func topicMessages(t testing.TB, e *Engine, topic string) int64 {
	t.Helper()
	st, err := e.TopicStats(topic)
	if err != nil {
		t.Fatal(err)
	}
	return st.Messages
}

func TestIdempotentPutReplaysOriginal(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, Options{Dir: dir})
	mustTopic(t, e, "orders", 4)
	first := mustPut(t, e, "orders", keyed("a", "k1"))[0]
	if first.Replayed {
		t.Fatal("first publish marked replayed")
	}
	again := mustPut(t, e, "orders", keyed("a", "k1"))[0]
	first.Replayed = true
	if again != first {
		t.Fatalf("replay %+v, want %+v", again, first)
	}
	if n := topicMessages(t, e, "orders"); n != 1 {
		t.Fatalf("%d messages stored, want 1", n)
	}
	_, err := e.Put(t.Context(), "orders", []core.PutMessage{keyed("b", "k1")})
	wantCode(t, err, core.EUnprocessable)

	// Keys are per topic.
	mustTopic(t, e, "other", 1)
	if r := mustPut(t, e, "other", keyed("a", "k1"))[0]; r.Replayed {
		t.Fatal("a key of another topic replayed")
	}

	// A restart keeps the records.
	e.Close()
	e2 := openTest(t, Options{Dir: dir})
	if r := mustPut(t, e2, "orders", keyed("a", "k1"))[0]; r != first {
		t.Fatalf("after reopen %+v, want %+v", r, first)
	}
	if n := topicMessages(t, e2, "orders"); n != 1 {
		t.Fatalf("%d messages after reopen, want 1", n)
	}
}

func TestIdempotentBatchInOrder(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	first := mustPut(t, e, "t", keyed("a", "ka"), text("plain"), keyed("b", "kb"))
	res := mustPut(t, e, "t", keyed("c", "kc"), keyed("b", "kb"), text("plain2"), keyed("a", "ka"), keyed("c", "kc"))
	if res[0].Replayed || res[0].MessageID == first[0].MessageID {
		t.Fatalf("new entry: %+v", res[0])
	}
	if !res[1].Replayed || res[1].MessageID != first[2].MessageID || res[1].QueueOffset != first[2].QueueOffset {
		t.Fatalf("entry 1 %+v, want replay of %+v", res[1], first[2])
	}
	if res[2].Replayed {
		t.Fatal("unkeyed entry replayed")
	}
	if !res[3].Replayed || res[3].MessageID != first[0].MessageID {
		t.Fatalf("entry 3 %+v, want replay of %+v", res[3], first[0])
	}
	if !res[4].Replayed || res[4].MessageID != res[0].MessageID {
		t.Fatalf("entry 4 %+v, want the batch's own entry 0 %+v", res[4], res[0])
	}
	if n := topicMessages(t, e, "t"); n != 5 {
		t.Fatalf("%d messages, want 5", n)
	}
	// A repeated key with another body in one batch is refused whole.
	_, err := e.Put(t.Context(), "t", []core.PutMessage{keyed("x", "kx"), keyed("y", "kx")})
	wantCode(t, err, core.EUnprocessable)
	if n := topicMessages(t, e, "t"); n != 5 {
		t.Fatalf("a refused batch stored something: %d messages", n)
	}
}

func TestIdempotentDelayedReplay(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	m := keyed("later", "kd")
	m.DeliverAt = time.Now().Add(time.Hour)
	first := mustPut(t, e, "t", m)[0]
	again := mustPut(t, e, "t", m)[0]
	if !again.Replayed || again.MessageID != first.MessageID || !again.DeliverAt.Equal(first.DeliverAt) || again.QueueID != -1 {
		t.Fatalf("replay %+v of %+v", again, first)
	}
	lvl := keyed("level", "kl")
	lvl.DelayLevel = 3
	f := mustPut(t, e, "t", lvl)[0]
	if r := mustPut(t, e, "t", lvl)[0]; !r.Replayed || r.MessageID != f.MessageID || !r.DeliverAt.Equal(f.DeliverAt) {
		t.Fatalf("level replay %+v of %+v", r, f)
	}
}

// Racing publishes of one key store once and all answer the same id.
func TestIdempotentRaceStoresOnce(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 4)
	const keys, racers = 50, 8
	ids := make([][racers]string, keys)
	var wg sync.WaitGroup
	for k := range keys {
		for r := range racers {
			wg.Go(func() {
				res, err := e.Put(t.Context(), "t", []core.PutMessage{keyed("same", fmt.Sprint("key-", k))})
				if err != nil {
					t.Error(err)
					return
				}
				ids[k][r] = res[0].MessageID
			})
		}
	}
	wg.Wait()
	for k := range keys {
		for r := range racers {
			if ids[k][r] != ids[k][0] {
				t.Fatalf("key %d: ids %v", k, ids[k])
			}
		}
	}
	if n := topicMessages(t, e, "t"); n != keys {
		t.Fatalf("%d messages stored, want %d", n, keys)
	}
}

func TestIdempotencyExpiresAndIsSwept(t *testing.T) {
	e := openTest(t, Options{DedupWindow: 50 * time.Millisecond, RetentionCheckInterval: 10 * time.Millisecond})
	mustTopic(t, e, "t", 1)
	first := mustPut(t, e, "t", keyed("a", "k"))[0]
	checkFor(t, 5*time.Second, func() error {
		if n := bucketLen(t, e, bucketDedupExp) + bucketLen(t, e, bucketDedup); n != 0 {
			return fmt.Errorf("%d dedup entries left", n)
		}
		return nil
	})
	again := mustPut(t, e, "t", keyed("a", "k"))[0]
	if again.Replayed || again.MessageID == first.MessageID {
		t.Fatalf("after the window: %+v", again)
	}
	if n := topicMessages(t, e, "t"); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
}

func TestIdempotencyNewIncarnation(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	first := mustPut(t, e, "t", keyed("a", "k"))[0]
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 1)
	if r := mustPut(t, e, "t", keyed("b", "k"))[0]; r.Replayed || r.MessageID == first.MessageID {
		t.Fatalf("a record of the deleted topic answered: %+v", r)
	}
}

func TestDedupRecordCodec(t *testing.T) {
	r := dedupRecord{expires: 123, uid: 7, queueID: -1, offset: 99, storedAt: 5, deliverAt: 6, id: "abc"}
	r.hash[3] = 9
	got, ok := decodeDedup(r.encode())
	if !ok || got != r {
		t.Fatalf("round trip %+v → %+v", r, got)
	}
	if _, ok := decodeDedup([]byte{1, 2}); ok {
		t.Fatal("short record decoded")
	}
}

func FuzzDecodeDedup(f *testing.F) {
	r := dedupRecord{expires: 1, uid: 2, queueID: 3, offset: 4, storedAt: 5, id: "x"}
	f.Add(r.encode())
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := decodeDedup(b)
		if !ok {
			return
		}
		if again, ok := decodeDedup(got.encode()); !ok || again != got {
			t.Fatalf("round trip of %+v gave %+v", got, again)
		}
	})
}
