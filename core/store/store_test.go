package store

import (
	"context"
	"errors"
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
