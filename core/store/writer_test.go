package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// TestConcurrentCommitsIndexEveryMessage: many publishers sharing group
// commits (single messages and batches, with and without keys) leave every
// message where its Placed says, reachable through its consume-queue unit,
// the id index and the key index, and the file passes the self check on
// reopen. Units and index values are built in per-transaction scratch and
// arena space, so a mix-up there shows as a wrong unit or offset here.
func TestConcurrentCommitsIndexEveryMessage(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 4, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const publishers, rounds = 16, 40
	type sent struct {
		id, key string
		qid     int
		at      Placed
	}
	var mu sync.Mutex
	var all []sent
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for r := range rounds {
				n := 1 + (p+r)%3 // batches of 1..3
				ops := make([]Op, n)
				for i := range ops {
					id := fmt.Sprintf("id-%02d-%03d-%d", p, r, i)
					ops[i] = op("t", (p+i)%4, id)
					if i%2 == 0 {
						ops[i].Keys = []string{"key-" + id}
					}
					ops[i].TagsCode = int64(p*1000 + r)
				}
				placed, err := s.Commit(context.Background(), ops, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i := range ops {
					k := ""
					if len(ops[i].Keys) > 0 {
						k = ops[i].Keys[0]
					}
					all = append(all, sent{id: ops[i].ID, key: k, qid: ops[i].QueueID, at: placed[i]})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if st := s.Stats(); st.Groups >= st.Requests {
		t.Logf("no group held two requests (%d groups, %d requests)", st.Groups, st.Requests)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{}) // runs the self check
	err = s.db.View(func(tx *bolt.Tx) error {
		rec, _, err := getTopic(tx, "t")
		if err != nil {
			return err
		}
		seen := map[[2]int64]bool{}
		for _, m := range all {
			qk := [2]int64{int64(m.qid), m.at.QueueOffset}
			if seen[qk] {
				return fmt.Errorf("queue %d offset %d handed out twice", m.qid, m.at.QueueOffset)
			}
			seen[qk] = true
			u, ok, err := unitAt(tx, rec.UID, m.qid, m.at.QueueOffset)
			if err != nil || !ok || u.CommitLogOffset != m.at.CommitLogOffset {
				return fmt.Errorf("%s: unit %+v %v %v, placed %+v", m.id, u, ok, err, m.at)
			}
			msg, err := messageAt(tx, u.CommitLogOffset)
			if err != nil || msg == nil || msg.ID != m.id || msg.QueueID != m.qid || msg.QueueOffset != m.at.QueueOffset || int(u.Size) == 0 {
				return fmt.Errorf("%s: commit log entry %+v %v", m.id, msg, err)
			}
			if off, ok := offsetOfID(tx, m.id); !ok || off != m.at.CommitLogOffset {
				return fmt.Errorf("%s: id index %d %v, want %d", m.id, off, ok, m.at.CommitLogOffset)
			}
			if m.key != "" {
				if offs := offsetsOfKey(tx, "t", m.key, 10); len(offs) != 1 || offs[0] != m.at.CommitLogOffset {
					return fmt.Errorf("%s: key index %v, want [%d]", m.id, offs, m.at.CommitLogOffset)
				}
			}
		}
		for q := range 4 {
			min, max, err := queueRange(tx, rec.UID, q)
			if err != nil {
				return err
			}
			n := int64(0)
			for k := range seen {
				if k[0] == int64(q) {
					n++
				}
			}
			if min != 0 || max != n {
				return fmt.Errorf("queue %d range [%d, %d), %d messages", q, min, max, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var lazyMarks = Register("core/store test", "test.lazymarks")

// TestLazyCommitWaitsForCompany: a lazy request (a consumer's position
// write) is not committed alone while its linger lasts; the next ordinary
// request takes it along in the same transaction, and Close commits one
// still lingering instead of leaving it unanswered.
func TestLazyCommitWaitsForCompany(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Linger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	mark := func(key string) Hook {
		return func(tx Tx) error {
			b, err := tx.CreateBucketIfNotExists(lazyMarks)
			if err != nil {
				return err
			}
			return b.Put([]byte(key), []byte{1})
		}
	}
	lazy := core.WithLazyCommit(context.Background())
	lazyDone := make(chan error, 1)
	go func() { _, err := s.Commit(lazy, nil, mark("lazy")); lazyDone <- err }()
	select {
	case err := <-lazyDone:
		t.Fatalf("the lazy request was committed alone (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := s.Commit(context.Background(), nil, mark("eager")); err != nil {
		t.Fatal(err)
	}
	if err := <-lazyDone; err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Groups != 1 || st.Requests != 2 {
		t.Fatalf("groups %d, requests %d; want both requests in one group", st.Groups, st.Requests)
	}

	go func() { _, err := s.Commit(lazy, nil, mark("at close")); lazyDone <- err }()
	select {
	case err := <-lazyDone:
		t.Fatalf("the lazy request was committed alone (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-lazyDone; err != nil {
		t.Fatalf("the lingering request was answered %v at Close; want committed", err)
	}
	s, err = Open(filepath.Dir(s.Path()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(func(tx ReadTx) error {
		for _, k := range []string{"lazy", "eager", "at close"} {
			if tx.Bucket(lazyMarks).Get([]byte(k)) == nil {
				t.Errorf("mark %q missing after reopen", k)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestGatherStopsLingeringForAnEagerRequest drives the writer's grouping
// directly: a group of lazy requests keeps waiting until its timer fires,
// and stops at once, taking what is queued, when an eager request joins.
func TestGatherStopsLingeringForAnEagerRequest(t *testing.T) {
	s := &Store{reqs: make(chan *Request, 8), opts: Options{MaxGroupBytes: 1 << 20}}
	first := &Request{lazy: true}
	group := []*Request{first}
	g := gathering{}
	wait := make(chan time.Time, 1)
	s.reqs <- &Request{lazy: true}
	s.reqs <- &Request{}
	s.reqs <- &Request{lazy: true}
	if !s.gather(&group, &g, wait) || len(group) != 4 || !g.eager {
		t.Fatalf("group of %d (eager %v); want all 4 queued, eager", len(group), g.eager)
	}
	group, g = group[:1], gathering{}
	s.reqs <- &Request{lazy: true}
	wait <- time.Now()
	if !s.gather(&group, &g, wait) || len(group) != 2 || g.eager {
		t.Fatalf("group of %d (eager %v); want the 2 lazy ones once the timer fired", len(group), g.eager)
	}
	close(s.reqs)
	if s.gather(&group, &g, wait) {
		t.Fatal("gather did not report the closed queue")
	}
}
