package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/mqgate/mqgate/core"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openStore(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func op(topic string, q int, id string) Op {
	return Op{Topic: topic, QueueID: q, ID: id, Record: EncodeMessage(&core.Message{ID: id, Topic: topic, Body: []byte(id)})}
}

func TestCommitAssignsOffsetsAndReportsAdvances(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int64{}
	s := openStore(t, t.TempDir(), Options{OnCommit: func(adv []Advance) {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range adv {
			seen[a.Topic] = max(seen[a.Topic], a.Max)
		}
	}})
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 2, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	placed, err := s.Commit(context.Background(), []Op{op("t", 1, "a"), op("t", 1, "b"), op("t", 0, "c")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if placed[0].QueueOffset != 0 || placed[1].QueueOffset != 1 || placed[2].QueueOffset != 0 ||
		placed[1].CommitLogOffset != placed[0].CommitLogOffset+1 {
		t.Fatalf("placed %+v", placed)
	}
	if seen["t"] != 2 {
		t.Fatalf("advances %v", seen)
	}
	_, err = s.Commit(context.Background(), []Op{op("t", 2, "d")}, nil)
	if core.ErrorCode(err) != core.EInvalid {
		t.Fatalf("queue out of range: %v", err)
	}
	_, err = s.Commit(context.Background(), []Op{op("missing", 0, "e")}, nil)
	if core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("missing topic: %v", err)
	}
	// System topics are created on first use.
	sys := op("%DLQ%g", 0, "f")
	sys.AutoCreate = 1
	if _, err := s.Commit(context.Background(), []Op{sys}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Commit(context.Background(), []Op{op("t", 0, "g")}, nil); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestSecondOpenIsRefusedQuickly(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir, Options{})
	start := time.Now()
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("second open was slow")
	}
}

// TestApplyRunsOfQueues: the writer looks a queue up once per run of ops on
// it (txState.apply); a request that switches topics and queues and comes
// back to them still places every op at its queue's next offset.
func TestApplyRunsOfQueues(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	a, b := mustTopic(t, s, "a", 2), mustTopic(t, s, "b", 2)
	steps := []struct {
		topic string
		uid   uint64
		q     int
		want  int64 // queue offset
	}{
		{"a", a.UID, 0, 0}, {"a", a.UID, 0, 1}, {"a", a.UID, 1, 0}, {"b", b.UID, 0, 0},
		{"a", a.UID, 0, 2}, {"a", a.UID, 1, 1}, {"b", b.UID, 0, 1}, {"b", b.UID, 1, 0},
	}
	var ops []Op
	for i, st := range steps {
		ops = append(ops, op(st.topic, st.q, fmt.Sprintf("m%d", i)))
	}
	placed, err := s.Commit(context.Background(), ops, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(tx ReadTx) error {
		for i, st := range steps {
			p := placed[i]
			if p.QueueOffset != st.want || p.CommitLogOffset != placed[0].CommitLogOffset+int64(i) {
				t.Errorf("op %d (%s/%d): placed at queue offset %d, log offset %d", i, st.topic, st.q, p.QueueOffset, p.CommitLogOffset)
			}
			u, ok, err := tx.UnitAt(st.uid, st.q, st.want)
			if err != nil || !ok || u.CommitLogOffset != p.CommitLogOffset {
				t.Errorf("op %d: unit %+v %v %v", i, u, ok, err)
			}
			m, err := tx.MessageAt(p.CommitLogOffset)
			if err != nil || m.ID != fmt.Sprintf("m%d", i) || m.QueueID != st.q || m.QueueOffset != st.want {
				t.Errorf("op %d: message %+v %v", i, m, err)
			}
		}
		for _, q := range []struct {
			uid      uint64
			qid      int
			wantSize int64
		}{{a.UID, 0, 3}, {a.UID, 1, 2}, {b.UID, 0, 2}, {b.UID, 1, 1}} {
			if min, max, err := tx.QueueRange(q.uid, q.qid); err != nil || min != 0 || max != q.wantSize {
				t.Errorf("queue %d/%d: [%d, %d) %v, want [0, %d)", q.uid, q.qid, min, max, err, q.wantSize)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
