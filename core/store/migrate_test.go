package store

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// v1Fixture copies testdata/v1.db.gz (a file written by layout version
// 1's code, testdata/README.md) into a new data dir and returns its path.
func v1Fixture(t *testing.T) string {
	t.Helper()
	f, err := os.Open("testdata/v1.db.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestMigrateV1Fixture: a file written by version 1's code passes Verify
// as it is, is migrated to version 2 by Open, and then holds every topic,
// queue range, message, id and key entry, set-aside record, deleted
// topic's trash and other package's bucket it held; it takes appends and
// opens again without migrating.
func TestMigrateV1Fixture(t *testing.T) {
	path := v1Fixture(t)
	dir := filepath.Dir(path)
	if _, err := Verify(path); err != nil {
		t.Fatalf("v1 file refused by the check: %v", err)
	}
	s := openStore(t, dir, Options{SegmentBytes: 32 << 10})
	if _, err := os.Stat(path + MigrateSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("migration file left: %v", err)
	}
	check := func(s *Store, extra int) {
		t.Helper()
		if err := s.db.View(func(tx *bolt.Tx) error {
			if v, err := layoutVersion(tx); err != nil || v != formatVersion {
				t.Errorf("layout version %d %v", v, err)
			}
			for _, b := range [][]byte{bucketCommitLogV1, bucketCQV1, bucketTopicsV1, bucketIDsV1, bucketKeysV1} {
				if k, _ := tx.Bucket(b).Cursor().First(); k != nil {
					t.Errorf("version 1 bucket %s is not empty", b)
				}
			}
			if segs, _ := listSegments(tx); len(segs) < 2 {
				t.Errorf("%d segments", len(segs))
			}
			topics, err := listTopics(tx)
			if err != nil {
				return err
			}
			want := map[string]int{"%DLQ%grp": 5, "orders": 360 + extra, "short": 80}
			if len(topics) != len(want) {
				t.Errorf("topics %+v", topics)
			}
			for _, tr := range topics {
				n := 0
				for q := range tr.Queues {
					lo, hi, err := queueRange(tx, tr.UID, q)
					if err != nil {
						return err
					}
					if err := scanQueue(tx, tr.UID, q, 0, func(off int64, u Unit) bool {
						m, err := messageAt(tx, u.CommitLogOffset)
						if err != nil && !isSetAside(tx, u.CommitLogOffset) {
							t.Errorf("%s/%d/%d: %v", tr.Name, q, off, err)
						} else if err == nil && (m.Topic != tr.Name || m.QueueID != q || m.QueueOffset != off) {
							t.Errorf("%s/%d/%d holds %s/%d/%d", tr.Name, q, off, m.Topic, m.QueueID, m.QueueOffset)
						}
						n++
						return true
					}); err != nil {
						return err
					}
					if tr.Name == "short" && q == 0 && lo != 20 {
						t.Errorf("short/0 min %d, want 20", lo)
					}
					_ = hi
				}
				if n != want[tr.Name] {
					t.Errorf("topic %s: %d messages, want %d", tr.Name, n, want[tr.Name])
				}
				if tr.Name == "orders" && (tr.Queues != 6 || len(tr.Layouts) != 1) {
					t.Errorf("orders: %d queues, layouts %+v", tr.Queues, tr.Layouts)
				}
			}
			cl, ok := offsetOfID(tx, "p-0059")
			if m, err := messageAt(tx, cl); !ok || err != nil || m.ID != "p-0059" {
				t.Errorf("id look-up: %v %v", ok, err)
			}
			if n := len(offsetsOfKey(tx, "orders", "k3", 100)); n != 36 {
				t.Errorf("key k3: %d entries, want 36", n)
			}
			bad, ok := offsetOfID(tx, "o-0100")
			if !ok || !isSetAside(tx, bad) {
				t.Error("the set-aside record is no longer set aside")
			}
			if !hasTrash(tx) {
				t.Error("the deleted topic's trash entry is gone")
			}
			if v := tx.Bucket([]byte("grp.offsets")).Get([]byte("g/orders/0")); string(v) != "12" {
				t.Errorf("another package's bucket: %q", v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	check(s, 0)
	if _, err := s.Commit(context.Background(), []Op{op("orders", 5, "after")}, nil); err != nil {
		t.Fatal(err)
	}
	// The deleted topic's units go with their segments.
	for more := true; more; {
		if err := s.db.Update(func(tx *bolt.Tx) (err error) { more, err = emptyTrash(tx, 512); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, path)
	if _, err := Verify(path); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	check(s, 1)
	s.Close()
	if fileSum(t, path) == sum {
		t.Log("reopened without rewriting") // a plain open writes only its init transaction
	}
}

// TestMigrationKilledHalfway: a migration killed (SIGKILL) after some of
// its transactions leaves the version 1 file byte for byte as it was; the
// next Open removes the partial file and migrates from the start.
func TestMigrationKilledHalfway(t *testing.T) {
	if dir := os.Getenv("MQGATE_MIGRATE_CRASH_DIR"); dir != "" {
		compactTxBytes = 8 << 10
		migrateHook = func(txs int) {
			if txs == 3 {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		Open(dir, Options{SegmentBytes: 16 << 10})
		t.Fatal("the migration was not killed")
	}
	path := v1Fixture(t)
	dir := filepath.Dir(path)
	sum := fileSum(t, path)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrationKilledHalfway$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MQGATE_MIGRATE_CRASH_DIR="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if _, err := os.Stat(path + MigrateSuffix); err != nil {
		t.Fatalf("no partial migration file: %v", err)
	}
	if fileSum(t, path) != sum {
		t.Fatal("the killed migration changed the version 1 file")
	}
	s := openStore(t, dir, Options{})
	if _, err := os.Stat(path + MigrateSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial migration file left: %v", err)
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		if _, ok := offsetOfID(tx, "o-0299"); !ok {
			t.Error("a message is missing after the migration")
		}
		v, err := layoutVersion(tx)
		if v != 2 {
			t.Errorf("version %d %v", v, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestVersionChecks: a file of a newer layout is refused, unchanged, by
// its version; and a version 2 file passes version 1's self check (it
// finds no topic in the v1 buckets) so that a v1 binary reaches its
// format check and refuses the file as "unsupported store format"
// instead of calling it damaged.
func TestVersionChecks(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	mustTopic(t, s, "t", 2)
	commitN(t, s, "t", 2, 10, 5, "m")
	if err := s.db.View(func(tx *bolt.Tx) error {
		return checkV1(tx, func(CorruptRecord) { t.Error("v1 check noted a record") })
	}); err != nil {
		t.Fatalf("a v1 binary would call the v2 file damaged: %v", err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyFormat, []byte{3}) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(dir, FileName)
	sum := fileSum(t, path)
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "newer mqgate") {
		t.Fatalf("open of a newer layout: %v", err)
	}
	if _, err := Verify(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("verify of a newer layout: %v", err)
	}
	if fileSum(t, path) != sum {
		t.Fatal("the refused file was changed")
	}
}
