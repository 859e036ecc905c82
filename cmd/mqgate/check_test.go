package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// TestCheckCommandUnsettledAfterLostLog: a power cut that lost the log's
// unsynced records but kept the file's page writes of those commits
// leaves a log with no records beside a file past its checkpoint. check
// must say unsettled (exit 1), not damaged, and change nothing; a start
// recovers the file, and check then says healthy.
func TestCheckCommandUnsettledAfterLostLog(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(dir, store.Options{CheckpointIdle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Update is followed by a checkpoint: the log holds its header and no
	// records, as a power cut before the next sync of the log leaves it.
	if err := s.Update(func(tx store.Tx) error {
		_, _, err := tx.PutTopic(store.TopicRecord{Name: "t", Queues: 2, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wal := readAll(t, filepath.Join(dir, store.WALName))
	synced := readAll(t, filepath.Join(dir, store.FileName))
	for i := range 30 {
		var ops []store.Op
		for j := range 4 {
			id := fmt.Sprintf("m-%d-%d", i, j)
			ops = append(ops, store.Op{Topic: "t", QueueID: j % 2, ID: id,
				Record: store.EncodeMessage(&core.Message{ID: id, Topic: "t", Body: bytes.Repeat([]byte{byte(i)}, 700)})})
		}
		if _, err := s.Commit(context.Background(), ops, nil); err != nil {
			t.Fatal(err)
		}
	}
	live := readAll(t, filepath.Join(dir, store.FileName))
	ps := os.Getpagesize() // bbolt's page size for a new file
	if bytes.Equal(live[:2*ps], synced[:2*ps]) {
		t.Fatal("the commits wrote no meta page: the test models nothing")
	}
	metasOnly := bytes.Clone(synced)
	copy(metasOnly, live[:2*ps])
	for name, img := range map[string][]byte{"every page": live, "meta pages only": metasOnly} {
		t.Run(name, func(t *testing.T) { checkUnsettled(t, img, wal) })
	}
}

// checkUnsettled checks the crashed image img, with the log wal beside it.
func checkUnsettled(t *testing.T, img, wal []byte) {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, store.FileName), img, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, store.WALName), wal, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := checkCmd([]string{d}, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), ": unsettled") || strings.Contains(out.String(), "damaged") {
		t.Fatalf("check of a file past its log's checkpoint: exit %d, want 1 and unsettled\n%s%s", code, &out, &errOut)
	}
	if !bytes.Equal(readAll(t, filepath.Join(d, store.FileName)), img) {
		t.Fatal("check changed the unsettled file")
	}

	r, err := store.Open(d, store.Options{})
	if err != nil {
		t.Fatalf("start on the crashed copy: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := checkCmd([]string{d}, &out, &errOut); code != 0 || !strings.Contains(out.String(), ": healthy") {
		t.Fatalf("check after a start and a clean stop: exit %d\n%s%s", code, &out, &errOut)
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
