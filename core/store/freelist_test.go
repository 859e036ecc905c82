package store

import (
	"context"
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
// (the freelist as rebuilt or read on open) and the commit log's size.
func freePages(t *testing.T, dir string) (free, records int) {
	t.Helper()
	s := openStore(t, dir, Options{})
	if err := s.DB().View(func(tx *bolt.Tx) error {
		records = tx.Bucket(bucketCommitLog).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	free = s.DB().Stats().FreePageN
	if _, err := s.Commit(context.Background(), []Op{op("t", 0, "after")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return free, records
}

// TestFreelistNotSynced: a file written with the freelist synced at every
// commit (mqgate before) and one written without (today) both pass the
// pre-check and open with every record; the freelist bbolt rebuilds on
// open finds the same free pages the synced one listed; after a commit
// with today's setting the meta page says "no freelist", and the file
// still passes the pre-check and reopens.
func TestFreelistNotSynced(t *testing.T) {
	for _, synced := range []bool{true, false} {
		name := map[bool]string{true: "written with the freelist synced", false: "written without"}[synced]
		t.Run(name, func(t *testing.T) {
			path := writeTemp(t, fixtureFreelist(t, synced))
			dir := filepath.Dir(path)
			res, err := PreCheck(path)
			if err != nil {
				t.Fatal(err)
			}
			listed := -1
			if synced {
				// What the synced freelist says (bbolt reads it, no rebuild).
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				db, err := bolt.Open(writeTemp(t, b), 0o600, &bolt.Options{NoFreelistSync: true})
				if err != nil {
					t.Fatal(err)
				}
				listed = db.Stats().FreePageN
				db.Close()
			}
			free, n := freePages(t, dir)
			if n != 3000 {
				t.Fatalf("%d records, want 3000", n)
			}
			if free == 0 || (listed >= 0 && free < listed) {
				t.Fatalf("%d free pages after open (the synced freelist listed %d)", free, listed)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if fl := metaFreelist(after, res.PageSize); fl != noFreelist {
				t.Fatalf("after a commit the meta page names freelist page %d, want none", fl)
			}
			if _, err := PreCheck(path); err != nil {
				t.Fatal(err)
			}
			if _, n := freePages(t, dir); n != 3001 {
				t.Fatalf("reopened: %d records, want 3001", n)
			}
		})
	}
}
