package lazyfs

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// rig is a backing directory and its mount, remounted after each cut.
type rig struct {
	t       *testing.T
	backing string
	mnt     string
	fs      *FS
}

func newRig(t *testing.T) *rig {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse (%v): FUSE tests need it", err)
	}
	r := &rig{t: t, backing: t.TempDir(), mnt: t.TempDir()}
	r.mount()
	t.Cleanup(func() {
		if r.fs != nil {
			if err := r.fs.Unmount(); err != nil {
				t.Error(err)
			}
		}
	})
	return r
}

func (r *rig) mount() {
	r.t.Helper()
	l, err := Mount(r.backing, r.mnt)
	if err != nil {
		r.t.Fatal(err)
	}
	r.fs = l
}

// cut cuts the power, unmounts and mounts again.
func (r *rig) cut(o CutOptions) CutReport {
	r.t.Helper()
	rep, err := r.fs.Cut(o)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.fs.Unmount(); err != nil {
		r.t.Fatal(err)
	}
	r.fs = nil
	r.mount()
	return rep
}

func (r *rig) path(name string) string { return filepath.Join(r.mnt, name) }

func (r *rig) syncDir(rel string) {
	r.t.Helper()
	d, err := os.Open(filepath.Join(r.mnt, rel))
	if err != nil {
		r.t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		r.t.Fatal(err)
	}
}

// create writes a file, fsyncs it and (when durable) its directory.
func (r *rig) create(name string, data []byte, durable bool) {
	r.t.Helper()
	f, err := os.OpenFile(r.path(name), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		r.t.Fatal(err)
	}
	if durable {
		r.syncDir(filepath.Dir(name))
	}
}

func (r *rig) read(name string) ([]byte, error) { return os.ReadFile(r.path(name)) }

func (r *rig) mustRead(name string) []byte {
	r.t.Helper()
	b, err := r.read(name)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func TestCutDropsUnsyncedContents(t *testing.T) {
	r := newRig(t)
	synced := pattern(3*pageSize+100, 1)
	r.create("f", synced, true)
	f, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Overwrite a page, append two: all visible before the cut.
	if _, err := f.WriteAt(pattern(pageSize, 9), pageSize); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(pattern(2*pageSize, 5), int64(len(synced))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := r.mustRead("f"); len(got) != len(synced)+2*pageSize || !bytes.Equal(got[pageSize:2*pageSize], pattern(pageSize, 9)) {
		t.Fatalf("before the cut: %d bytes, want the writes visible", len(got))
	}
	rep := r.cut(CutOptions{})
	if rep.PagesLost != 4 || rep.PagesKept != 0 || rep.FilesUnsynced != 1 {
		t.Fatalf("report %+v, want 4 pages lost (1, 3, 4, 5) of 1 file", rep)
	}
	if got := r.mustRead("f"); !bytes.Equal(got, synced) {
		t.Fatalf("after the cut: %d bytes, want the %d synced", len(got), len(synced))
	}
}

func TestSyncedContentsSurvive(t *testing.T) {
	r := newRig(t)
	r.create("f", pattern(100, 1), true)
	f, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := pattern(5*pageSize, 3)
	if _, err := f.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r.cut(CutOptions{})
	if got := r.mustRead("f"); !bytes.Equal(got, want) {
		t.Fatalf("after fdatasync and a cut: %d bytes, want %d", len(got), len(want))
	}
}

func TestNameNeedsDirectorySync(t *testing.T) {
	r := newRig(t)
	r.create("both", []byte("b"), true)
	r.create("synced-file-only", []byte("a"), false)
	r.cut(CutOptions{})
	if _, err := r.read("synced-file-only"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file synced in a directory never synced: %v, want it gone", err)
	}
	if got := r.mustRead("both"); string(got) != "b" {
		t.Fatalf("got %q", got)
	}
	// A name synced before its contents: the name survives, empty.
	f, err := os.Create(r.path("name-only"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("lost"); err != nil {
		t.Fatal(err)
	}
	r.syncDir(".")
	f.Close()
	r.cut(CutOptions{})
	if got, err := r.read("name-only"); err != nil || len(got) != 0 {
		t.Fatalf("a name synced without its contents: %q %v, want an empty file", got, err)
	}
}

func TestRenameAndUnlinkNeedDirectorySync(t *testing.T) {
	r := newRig(t)
	r.create("a", []byte("A"), true)
	r.create("b", []byte("B"), true)
	r.create("c", []byte("C"), true)
	if err := os.Rename(r.path("a"), r.path("a2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.path("c"), r.path("b")); err != nil { // over b
		t.Fatal(err)
	}
	if err := os.Remove(r.path("b")); err == nil {
		if err := os.Rename(r.path("a2"), r.path("b")); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Fatal(err)
	}
	names := func() []string {
		ents, err := os.ReadDir(r.mnt)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			b := r.mustRead(e.Name())
			out = append(out, e.Name()+"="+string(b))
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"b=A"}) {
		t.Fatalf("before the cut: %v", got)
	}
	r.cut(CutOptions{})
	if got := names(); !slices.Equal(got, []string{"a=A", "b=B", "c=C"}) {
		t.Fatalf("after a cut with the directory unsynced: %v, want the old names", got)
	}
	if err := os.Rename(r.path("a"), r.path("b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.path("c")); err != nil {
		t.Fatal(err)
	}
	r.syncDir(".")
	r.cut(CutOptions{})
	if got := names(); !slices.Equal(got, []string{"b=A"}) {
		t.Fatalf("after a cut with the directory synced: %v", got)
	}
}

// The store's pattern: write a temporary file, fsync it, rename it over
// the real one, fsync the directory.
func TestAtomicReplace(t *testing.T) {
	r := newRig(t)
	if err := os.Mkdir(r.path("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.create("sub/x", []byte("old"), true)
	r.create("sub/x.tmp", []byte("new"), false)
	if err := os.Rename(r.path("sub/x.tmp"), r.path("sub/x")); err != nil {
		t.Fatal(err)
	}
	r.cut(CutOptions{})
	if got := string(r.mustRead("sub/x")); got != "old" {
		t.Fatalf("rename not synced: %q, want old", got)
	}
	r.create("sub/x.tmp", []byte("new"), false)
	if err := os.Rename(r.path("sub/x.tmp"), r.path("sub/x")); err != nil {
		t.Fatal(err)
	}
	r.syncDir("sub")
	r.cut(CutOptions{})
	if got := string(r.mustRead("sub/x")); got != "new" {
		t.Fatalf("rename synced: %q, want new", got)
	}
	if _, err := r.read("sub/x.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("x.tmp: %v", err)
	}
}

// The gateway's key file: a temporary file linked to its name (a create
// that never replaces), the temporary removed, the directory synced.
func TestLinkNeedsDirectorySync(t *testing.T) {
	r := newRig(t)
	r.create("k.tmp", []byte("key"), false)
	if err := os.Link(r.path("k.tmp"), r.path("k")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(r.path("k.tmp"), r.path("k")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("a second link: %v, want EEXIST", err)
	}
	if err := os.Remove(r.path("k.tmp")); err != nil {
		t.Fatal(err)
	}
	if got := string(r.mustRead("k")); got != "key" {
		t.Fatalf("through the link: %q", got)
	}
	r.cut(CutOptions{})
	if _, err := r.read("k"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a link never synced: %v, want it gone", err)
	}
	r.create("k.tmp", []byte("key"), false)
	if err := os.Link(r.path("k.tmp"), r.path("k")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(r.path("k.tmp")); err != nil {
		t.Fatal(err)
	}
	r.syncDir(".")
	r.cut(CutOptions{})
	if got := string(r.mustRead("k")); got != "key" {
		t.Fatalf("a synced link: %q", got)
	}
	if _, err := r.read("k.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("k.tmp: %v", err)
	}
}

func TestTruncateThenExtend(t *testing.T) {
	r := newRig(t)
	old := pattern(3*pageSize, 1)
	r.create("f", old, true)
	f, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("xyz"), 2*pageSize+10); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 2*pageSize+13)
	copy(want, old[:100])
	copy(want[2*pageSize+10:], "xyz")
	if got := r.mustRead("f"); !bytes.Equal(got, want) {
		t.Fatal("truncate then write: the old bytes above the truncation show through")
	}
	f.Close()
	r.cut(CutOptions{})
	if got := r.mustRead("f"); !bytes.Equal(got, old) {
		t.Fatal("unsynced truncate survived the cut")
	}
	f2, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f2.Truncate(100); err != nil {
		t.Fatal(err)
	}
	if _, err := f2.WriteAt([]byte("xyz"), 2*pageSize+10); err != nil {
		t.Fatal(err)
	}
	if err := f2.Sync(); err != nil {
		t.Fatal(err)
	}
	f2.Close()
	r.cut(CutOptions{})
	if got := r.mustRead("f"); !bytes.Equal(got, want) {
		t.Fatal("synced truncate and write: wrong contents after the cut")
	}
}

func TestKeepAndTear(t *testing.T) {
	r := newRig(t)
	const pages = 64
	old := bytes.Repeat([]byte{0xAA}, pages*pageSize)
	r.create("f", old, true)
	f, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0x55}, pages*pageSize), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep := r.cut(CutOptions{Keep: 0.5, Tear: true, Seed: 42})
	if rep.PagesKept+rep.PagesLost+1 != pages || rep.PagesKept == 0 || rep.PagesLost == 0 || rep.TornBytes == 0 {
		t.Fatalf("report %+v: want some kept, some lost, one torn of %d", rep, pages)
	}
	got := r.mustRead("f")
	kept, lost := 0, 0
	for pg := range pages {
		b := got[pg*pageSize : (pg+1)*pageSize]
		switch {
		case bytes.Equal(b, old[:pageSize]):
			lost++
		case bytes.Count(b, []byte{0x55}) == pageSize:
			kept++
		default:
			n := bytes.IndexByte(b, 0xAA)
			if int64(pg*pageSize) != rep.TornAt || n != rep.TornBytes || n%512 != 0 ||
				bytes.Count(b[:n], []byte{0x55}) != n || bytes.Count(b[n:], []byte{0xAA}) != pageSize-n {
				t.Fatalf("page %d is neither old, new nor the torn page of the report %+v", pg, rep)
			}
		}
	}
	if kept != rep.PagesKept || lost != rep.PagesLost {
		t.Fatalf("kept %d lost %d, report %+v", kept, lost, rep)
	}
}

// bbolt reads through a read-only shared mapping while it writes with
// pwrite: the mapping must see every write, those made after it was
// mapped included, and reads of pages the kernel has not cached are
// answered from the filesystem's cache. The mapping is touched in a child
// process: a page fault in this process could wait on this process's own
// FUSE server while the Go runtime stops the world for a collection.
func TestMmapSeesWrites(t *testing.T) {
	r := newRig(t)
	r.create("m", pattern(pageSize, 1), true)
	h := startHelper(t, "mmap", r.path("m"))
	if err := h.Wait(); err != nil {
		t.Fatalf("the mmap helper: %v", err)
	}
}

func helperMmap(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	const size = 64 * pageSize
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	defer syscall.Munmap(m)
	if !bytes.Equal(m[:pageSize], pattern(pageSize, 1)) {
		return errors.New("the mapping does not show the file")
	}
	for i := range 63 {
		// Grow the file by pwrite, partial pages included, as bbolt does.
		off := int64(pageSize + i*pageSize)
		p := pattern(pageSize, byte(i+2))
		if _, err := f.WriteAt(p[:100], off); err != nil {
			return err
		}
		if _, err := f.WriteAt(p[100:], off+100); err != nil {
			return err
		}
		if !bytes.Equal(m[off:off+pageSize], p) {
			return fmt.Errorf("page %d: the mapping does not see the write", i+1)
		}
		// Overwrite an earlier page in place.
		q := pattern(pageSize, byte(100+i))
		if _, err := f.WriteAt(q, 0); err != nil {
			return err
		}
		if !bytes.Equal(m[:pageSize], q) {
			return fmt.Errorf("round %d: the mapping does not see an overwrite", i)
		}
	}
	// Another open makes the kernel drop its cached pages: faults are
	// then answered by the filesystem, unsynced pages included.
	g, err := os.Open(path)
	if err != nil {
		return err
	}
	g.Close()
	if !bytes.Equal(m[:pageSize], pattern(pageSize, 100+62)) || !bytes.Equal(m[63*pageSize:], pattern(pageSize, 64)) {
		return errors.New("after the kernel dropped its cache the mapping shows other bytes")
	}
	return nil
}

func TestFlock(t *testing.T) {
	r := newRig(t)
	r.create("lock", nil, true)
	a, err := os.OpenFile(r.path("lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.OpenFile(r.path("lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := syscall.Flock(int(a.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(b.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second flock: %v, want EWOULDBLOCK", err)
	}
}

func TestFallocate(t *testing.T) {
	r := newRig(t)
	r.create("f", []byte("abc"), true)
	f, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, 2*pageSize); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fallocate(int(f.Fd()), 1, 0, 8*pageSize); err != nil { // KEEP_SIZE
		t.Fatal(err)
	}
	want := append([]byte("abc"), make([]byte, 2*pageSize-3)...)
	if got := r.mustRead("f"); !bytes.Equal(got, want) {
		t.Fatalf("after fallocate: %d bytes", len(got))
	}
}

func TestDownAfterCut(t *testing.T) {
	r := newRig(t)
	r.create("f", []byte("x"), true)
	f, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("y"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.fs.Cut(CutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("z"), 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write after the cut: %v, want EIO", err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fsync after the cut: %v, want EIO", err)
	}
	if _, err := os.Create(r.path("g")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("create after the cut: %v, want EIO", err)
	}
	f.Close()
	if _, err := r.fs.Cut(CutOptions{}); err == nil {
		t.Fatal("a second cut: no error")
	}
	if err := r.fs.Unmount(); err != nil {
		t.Fatal(err)
	}
	r.mount()
	if got := string(r.mustRead("f")); got != "x" {
		t.Fatalf("after the cut: %q", got)
	}
}

// bbolt on the mount, cut while it commits: every commit bbolt returned
// from (after its fdatasyncs) survives, some unsynced page writes of the
// commit under way are kept and one is torn, and the file always opens.
// bbolt runs in a child process (it maps the file; see TestMmapSeesWrites),
// killed after each cut as kill -9 would.
func TestBboltSurvivesCuts(t *testing.T) {
	r := newRig(t)
	path := r.path("b.db")
	acked := 0 // batches below it were committed and acknowledged
	for round := range 8 {
		h := startHelper(t, "bbolt", path, fmt.Sprint(acked))
		h.waitReady()
		if round == 0 {
			r.syncDir(".") // bbolt does not sync the directory of a new file
		}
		for range 3 + round*4 {
			line, err := h.stdout.ReadString('\n')
			if err != nil {
				t.Fatalf("round %d: %v %s", round, err, h.stderr.String())
			}
			var b int
			if _, err := fmt.Sscan(line, &b); err != nil {
				t.Fatal(err)
			}
			acked = b + 1
		}
		if _, err := r.fs.Cut(CutOptions{Keep: 0.3, Tear: round%2 == 0, Seed: uint64(round + 1)}); err != nil {
			t.Fatal(err)
		}
		h.kill()
		if err := r.fs.Unmount(); err != nil {
			t.Fatal(err)
		}
		r.fs = nil
		r.mount()
	}
	h := startHelper(t, "bbolt", path, fmt.Sprint(acked))
	h.waitReady()
	h.kill()
}

const batchKeys = 100

// helperBbolt opens the file, checks that the batches below acked are
// there, says ready, then commits batches after the last one there,
// printing each one's number once bbolt returns, until killed.
func helperBbolt(path, ackedArg string) error {
	var acked int
	if _, err := fmt.Sscan(ackedArg, &acked); err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{})
	if err != nil {
		return fmt.Errorf("open after a cut: %w", err)
	}
	next := 0
	if err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("k"))
		for i := range acked * batchKeys {
			if b == nil || b.Get(key(i)) == nil {
				return fmt.Errorf("key %d of an acknowledged batch is gone", i)
			}
		}
		if b != nil {
			if k, _ := b.Cursor().Last(); k != nil {
				next = int(binary.BigEndian.Uint64(k))/batchKeys + 1
			}
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Println("ready")
	for batch := next; ; batch++ {
		if err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("k"))
			if err != nil {
				return err
			}
			for i := batch * batchKeys; i < (batch+1)*batchKeys; i++ {
				if err := b.Put(key(i), pattern(300, byte(i))); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			select {} // the power is gone: wait to be killed
		}
		fmt.Println(batch)
	}
}

func key(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

func TestControlHandler(t *testing.T) {
	r := newRig(t)
	r.create("f", []byte("x"), true)
	srv := httptest.NewServer(r.fs.Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/cut?keep=2", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("keep=2: %d, want 400", resp.StatusCode)
	}
	if err := os.WriteFile(r.path("f"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Post(srv.URL+"/cut?seed=3", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rep CutReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rep.Seed != 3 || rep.PagesLost != 1 {
		t.Fatalf("report %+v", rep)
	}
	if !r.fs.Stats().Down {
		t.Fatal("not down after a cut")
	}
	if err := r.fs.Unmount(); err != nil {
		t.Fatal(err)
	}
	r.mount()
	if got := string(r.mustRead("f")); got != "x" {
		t.Fatalf("after the cut: %q", got)
	}
}

func TestHoldSyncsUntilCut(t *testing.T) {
	r := newRig(t)
	r.create("f", []byte("x"), true)
	f, err := os.OpenFile(r.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("y"), 0); err != nil {
		t.Fatal(err)
	}
	r.fs.HoldSyncs()
	done := make(chan error, 1)
	go func() { done <- f.Sync() }()
	for r.fs.Stats().HeldSyncs == 0 {
		time.Sleep(time.Millisecond) // until the sync reaches the filesystem
	}
	select {
	case err := <-done:
		t.Fatalf("a held sync returned: %v", err)
	default:
	}
	if _, err := r.fs.Cut(CutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, syscall.EIO) {
		t.Fatalf("the held sync after the cut: %v, want EIO", err)
	}
	f.Close()
	if err := r.fs.Unmount(); err != nil {
		t.Fatal(err)
	}
	r.mount()
	if got := string(r.mustRead("f")); got != "x" {
		t.Fatalf("after a cut during a held sync: %q", got)
	}
}
