package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Store integrity at start (SPEC §8 item 12): the real binary refuses a
// damaged store with a clear message naming the file and the problem, exit
// status 1, no crash, and leaves the file's bytes as they were.

const (
	dbFile  = "mqgate.db"
	keyFile = "gateway.key"
)

// damageFixture is a real store made by the binary: topic "t" with n
// messages, then one more transaction (topic "last") so that losing the
// newest commit to a damaged meta page loses no message of "t".
type damageFixture struct {
	db, key  []byte
	n        int
	pageSize int
	used     int              // high-water mark × page size
	pages    map[string][]int // bbolt's page types: branch, leaf, freelist, free
}

func makeDamageFixture(t *testing.T) *damageFixture {
	t.Helper()
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "t", 4)
	f := &damageFixture{n: 3000}
	body := strings.Repeat("x", 300)
	for b := 0; b < f.n/500; b++ {
		msgs := make([]map[string]any, 500)
		for i := range msgs {
			msgs[i] = map[string]any{"body": fmt.Sprintf("%s-%d-%d", body, b, i)}
		}
		want(t, s.do(t, "POST", "/v1/topics/t/messages/batch", map[string]any{"messages": msgs}), http.StatusCreated)
	}
	createTopic(t, s, "last", 1)
	s.stop(t)
	var err error
	if f.db, err = os.ReadFile(filepath.Join(dir, dbFile)); err != nil {
		t.Fatal(err)
	}
	if f.key, err = os.ReadFile(filepath.Join(dir, keyFile)); err != nil {
		t.Fatal(err)
	}
	f.classify(t)
	return f
}

// classify finds the pages' types the way bbolt sees them, on a copy.
// It opens the copy with bbolt itself, not the store: it needs bbolt's
// page-level view (Tx.Page) to damage pages of each type.
func (f *damageFixture) classify(t *testing.T) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(p, f.db, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(p, 0o600, &bolt.Options{Timeout: time.Second}) // read-only would skip the freelist
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f.pageSize = db.Info().PageSize
	f.pages = map[string][]int{}
	err = db.View(func(tx *bolt.Tx) error {
		f.used = int(tx.Size())
		for id := 2; ; {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			f.pages[info.Type] = append(f.pages[info.Type], id)
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
	if len(f.pages["branch"]) == 0 || len(f.pages["leaf"]) == 0 || len(f.pages["freelist"]) != 1 {
		t.Fatalf("the fixture lacks page kinds: %v", f.pages)
	}
}

// dataDir writes a data dir holding db (and the key unless noKey).
func (f *damageFixture) dataDir(t *testing.T, db []byte, noKey bool) string {
	t.Helper()
	dir := t.TempDir()
	if !noKey {
		if err := os.WriteFile(filepath.Join(dir, keyFile), f.key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if db != nil {
		if err := os.WriteFile(filepath.Join(dir, dbFile), db, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runRefused starts mqgate serve on dir and expects it to exit 1 on its
// own; it returns stderr.
func runRefused(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--log-format", "json"}, extra...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mqgate did not exit within 30s on a damaged store:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
	}
	out := stderr.String()
	for _, crash := range []string{"panic", "goroutine ", "SIGBUS", "fatal error", "DATA RACE"} {
		if strings.Contains(out, crash) {
			t.Fatalf("stderr shows a crash (%q), not a refusal:\n%s", crash, out)
		}
	}
	return out
}

func TestStoreDamageMatrix(t *testing.T) {
	f := makeDamageFixture(t)
	ps := f.pageSize
	branch := f.pages["branch"][0]
	leaf := f.pages["leaf"][len(f.pages["leaf"])/2]
	freelist := f.pages["freelist"][0]
	flip := func(offs ...int) func([]byte) []byte {
		return func(b []byte) []byte {
			for _, o := range offs {
				b[o] ^= 0x04
			}
			return b
		}
	}
	cut := func(n int) func([]byte) []byte { return func(b []byte) []byte { return b[:n] } }
	meta0, meta1 := 16+40, ps+16+40 // a bit of the high-water mark: the checksum no longer matches
	// crashed makes the fixture look like a store killed while serving:
	// neither meta page lists a synced freelist (the store writes it only
	// in Close), so start-up reads every page without --full-check.
	crashed := func(damage func([]byte) []byte) func([]byte) []byte {
		return func(b []byte) []byte {
			b = damage(b)
			for _, off := range []int{0, ps} {
				m := b[off+16:]
				binary.NativeEndian.PutUint64(m[32:], ^uint64(0))
				h := fnv.New64a()
				h.Write(m[:56])
				binary.NativeEndian.PutUint64(m[56:], h.Sum64())
			}
			return b
		}
	}
	// Page damage runs at the default start and with --full-check (the
	// expansion below): a cleanly closed file small enough for bbolt's
	// own page check is read page by page at any start (issue 23).
	full := []string{"--full-check"}
	type damageCase = struct {
		name   string
		damage func([]byte) []byte
		noKey  bool
		want   []string
		args   []string
	}
	cases := []damageCase{
		{"both meta pages", flip(meta0, meta1), false, []string{"both meta pages are invalid", "checksum mismatch"}, nil},
		{"branch page", flip(branch*ps + 8), false, []string{fmt.Sprintf("page %d (in bucket", branch), "invalid flag"}, full},
		{"leaf page", flip(leaf*ps + 8), false, []string{fmt.Sprintf("page %d (in bucket", leaf), "invalid flag"}, full},
		{"leaf page after a crash", crashed(flip(leaf*ps + 8)), false, []string{fmt.Sprintf("page %d (in bucket", leaf), "invalid flag"}, nil},
		{"leaf element", func(b []byte) []byte {
			binary.NativeEndian.PutUint32(b[leaf*ps+16+8:], 1<<20) // element 0's key size
			return b
		}, false, []string{fmt.Sprintf("page %d (leaf, in bucket", leaf), "runs past the page"}, full},
		{"freelist page", flip(freelist*ps + 8), false, []string{fmt.Sprintf("page %d (the freelist) has an invalid flag", freelist)}, nil},
		{"truncated below two pages", cut(ps + 1000), false, []string{"was truncated"}, nil},
		{"truncated mid-file", cut(f.used / 2), false, []string{fmt.Sprintf("the file is %d bytes but its meta page", f.used/2), "was truncated"}, nil},
		{"truncated one page short", cut(f.used - ps), false, []string{"was truncated"}, nil},
		{"random bytes", func(b []byte) []byte {
			r := rand.New(rand.NewPCG(9, 12))
			out := make([]byte, 1<<20)
			for i := range out {
				out[i] = byte(r.Uint32())
			}
			return out
		}, false, []string{"not a bbolt file"}, nil},
		{"0-byte file beside gateway.key", cut(0), false, []string{"is empty (0 bytes)", keyFile, "--init"}, nil},
		{"missing file beside gateway.key", nil, false, []string{"is missing", keyFile, "--init"}, nil},
		{"leaf element count", func(b []byte) []byte {
			b[f.pages["leaf"][0]*ps+11] ^= 0x04 // the count's high byte: 1024 elements more
			return b
		}, false, []string{fmt.Sprintf("page %d (leaf, in bucket", f.pages["leaf"][0]), "elements"}, full},
	}
	for _, c := range slices.Clone(cases) {
		if c.args != nil {
			c.name, c.args = c.name+" at the default start", nil
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var damaged []byte
			if c.damage != nil {
				damaged = c.damage(bytes.Clone(f.db))
			}
			dir := f.dataDir(t, damaged, c.noKey)
			path := filepath.Join(dir, dbFile)
			before := sha256.Sum256(damaged)
			out := runRefused(t, dir, c.args...)
			for _, w := range append([]string{path}, c.want...) {
				if !strings.Contains(out, w) {
					t.Fatalf("stderr does not say %q:\n%s", w, out)
				}
			}
			after, err := os.ReadFile(path)
			if c.damage == nil {
				if !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a refused start created %s (%v)", path, err)
				}
				return
			}
			if err != nil || sha256.Sum256(after) != before {
				t.Fatalf("a refused start changed %s (%v)", path, err)
			}
		})
	}
}

// One damaged meta page is not fatal: bbolt keeps two so that a torn meta
// write loses nothing acknowledged. The store opens with the other (logging
// a warning that names the page) and every message of "t" is there.
// A 0-byte store beside gateway.key starts empty with MQGATE_INIT=true.
func TestStoreDamageOneMetaOpens(t *testing.T) {
	f := makeDamageFixture(t)
	for _, page := range []int{0, 1} {
		t.Run(fmt.Sprintf("meta page %d", page), func(t *testing.T) {
			db := bytes.Clone(f.db)
			db[page*f.pageSize+16+40] ^= 0x04
			s := startServer(t, f.dataDir(t, db, false))
			if !strings.Contains(s.Logs(), fmt.Sprintf("meta page %d of %s is invalid", page, filepath.Join(s.dir, dbFile))) {
				t.Fatalf("no warning naming meta page %d:\n%s", page, s.Logs())
			}
			var tp struct {
				Stats struct {
					Messages int64 `json:"messages"`
					Corrupt  int64 `json:"corrupt"`
				} `json:"stats"`
			}
			r := s.do(t, "GET", "/v1/topics/t", nil)
			want(t, r, http.StatusOK)
			r.JSON(t, &tp)
			if tp.Stats.Messages != int64(f.n) || tp.Stats.Corrupt != 0 {
				t.Fatalf("opened with the other meta page: %s, want %d messages", r.Body, f.n)
			}
		})
	}
	t.Run("0-byte file with MQGATE_INIT", func(t *testing.T) {
		t.Setenv("MQGATE_INIT", "true")
		s := startServer(t, f.dataDir(t, []byte{}, false))
		want(t, s.do(t, "GET", "/v1/topics/t", nil), http.StatusNotFound)
	})
	t.Run("brand-new data dir without --init", func(t *testing.T) {
		s := startServer(t, t.TempDir())
		want(t, s.do(t, "GET", "/v1/topics", nil), http.StatusOK)
	})
}
