package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// fixture builds a real store (enough messages for branch pages in the
// commit log, a freelist page with entries: written the way mqgate did
// before it stopped syncing the freelist) and returns the file's bytes.
func fixture(t *testing.T) []byte { return fixtureFreelist(t, true) }

// fixtureFreelist builds the fixture with the freelist synced at each
// commit (the old setting) or not (today's), then either closed (synced)
// or as a crash leaves it (not synced: the meta page says "no freelist"
// and bbolt rebuilds it on open).
func fixtureFreelist(t *testing.T, synced bool) []byte {
	t.Helper()
	defer func(old bool) { syncFreelist = old }(syncFreelist)
	syncFreelist = synced
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 4, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 300)
	for b := range 30 {
		ops := make([]Op, 100)
		for i := range ops {
			id := fmt.Sprintf("m-%02d-%03d", b, i)
			ops[i] = Op{Topic: "t", QueueID: i % 4, ID: id, Record: EncodeMessage(&core.Message{ID: id, Topic: "t", Body: body})}
		}
		if _, err := s.Commit(context.Background(), ops, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !synced {
		// What a crash leaves: the last commit's meta page says "no
		// freelist" (a clean close writes one).
		b, err := os.ReadFile(filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pagesOf classifies the file's pages the way bbolt sees them (read-only
// open of a copy, never written): id -> "branch", "leaf", "freelist", "free", "meta".
func pagesOf(t *testing.T, file []byte) (pages map[string][]int, pageSize, used int) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(p, file, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read-write (read-only skips the freelist), without syncing the
	// freelist so that opening writes nothing.
	db, err := bolt.Open(p, 0o600, &bolt.Options{NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]int{}
	err = db.View(func(tx *bolt.Tx) error {
		used = int(tx.Size())
		for id := 2; ; {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			out[info.Type] = append(out[info.Type], id)
			if info.Type == "free" {
				id++
			} else {
				id += 1 + info.OverflowCount
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, db.Info().PageSize, used
}

// TestPreCheckRefusesDamage: every kind of damage is a *DamageError naming
// the problem, the healthy file passes, one damaged meta page falls back
// to the other, and the file is never written.
func TestPreCheckRefusesDamage(t *testing.T) {
	for _, synced := range []bool{true, false} {
		t.Run(fmt.Sprintf("freelist synced %v", synced), func(t *testing.T) { testPreCheckRefusesDamage(t, synced) })
	}
}

func testPreCheckRefusesDamage(t *testing.T, synced bool) {
	good := fixtureFreelist(t, synced)
	if !synced {
		res, err := PreCheck(writeTemp(t, good))
		if err != nil {
			t.Fatal(err)
		}
		if got := metaFreelist(good, res.PageSize); got != noFreelist {
			t.Fatalf("a file written without freelist sync has freelist page %d in its meta", got)
		}
	}
	pages, ps, used := pagesOf(t, good)
	good = good[:used] // bbolt grows the file in big steps; the rest is zeros
	if len(pages["branch"]) == 0 || len(pages["leaf"]) == 0 || (synced && len(pages["freelist"]) != 1) {
		t.Fatalf("fixture lacks page kinds: %v", pages)
	}
	branch, leaf := pages["branch"][0], pages["leaf"][len(pages["leaf"])/2]
	fl := -1
	if synced {
		fl = pages["freelist"][0]
	}
	flip := func(off int, mask byte) func([]byte) []byte {
		return func(b []byte) []byte { b[off] ^= mask; return b }
	}
	put32 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.NativeEndian.PutUint32(b[off:], v); return b }
	}
	put64 := func(off int, v uint64) func([]byte) []byte {
		return func(b []byte) []byte { binary.NativeEndian.PutUint64(b[off:], v); return b }
	}
	both := func(a, b func([]byte) []byte) func([]byte) []byte { return func(x []byte) []byte { return b(a(x)) } }
	cut := func(n int) func([]byte) []byte { return func(b []byte) []byte { return b[:n] } }
	elem0 := func(page int) int { return page*ps + pageHeaderSize }
	cases := []struct {
		name   string
		damage func([]byte) []byte
		want   string // "" = passes
		warn   string
	}{
		{"healthy", func(b []byte) []byte { return b }, "", ""},
		{"meta 0 bit flip", flip(16+40, 0x01), "", "meta page 0"},
		{"meta 1 bit flip", flip(ps+16+48, 0x10), "", "meta page 1"},
		{"both metas", both(flip(16+40, 0x01), flip(ps+16+48, 0x10)), "both meta pages are invalid", ""},
		{"branch flag", flip(branch*ps+8, 0x04), fmt.Sprintf("page %d (in bucket", branch), ""},
		{"branch child out of bounds", put64(elem0(branch)+8, 1<<40), fmt.Sprintf("page %d (branch, in bucket", branch), ""},
		{"leaf flag", flip(leaf*ps+8, 0x04), fmt.Sprintf("page %d (in bucket", leaf), ""},
		{"leaf key size", put32(elem0(leaf)+8, 1<<20), "runs past the page", ""},
		{"leaf element count", put32(leaf*ps+10, 0xfff0), "elements, more than fit", ""},
		{"freelist flag", flip(max(fl, 0)*ps+8, 0x04), "(the freelist) has an invalid flag", ""},
		{"freelist count", func(b []byte) []byte { binary.NativeEndian.PutUint16(b[max(fl, 0)*ps+10:], 0xfff0); return b }, "(the freelist) lists", ""},
		{"truncated below two pages", cut(ps + 100), "truncated", ""},
		{"truncated mid-file", cut(used / 2), "was truncated", ""},
		{"truncated one page short", cut(used - ps), "was truncated", ""},
		{"random bytes", func(b []byte) []byte {
			r := bytes.Repeat([]byte{0x5a, 0xc3, 0x17, 0x99, 0x01}, len(b)/5)
			return r
		}, "not a bbolt file", ""},
	}
	for _, c := range cases {
		if fl < 0 && strings.HasPrefix(c.name, "freelist") {
			continue // no freelist page to damage
		}
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			damaged := c.damage(bytes.Clone(good))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			before := sha256.Sum256(damaged)
			res, err := PreCheck(path)
			after, rerr := os.ReadFile(path)
			if rerr != nil || sha256.Sum256(after) != before {
				t.Fatalf("the pre-check changed the file (%v)", rerr)
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused a file bbolt would open: %v", err)
				}
				if !strings.Contains(res.Warning, c.warn) || (c.warn == "") != (res.Warning == "") {
					t.Fatalf("warning %q, want one naming %q", res.Warning, c.warn)
				}
				return
			}
			var de *DamageError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a DamageError", err)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and %q", err, path, c.want)
			}
		})
	}
}

// TestOpenRefusesWithoutWriting: Open refuses a damaged file before bbolt
// maps it, leaving its bytes as they were; one damaged meta page opens
// with the other and keeps every message.
func TestOpenRefusesWithoutWriting(t *testing.T) {
	good := fixture(t)
	_, ps, used := pagesOf(t, good)
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	bad := bytes.Clone(good[:used-ps])
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("open of a truncated file: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, bad) {
		t.Fatal("a refused open changed the file")
	}

	meta0 := bytes.Clone(good)
	meta0[16+40] ^= 1
	if err := os.WriteFile(path, meta0, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, Options{})
	var n int
	if err := s.db.View(func(tx *bolt.Tx) error {
		n = countRecords(tx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 3000 {
		t.Fatalf("opened with meta page 1: %d records, want 3000", n)
	}
}

// TestOpenAfterFreelistAbandoned: the documented salvage for a damaged
// freelist (bbolt surgery freelist abandon: both meta pages say "no
// freelist") passes the pre-check, and bbolt rebuilds the freelist.
func TestOpenAfterFreelistAbandoned(t *testing.T) {
	good := fixture(t)
	pages, ps, _ := pagesOf(t, good)
	fl := pages["freelist"][0]
	b := bytes.Clone(good)
	b[fl*ps+8] ^= 0x04 // the damage: refused as it is
	for _, off := range []int{0, ps} {
		m := b[off+pageHeaderSize:]
		binary.NativeEndian.PutUint64(m[32:], noFreelist)
		binary.NativeEndian.PutUint64(m[56:], fnv64a(m[:56]))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, Options{})
	var n int
	if err := s.db.View(func(tx *bolt.Tx) error {
		n = countRecords(tx)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 3000 {
		t.Fatalf("%d records after the freelist was abandoned, want 3000", n)
	}
	if _, err := s.Commit(context.Background(), []Op{op("t", 0, "after")}, nil); err != nil {
		t.Fatal(err)
	}
}

func fnv64a(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// TestSelfCheckRefusesWithoutWriting: damage only mqgate's own structures
// show (a queue range that makes no sense) passes the pre-check and is
// refused by the self check, which runs before the first write: the file
// is unchanged.
func TestSelfCheckRefusesWithoutWriting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, fixture(t), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketQueues).Cursor().First()
		return tx.Bucket(bucketQueues).Put(bytes.Clone(k), queueMeta{Min: 9, Max: 3}.encode())
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PreCheck(path); err != nil {
		t.Fatalf("the pre-check sees bbolt's pages only, yet: %v", err)
	}
	_, err = Open(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "range [9, 3)") {
		t.Fatalf("open: %v, want a refusal naming the file and the queue range", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the refused open wrote to the file")
	}
}

// TestPreCheckQuick: a cleanly closed file (its meta lists the freelist
// the store syncs only in Close) is checked without the page walk: its
// meta pages, size and freelist still are, so truncation and a damaged
// freelist are refused, while a page damaged at rest is left to PreCheck
// (--full-check). A file without a synced freelist (a crash) gets the
// full walk.
func TestPreCheckQuick(t *testing.T) {
	for _, synced := range []bool{true, false} {
		good := fixtureFreelist(t, synced)
		pages, ps, used := pagesOf(t, good)
		leaf := pages["leaf"][len(pages["leaf"])/2]
		res, err := PreCheckQuick(writeTemp(t, good))
		if err != nil || res.Quick != synced {
			t.Fatalf("synced %v: quick %v, err %v; want quick only for a cleanly closed file", synced, res.Quick, err)
		}
		leafDamaged := bytes.Clone(good)
		leafDamaged[leaf*ps+8] ^= 0x04
		_, err = PreCheckQuick(writeTemp(t, leafDamaged))
		if synced && err != nil {
			t.Fatalf("the quick check walked the pages of a cleanly closed file: %v", err)
		}
		if !synced && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("page %d", leaf))) {
			t.Fatalf("a damaged leaf of a crashed file passed: %v", err)
		}
		if _, err := PreCheck(writeTemp(t, leafDamaged)); err == nil {
			t.Fatal("the full check passed a damaged leaf")
		}
		if _, err := PreCheckQuick(writeTemp(t, bytes.Clone(good[:used-ps]))); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("synced %v: the quick check passed a truncated file: %v", synced, err)
		}
		if synced {
			fl := bytes.Clone(good)
			fl[pages["freelist"][0]*ps+8] ^= 0x04
			if _, err := PreCheckQuick(writeTemp(t, fl)); err == nil || !strings.Contains(err.Error(), "freelist") {
				t.Fatalf("the quick check passed a damaged freelist: %v", err)
			}
		}
	}
}
