package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// writeTemp writes b as a store file in a fresh directory and returns its path.
func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// metaFreelist is the freelist page id of the newer meta page.
func metaFreelist(file []byte, pageSize int) uint64 {
	m0, m1 := file[pageHeaderSize:], file[pageSize+pageHeaderSize:]
	if ne.Uint64(m1[48:]) > ne.Uint64(m0[48:]) {
		return ne.Uint64(m1[32:])
	}
	return ne.Uint64(m0[32:])
}

// freePages opens the store in dir and reports bbolt's free page count
// (the freelist as rebuilt or read on open) and the commit log's size;
// it then commits one message and returns the file as a crash right
// after that commit would leave it, before closing the store cleanly.
func freePages(t *testing.T, dir string) (free, records int, crashed []byte) {
	t.Helper()
	s := openStore(t, dir, Options{})
	if err := s.db.View(func(tx *bolt.Tx) error {
		records = countRecords(tx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	free = s.db.Stats().FreePageN
	if _, err := s.Commit(context.Background(), []Op{op("t", 0, fmt.Sprintf("after-%d", records))}, nil); err != nil {
		t.Fatal(err)
	}
	crashed, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return free, records, crashed
}

// TestFreelistNotSynced: a file written with the freelist synced at every
// commit (mqgate before) and one a crash left without a freelist (today)
// both pass the pre-check and open with every record, bbolt finding at
// least the free pages the synced freelist listed; commits do not write
// the freelist (a crash image's meta says "no freelist", and it reopens
// with the freelist rebuilt), a clean close writes it (the pre-check
// then checks it, and the next open reads it).
func TestFreelistNotSynced(t *testing.T) {
	for _, synced := range []bool{true, false} {
		name := map[bool]string{true: "written with the freelist synced", false: "left by a crash without a freelist"}[synced]
		t.Run(name, func(t *testing.T) {
			file := fixtureFreelist(t, synced)
			path := writeTemp(t, file)
			dir := filepath.Dir(path)
			res, err := PreCheck(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := metaFreelist(file, res.PageSize); (got != noFreelist) != synced {
				t.Fatalf("fixture's freelist page %d", got)
			}
			listed := -1
			if synced {
				// What the synced freelist says (bbolt reads it, no rebuild).
				db, err := bolt.Open(writeTemp(t, file), 0o600, &bolt.Options{NoFreelistSync: true})
				if err != nil {
					t.Fatal(err)
				}
				listed = db.Stats().FreePageN
				db.Close()
			}
			free, n, crashed := freePages(t, dir)
			if n != 3000 {
				t.Fatalf("%d records, want 3000", n)
			}
			if free == 0 || (listed >= 0 && free < listed) {
				t.Fatalf("%d free pages after open (the synced freelist listed %d)", free, listed)
			}
			if fl := metaFreelist(crashed, res.PageSize); fl != noFreelist {
				t.Fatalf("after a commit the meta page names freelist page %d, want none", fl)
			}
			closed, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if fl := metaFreelist(closed, res.PageSize); fl == noFreelist {
				t.Fatal("a clean close wrote no freelist")
			}
			for _, f := range []struct {
				what string
				path string
			}{{"closed", path}, {"crashed", writeTemp(t, crashed)}} {
				if _, err := PreCheck(f.path); err != nil {
					t.Fatalf("%s: %v", f.what, err)
				}
				if free, n, _ := freePages(t, filepath.Dir(f.path)); n != 3001 || free == 0 {
					t.Fatalf("%s, reopened: %d records and %d free pages, want 3001 and some", f.what, n, free)
				}
			}
		})
	}
}

// TestCloseWithoutLogWritesFreelist: without the log-ahead (a benchmark
// setting), Close still writes the freelist, so the next open reads it
// (the quick pre-check) instead of walking the tree.
func TestCloseWithoutLogWritesFreelist(t *testing.T) {
	defer func(old bool) { useWAL = old }(useWAL)
	useWAL = false
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	mustTopic(t, s, "t", 2)
	commitN(t, s, "t", 2, 100, 10, "m")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := PreCheckQuick(filepath.Join(dir, FileName))
	if err != nil || !res.Quick {
		t.Fatalf("after a close without the log-ahead: quick pre-check %v, %v; want a freelist", res.Quick, err)
	}
}
