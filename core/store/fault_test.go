package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestOpenDamagedLeafCountNeverFaults: the element count of leaf pages
// pushed far past their page, opened the default way of a large file (the
// quick pre-check, which reads no tree page, and no bbolt page check:
// FullCheckLimit -1), so that bbolt walks the damage through its mapping
// on Open's own goroutines. The first leaf and the newest ones (the tail
// of the commit log, which the self check decodes) are met by every
// start: each open is a refusal naming the file and a page, the file
// unchanged. A key placed past the file's end faults the mapping: not
// turned into an error, that would kill the test binary (SIGBUS). Issue 23.
func TestOpenDamagedLeafCountNeverFaults(t *testing.T) {
	good := fixture(t)
	pages, ps, _ := pagesOf(t, good)
	leaves := pages["leaf"]
	if len(leaves) < 3 {
		t.Fatalf("the fixture has %d leaf pages", len(leaves))
	}
	refused := 0
	for _, leaf := range []int{leaves[0], leaves[len(leaves)-2], leaves[len(leaves)-1]} {
		for _, bit := range []byte{0x04, 0x80, 0} {
			bad := bytes.Clone(good)
			if bit == 0 {
				// Every element's key 1 GiB on: past the file's end (and within
				// the 2 GiB bbolt allows a slice), where a read faults.
				for i := range int(binary.NativeEndian.Uint16(bad[leaf*ps+10:])) {
					binary.NativeEndian.PutUint32(bad[leaf*ps+16+i*16+4:], 0x40000000)
				}
			} else {
				bad[leaf*ps+11] ^= bit // the count's high byte
			}
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(bad)
			s, err := Open(dir, Options{FullCheckLimit: -1})
			if err == nil {
				s.Close() // damage this start did not reach
				t.Logf("leaf %d bit %#x: opened", leaf, bit)
				continue
			}
			refused++
			t.Logf("leaf %d bit %#x: %v", leaf, bit, err)
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "page ") {
				t.Fatalf("leaf %d bit %#x: %v: want the file and the page named", leaf, bit, err)
			}
			if after, _ := os.ReadFile(path); sha256.Sum256(after) != sum {
				t.Fatalf("leaf %d: a refused open changed the file", leaf)
			}
		}
	}
	if refused == 0 {
		t.Fatal("no damaged open was refused")
	}
}

var faultSink byte

// TestViewFaultNamesThePage: a fault on the mapping in a reader (a read
// past the file's end through bbolt's map, as a damaged page sends it)
// is View's error naming the file and the page, not a crash.
func TestViewFaultNamesThePage(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	info := s.db.Info()
	page := int64(1 << 20) // far past the file's end, inside the mapping
	err := s.View(func(ReadTx) error {
		// The mapping's start, as a pointer (read from the field, not
		// converted from the integer, which vet would rightly flag).
		base := *(*unsafe.Pointer)(unsafe.Pointer(&info.Data))
		faultSink = *(*byte)(unsafe.Add(base, uintptr(page)*uintptr(info.PageSize)))
		return nil
	})
	want := "reading page " + strconv.FormatInt(page, 10)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), s.path) {
		t.Fatalf("got %v, want an error naming %s and %q", err, s.path, want)
	}
	// The store goes on serving.
	if err := s.View(func(tx ReadTx) error { _, err := tx.ListTopics(); return err }); err != nil {
		t.Fatal(err)
	}
}
