package store

import (
	"context"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

type ctxKey struct{}

// TestOnGroupReportsEveryRequest: Options.OnGroup hears of every
// committed request once, with its Commit context, the group's ops and
// a start no later than the commit's answer (cmd/mqgate's commit span
// per group commit is built from it).
func TestOnGroupReportsEveryRequest(t *testing.T) {
	type report struct {
		start time.Time
		ids   []int
		ops   int
		err   error
	}
	reports := make(chan report, 64)
	s := openStore(t, t.TempDir(), Options{OnGroup: func(start time.Time, ctxs []context.Context, ops int, err error) {
		r := report{start: start, ops: ops, err: err}
		for _, c := range ctxs {
			r.ids = append(r.ids, c.Value(ctxKey{}).(int))
		}
		reports <- r
	}})
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 1, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if _, err := s.Commit(context.WithValue(context.Background(), ctxKey{}, 0), []Op{op("t", 0, "a"), op("t", 0, "b")}, nil); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	r := <-reports
	if len(r.ids) != 1 || r.ids[0] != 0 || r.ops != 2 || r.err != nil || r.start.Before(before) || r.start.After(answered) {
		t.Fatalf("report %+v; want request 0, 2 ops, no error, a start between %v and %v", r, before, answered)
	}

	// Concurrent requests share groups; each is reported exactly once.
	const n = 16
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			ctx := context.WithValue(context.Background(), ctxKey{}, i)
			if _, err := s.Commit(ctx, []Op{op("t", 0, "m")}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[int]int{}
	ops := 0
	for len(seen) < n {
		select {
		case r := <-reports:
			for _, id := range r.ids {
				seen[id]++
			}
			ops += r.ops
		case <-time.After(10 * time.Second):
			t.Fatalf("reported %v of %d requests", seen, n)
		}
	}
	for id, k := range seen {
		if k != 1 || id < 1 || id > n {
			t.Fatalf("request %d reported %d times", id, k)
		}
	}
	if ops != n {
		t.Fatalf("groups report %d ops, want %d", ops, n)
	}
}
