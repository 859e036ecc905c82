package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// dumpFile hashes every bucket, nested bucket, sequence, key and value of
// the store file at path (read-only), with the key count.
func dumpFile(t *testing.T, path string) (sum uint64, keys int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := fnv.New64a()
	var walk func(depth int, b *bolt.Bucket) error
	walk = func(depth int, b *bolt.Bucket) error {
		fmt.Fprintf(h, "seq %d %d\n", depth, b.Sequence())
		return b.ForEach(func(k, v []byte) error {
			h.Write(k)
			if v == nil {
				if nb := b.Bucket(k); nb != nil {
					fmt.Fprintf(h, "bucket\n")
					return walk(depth+1, nb)
				}
			}
			keys++
			fmt.Fprintf(h, "=%d:", len(v))
			h.Write(v)
			return nil
		})
	}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			h.Write(name)
			return walk(0, b)
		})
	}); err != nil {
		t.Fatal(err)
	}
	return h.Sum64(), keys
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestCompact: after most topics are deleted and emptied, compaction
// brings the file back to about its live data, with every bucket (a
// foreign one with a nested bucket and sequences included) identical; it
// refuses while the store is open, and the compacted store opens, passes
// its checks and takes new messages.
func TestCompact(t *testing.T) {
	defer func(n int) { compactTxBytes = n }(compactTxBytes)
	compactTxBytes = 1 << 20 // several transactions, nested buckets across them
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 1024)
	const topics = 10
	for i := range topics {
		name := fmt.Sprintf("t%d", i)
		if err := s.db.Update(func(tx *bolt.Tx) error {
			_, _, err := putTopic(tx, TopicRecord{Name: name, Queues: 4, RetentionHours: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for b := range 10 {
			ops := make([]Op, 100)
			for j := range ops {
				id := fmt.Sprintf("%s-%d-%d", name, b, j)
				ops[j] = Op{Topic: name, QueueID: j % 4, ID: id, Keys: []string{"k" + id},
					Record: EncodeMessage(&core.Message{ID: id, Topic: name, Keys: []string{"k" + id}, Body: body})}
			}
			if _, err := s.Commit(context.Background(), ops, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { // a sibling package's buckets
		b, err := tx.CreateBucket([]byte("groups.test"))
		if err != nil {
			return err
		}
		if err := b.SetSequence(41); err != nil {
			return err
		}
		nb, err := b.CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		_ = nb.SetSequence(7)
		return nb.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	// Delete nine topics of ten and empty them.
	for i := 1; i < topics; i++ {
		if err := s.db.Update(func(tx *bolt.Tx) error {
			_, _, err := removeTopic(tx, fmt.Sprintf("t%d", i))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for more := true; more; {
		if err := s.db.Update(func(tx *bolt.Tx) (err error) { more, err = emptyTrash(tx, 512); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Compact(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("compact while the store is open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantSum, wantKeys := dumpFile(t, path)
	res, err := Compact(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compacted %d → %d bytes (live %d, %d keys in %d buckets)", res.Before, res.After, res.Live, res.Keys, res.Buckets)
	if gotSum, gotKeys := dumpFile(t, path); gotSum != wantSum || gotKeys != wantKeys {
		t.Fatalf("compacted file differs: %d keys, want %d", gotKeys, wantKeys)
	}
	if res.After != fileSize(t, path) || res.After > res.Live+res.Live/10 || res.After*4 > res.Before {
		t.Fatalf("compacted %d → %d bytes, live %d", res.Before, res.After, res.Live)
	}
	if pre, err := PreCheck(path); err != nil {
		t.Fatal(err)
	} else if b, _ := os.ReadFile(path); metaFreelist(b, pre.PageSize) == noFreelist {
		t.Fatal("the compacted file has no freelist: its first open would walk the tree")
	}
	if _, err := os.Stat(path + CompactSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file is left: %v", err)
	}
	s = openStore(t, dir, Options{})
	if _, err := s.Commit(context.Background(), []Op{op("t0", 1, "after")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		if off, ok := offsetOfID(tx, "t0-9-99"); !ok || off < 0 {
			return errors.New("a message of the kept topic is gone")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestBackupWhileWriting: a backup taken while publishers commit is a
// store that passes Verify and holds every message committed before it
// began.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 2, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	commit := func(id string) {
		if _, err := s.Commit(context.Background(), []Op{op("t", 0, id)}, nil); err != nil {
			t.Error(err)
		}
	}
	for i := range 200 {
		commit(fmt.Sprintf("before-%d", i))
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // publishers keep going during the backup
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				commit(fmt.Sprintf("during-%d", i))
			}
		}
	}()
	out := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	var announced int64
	n, err := s.Backup(f, func(size int64) { announced = size })
	close(stop)
	<-done
	if err != nil || n != announced {
		t.Fatalf("backup wrote %d of %d bytes: %v", n, announced, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(out); err != nil {
		t.Fatal(err)
	}
	rdir := t.TempDir()
	if err := os.Rename(out, filepath.Join(rdir, FileName)); err != nil {
		t.Fatal(err)
	}
	r := openStore(t, rdir, Options{})
	if err := r.db.View(func(tx *bolt.Tx) error {
		for i := range 200 {
			if _, ok := offsetOfID(tx, fmt.Sprintf("before-%d", i)); !ok {
				return fmt.Errorf("before-%d is not in the backup", i)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
