package store

import (
	"context"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCommitFailuresCounted: a group commit that fails (here: a broken
// log-ahead, as after a failed fdatasync) counts in CommitFailures and
// sets Failing, which /metrics and /readyz read; a good commit before it
// counts nothing.
func TestCommitFailuresCounted(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 1, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(context.Background(), []Op{op("t", 0, "ok")}, nil); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.CommitFailures != 0 || st.Failing {
		t.Fatalf("after a good commit: failures %d, failing %v", st.CommitFailures, st.Failing)
	}
	if s.wal == nil {
		t.Skip("no log-ahead in this configuration")
	}
	broken := errors.New("injected: the log-ahead is broken")
	s.wal.broken.Store(&broken)
	if _, err := s.Commit(context.Background(), []Op{op("t", 0, "lost")}, nil); err == nil {
		t.Fatal("a commit on a broken log-ahead succeeded")
	}
	if st := s.Stats(); st.CommitFailures != 1 || !st.Failing {
		t.Fatalf("after a failed commit: failures %d, failing %v; want 1, true", st.CommitFailures, st.Failing)
	}
}
