package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestOpenDamagedLeafCountNeverFaults: the element count of every leaf
// page in turn pushed far past its page, opened the default way of a
// large file (the quick pre-check, which reads no tree page, and no
// bbolt page check: FullCheckLimit -1), so that bbolt walks the damage
// through its mapping on Open's own goroutines. Each open is a refusal
// naming the file and a page, the file unchanged; a fault not turned
// into an error would kill the test binary (SIGBUS). Issue 23.
func TestOpenDamagedLeafCountNeverFaults(t *testing.T) {
	good := fixture(t)
	pages, ps, _ := pagesOf(t, good)
	leaves := pages["leaf"]
	if len(leaves) == 0 {
		t.Fatal("the fixture has no leaf page")
	}
	if len(leaves) > 6 { // a spread of them: each open reads the file
		spread := make([]int, 6)
		for i := range spread {
			spread[i] = leaves[i*len(leaves)/6]
		}
		leaves = spread
	}
	refused := 0
	for _, leaf := range leaves {
		for _, bit := range []byte{0x04, 0x80} {
			bad := bytes.Clone(good)
			bad[leaf*ps+11] ^= bit // the count's high byte
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(bad)
			s, err := Open(dir, Options{FullCheckLimit: -1})
			if err == nil {
				// Damage the start did not reach: a reader that meets it
				// gets an error, never a fault (View's guard).
				err := s.View(func(tx ReadTx) error { tx.CountRecords(); return nil })
				s.Close()
				if err != nil && !strings.Contains(err.Error(), path) {
					t.Fatalf("leaf %d bit %#x: a reader meeting the damage: %v, want the file named", leaf, bit, err)
				}
				continue
			}
			refused++
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "page ") {
				t.Fatalf("leaf %d bit %#x: %v: want the file and the page named", leaf, bit, err)
			}
			if after, _ := os.ReadFile(path); sha256.Sum256(after) != sum {
				t.Fatalf("leaf %d: a refused open changed the file", leaf)
			}
		}
	}
	t.Logf("%d leaf pages, %d damaged opens refused", len(leaves), refused)
	if refused == 0 {
		t.Fatal("no damaged open was refused")
	}
}

var faultSink byte

// TestGuardReadNamesThePage: a fault on the mapping (a read past the
// file's end through bbolt's map) becomes a *ReadFault naming the page.
func TestGuardReadNamesThePage(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	info := s.db.Info()
	page := int64(1 << 20) // far past the file's end, inside the mapping
	err := guardRead(s.db, s.path, func() error {
		// The mapping's start, as a pointer (read from the field, not
		// converted from the integer, which vet would rightly flag).
		base := *(*unsafe.Pointer)(unsafe.Pointer(&info.Data))
		faultSink = *(*byte)(unsafe.Add(base, uintptr(page)*uintptr(info.PageSize)))
		return nil
	})
	var rf *ReadFault
	if !errors.As(err, &rf) || !rf.Fault || rf.Page != page || !strings.Contains(err.Error(), "page "+strconv.FormatInt(page, 10)) {
		t.Fatalf("got %v, want a fault naming page %d", err, page)
	}
}
