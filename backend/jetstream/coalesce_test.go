package jetstream_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mqgate/mqgate/core"
)

// Concurrent publishes of one topic share atomic batches (coalesce.go),
// and each still gets its own answer: its id, its queue and an offset
// that is its message's stream sequence; its index entries (by id and by
// key) point back at its own message, though its batch carried others
// between and around it. Batches of one and of several messages, with
// and without keys (index entries of varying count), are mixed.
func TestPublishCoalesced(t *testing.T) {
	e := newEnv(t)
	b := e.gws[0].b
	e.topic("coal", 4)
	const workers, each = 48, 6
	type sent struct {
		res  core.PutResult
		body string
		key  string
	}
	var mu sync.Mutex
	var all []sent
	var wg sync.WaitGroup
	batches0, pubs0 := b.LaneCounts()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				var msgs []core.PutMessage
				for k := 0; k <= (w+i)%3; k++ {
					m := core.PutMessage{Body: []byte(fmt.Sprintf("w%d-i%d-k%d", w, i, k))}
					if (w+k)%2 == 0 {
						m.Keys = []string{fmt.Sprintf("key-%d-%d-%d", w, i, k), "shared"}
					}
					msgs = append(msgs, m)
				}
				res, err := b.Put(context.Background(), "coal", msgs)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for k := range res {
					key := ""
					if len(msgs[k].Keys) > 0 {
						key = msgs[k].Keys[0]
					}
					all = append(all, sent{res[k], string(msgs[k].Body), key})
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	batches, pubs := b.LaneCounts()
	batches, pubs = batches-batches0, pubs-pubs0
	t.Logf("%d publishes in %d batches", pubs, batches)
	if pubs != workers*each {
		t.Fatalf("lanes carried %d publishes, want %d", pubs, workers*each)
	}
	if batches >= pubs {
		t.Fatalf("no publish shared a batch: %d batches for %d publishes", batches, pubs)
	}
	offsets := map[int64]bool{}
	for _, s := range all {
		if offsets[s.res.QueueOffset] {
			t.Fatalf("offset %d answered twice", s.res.QueueOffset)
		}
		offsets[s.res.QueueOffset] = true
		m, err := b.Message("coal", s.res.MessageID)
		if err != nil {
			t.Fatalf("%s: %v", s.body, err)
		}
		if string(m.Body) != s.body || m.QueueOffset != s.res.QueueOffset || m.QueueID != s.res.QueueID {
			t.Fatalf("id %s answered %q at queue %d offset %d; stored %q at queue %d offset %d",
				s.res.MessageID, s.body, s.res.QueueID, s.res.QueueOffset, m.Body, m.QueueID, m.QueueOffset)
		}
		if s.key == "" {
			continue
		}
		byKey, err := b.MessagesByKey("coal", s.key, 10)
		if err != nil || len(byKey) != 1 || string(byKey[0].Body) != s.body {
			t.Fatalf("key %s: %d messages (%v), want %q", s.key, len(byKey), err, s.body)
		}
	}
	if n := stored(t, b, "coal"); n != int64(len(all)) {
		t.Fatalf("%d messages stored, %d answered", n, len(all))
	}
}
