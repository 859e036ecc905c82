package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// TestPagesPerCommit reports the page runs one group commit writes in the
// shape of the publish benchmark: 23 messages of 1 KiB over 8 queues, on
// a store already holding some 46k messages. It fails only on a gross
// regression; the figure is logged (go test -v -run PagesPerCommit).
func TestPagesPerCommit(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "bench", Queues: 8, RetentionHours: 72})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 1024)
	n := 0
	commit := func() {
		ops := make([]Op, 23)
		for i := range ops {
			id := fmt.Sprintf("0A%014X", n)
			ops[i] = Op{Topic: "bench", QueueID: n % 8, ID: id, Record: EncodeMessage(&core.Message{ID: id, Topic: "bench", Body: body})}
			n++
		}
		if _, err := s.Commit(context.Background(), ops, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 2000 {
		commit()
	}
	before := s.Stats()
	const rounds = 200
	for range rounds {
		commit()
	}
	after := s.Stats()
	groups := after.Groups - before.Groups
	writes := float64(after.PageWrites-before.PageWrites) / float64(groups)
	pages := float64(after.Pages-before.Pages) / float64(groups)
	t.Logf("per group commit of 23 x 1 KiB over 8 queues: %.1f page writes, %.1f pages", writes, pages)
	if writes > 40 {
		t.Fatalf("%.1f page writes per commit", writes)
	}
}
