package lazyfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// objDirName is the backing directory's hidden directory of file contents.
const objDirName = ".lazyfs"

// FS is one mount of a backing directory.
type FS struct {
	backing    string
	mountpoint string
	objDir     string
	server     *fuse.Server

	// cut is held shared by every operation and exclusively by Cut, so a
	// cut falls between operations, never inside one.
	cut  sync.RWMutex
	down bool // set by Cut: every operation fails with EIO

	// hold, while set, is what every fsync waits on first (HoldSyncs);
	// Cut closes it.
	holdMu sync.Mutex
	hold   chan struct{}

	nextID atomic.Uint64
	root   *dirNode

	filesMu sync.Mutex
	files   map[uint64]*fileNode // every file with an open backing object

	stats statCounters
}

// Stats counts what the mount did since it was mounted.
type Stats struct {
	Writes      uint64 `json:"writes"`      // write calls
	Syncs       uint64 `json:"syncs"`       // fsync/fdatasync of files
	DirSyncs    uint64 `json:"dirSyncs"`    // fsync of directories
	PagesSynced uint64 `json:"pagesSynced"` // pages written through by syncs
	HeldSyncs   uint64 `json:"heldSyncs"`   // syncs that waited on HoldSyncs
	Down        bool   `json:"down"`        // a cut happened: every operation fails
}

type statCounters struct {
	writes, syncs, dirSyncs, pagesSynced, held atomic.Uint64
}

// Mount mounts backing at mountpoint (both existing directories). The
// caller must Unmount.
func Mount(backing, mountpoint string) (*FS, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	lfs := &FS{backing: backing, mountpoint: mountpoint, objDir: filepath.Join(backing, objDirName),
		files: map[uint64]*fileNode{}}
	// Contents that never got a durable name go with the old object dir.
	if err := os.RemoveAll(lfs.objDir); err != nil {
		return nil, err
	}
	if err := os.Mkdir(lfs.objDir, 0o700); err != nil {
		return nil, err
	}
	lfs.root = &dirNode{lfs: lfs, path: "", durable: map[string]*fileNode{}}
	// Import the durable tree before the kernel can ask for it.
	imp := &importer{lfs: lfs, byIno: map[uint64]*fileNode{}}
	if err := imp.dir(lfs.root); err != nil {
		lfs.closeFiles()
		return nil, fmt.Errorf("lazyfs: import %s: %w", backing, err)
	}
	second := time.Second
	zero := time.Duration(0)
	opts := &fs.Options{
		EntryTimeout:    &second,
		AttrTimeout:     &second,
		NegativeTimeout: &zero,
		OnAdd:           imp.attach,
		MountOptions: fuse.MountOptions{
			FsName:        "lazyfs",
			Name:          "lazyfs",
			DirectMount:   true, // as root, mount(2) itself; else fusermount3
			DisableXAttrs: true,
			MaxBackground: 64,
		},
	}
	server, err := fs.Mount(mountpoint, lfs.root, opts)
	if err != nil {
		lfs.closeFiles()
		return nil, fmt.Errorf("lazyfs: mount %s: %w", mountpoint, err)
	}
	if imp.err != nil {
		_ = server.Unmount()
		lfs.closeFiles()
		return nil, imp.err
	}
	lfs.server = server
	return lfs, nil
}

// Mountpoint is where the filesystem is mounted.
func (l *FS) Mountpoint() string { return l.mountpoint }

// Backing is the backing directory.
func (l *FS) Backing() string { return l.backing }

// Unmount unmounts and waits for the server to stop. Processes using the
// mount must be gone (after a Cut: killed); a file still open for a
// moment after its process was killed is waited for, up to 5 s.
func (l *FS) Unmount() error {
	var err error
	for try := 0; try < 250; try++ {
		// As root, umount(2) (what go-fuse does first, but its fallback to
		// fusermount3 loses the EBUSY); else fusermount3 through go-fuse.
		if err = syscall.Unmount(l.mountpoint, 0); err == nil {
			break
		}
		if errors.Is(err, syscall.EPERM) {
			err = l.server.Unmount()
			break
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("lazyfs: unmount %s: %w", l.mountpoint, err)
	}
	l.server.Wait()
	l.closeFiles()
	return nil
}

// Stats returns the counters.
func (l *FS) Stats() Stats {
	l.cut.RLock()
	down := l.down
	l.cut.RUnlock()
	return Stats{Writes: l.stats.writes.Load(), Syncs: l.stats.syncs.Load(), DirSyncs: l.stats.dirSyncs.Load(),
		PagesSynced: l.stats.pagesSynced.Load(), HeldSyncs: l.stats.held.Load(), Down: down}
}

// CutOptions say what of the unsynced writes reaches the disk anyway.
type CutOptions struct {
	// Keep is the probability that each unsynced page write is kept
	// (0: all are lost, the default).
	Keep float64
	// Tear writes a prefix of one unsynced page write, whole 512-byte
	// sectors but not all of them, if there is one that is not kept.
	Tear bool
	// Seed seeds the choices (0: a random seed).
	Seed uint64
}

// CutReport says what a cut discarded and kept.
type CutReport struct {
	Seed          uint64 `json:"seed"`
	PagesLost     int    `json:"pagesLost"`     // unsynced page writes discarded
	PagesKept     int    `json:"pagesKept"`     // unsynced page writes kept (Keep)
	TornFile      string `json:"tornFile"`      // the file whose page was torn, if any
	TornAt        int64  `json:"tornAt"`        // the torn page's offset
	TornBytes     int    `json:"tornBytes"`     // how much of it reached the disk
	FilesUnsynced int    `json:"filesUnsynced"` // files with unsynced writes
}

// Cut is a power cut: it discards everything unsynced (but what opts
// keep) and leaves the filesystem down, every operation failing with EIO.
// The backing directory then holds what survives; to go on, kill the
// processes using the mount, Unmount and Mount again.
func (l *FS) Cut(opts CutOptions) (CutReport, error) {
	l.cut.Lock()
	defer l.cut.Unlock()
	if l.down {
		return CutReport{}, errors.New("lazyfs: already cut")
	}
	l.down = true
	// Held syncs go on once the cut is done, into EIO.
	defer func() {
		l.holdMu.Lock()
		if l.hold != nil {
			close(l.hold)
		}
		l.holdMu.Unlock()
	}()
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64() | 1
	}
	rep := CutReport{Seed: seed}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	l.filesMu.Lock()
	ids := make([]uint64, 0, len(l.files))
	for id := range l.files {
		ids = append(ids, id)
	}
	l.filesMu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })

	type lost struct {
		f   *fileNode
		off int64
		b   []byte
	}
	var unkept []lost
	var firstErr error
	for _, id := range ids {
		l.filesMu.Lock()
		f := l.files[id]
		l.filesMu.Unlock()
		f.mu.Lock()
		if len(f.dirty) > 0 {
			rep.FilesUnsynced++
		}
		for _, pg := range f.sortedPages() {
			off := pg * pageSize
			b := f.dirty[pg]
			if end := f.size - off; end < int64(len(b)) {
				b = b[:max(end, 0)]
			}
			if len(b) == 0 {
				continue
			}
			if opts.Keep > 0 && rng.Float64() < opts.Keep {
				if _, err := f.obj.WriteAt(b, off); err != nil && firstErr == nil {
					firstErr = err
				}
				rep.PagesKept++
				continue
			}
			unkept = append(unkept, lost{f, off, b})
		}
		f.mu.Unlock()
	}
	rep.PagesLost = len(unkept)
	if opts.Tear && len(unkept) > 0 {
		t := unkept[rng.IntN(len(unkept))]
		sectors := (len(t.b) + 511) / 512
		if sectors > 1 {
			n := (1 + rng.IntN(sectors-1)) * 512
			t.f.mu.Lock()
			_, err := t.f.obj.WriteAt(t.b[:n], t.off)
			t.f.mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			rep.TornFile, rep.TornAt, rep.TornBytes = t.f.name(), t.off, n
			rep.PagesLost--
		}
	}
	return rep, firstErr
}

// HoldSyncs makes every fsync and fdatasync from now on wait until the
// next Cut, which fails them: the power goes while the disk is still
// writing. A test widens with it the window between a write and its sync.
func (l *FS) HoldSyncs() {
	l.holdMu.Lock()
	defer l.holdMu.Unlock()
	if l.hold == nil {
		l.hold = make(chan struct{})
	}
}

// waitHeld waits while syncs are held.
func (l *FS) waitHeld() {
	l.holdMu.Lock()
	ch := l.hold
	l.holdMu.Unlock()
	if ch != nil {
		l.stats.held.Add(1)
		<-ch
	}
}

// enter starts an operation: false (EIO) once the power is cut.
func (l *FS) enter() bool {
	l.cut.RLock()
	if l.down {
		l.cut.RUnlock()
		return false
	}
	return true
}

func (l *FS) leave() { l.cut.RUnlock() }

func (l *FS) newID() uint64 { return l.nextID.Add(1) + 1 } // 1 is the root

func (l *FS) addFile(f *fileNode) {
	l.filesMu.Lock()
	l.files[f.id] = f
	l.filesMu.Unlock()
}

func (l *FS) closeFiles() {
	l.filesMu.Lock()
	defer l.filesMu.Unlock()
	for id, f := range l.files {
		_ = f.obj.Close()
		delete(l.files, id)
	}
}

// importer builds the tree of a fresh mount from the backing directory.
type importer struct {
	lfs   *FS
	byIno map[uint64]*fileNode // backing inode -> node: one node per file
	err   error
	// attach, run by go-fuse once the root's Inode exists, adds the
	// imported tree to it.
	pending []pendingChild
}

type pendingChild struct {
	parent *dirNode
	name   string
	node   fs.InodeEmbedder
	attr   fs.StableAttr
}

func (im *importer) dir(d *dirNode) error {
	ents, err := os.ReadDir(filepath.Join(im.lfs.backing, d.path))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if d.path == "" && e.Name() == objDirName {
			continue
		}
		p := filepath.Join(d.path, e.Name())
		full := filepath.Join(im.lfs.backing, p)
		st, err := os.Lstat(full)
		if err != nil {
			return err
		}
		sys := st.Sys().(*syscall.Stat_t)
		switch {
		case st.IsDir():
			c := &dirNode{lfs: im.lfs, path: p, durable: map[string]*fileNode{}, mode: uint32(st.Mode().Perm())}
			im.pending = append(im.pending, pendingChild{d, e.Name(), c, fs.StableAttr{Mode: fuse.S_IFDIR, Ino: im.lfs.newID()}})
			if err := im.dir(c); err != nil {
				return err
			}
		case st.Mode().IsRegular():
			f := im.byIno[sys.Ino]
			if f == nil {
				if f, err = im.lfs.newFile(full, uint32(st.Mode().Perm()), st.Size()); err != nil {
					return err
				}
				im.byIno[sys.Ino] = f
			}
			d.durable[e.Name()] = f
			im.pending = append(im.pending, pendingChild{d, e.Name(), f, fs.StableAttr{Mode: fuse.S_IFREG, Ino: f.id}})
		default:
			return fmt.Errorf("%s: only directories and regular files are supported", full)
		}
	}
	return nil
}

func (im *importer) attach(ctx context.Context) {
	for _, p := range im.pending {
		parent := p.parent.EmbeddedInode()
		ch := parent.NewPersistentInode(ctx, p.node, p.attr)
		parent.AddChild(p.name, ch, true)
	}
	im.pending = nil
}

// newFile makes the node of a file whose durable contents are at src
// (linked into the object dir), or a new empty file when src is "".
func (l *FS) newFile(src string, mode uint32, size int64) (*fileNode, error) {
	id := l.newID()
	objPath := filepath.Join(l.objDir, fmt.Sprint(id))
	if src != "" {
		if err := os.Link(src, objPath); err != nil {
			return nil, err
		}
	}
	obj, err := os.OpenFile(objPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f := &fileNode{lfs: l, id: id, objPath: objPath, obj: obj, mode: mode, mtime: time.Now(),
		size: size, dsize: size, floor: size, dirty: map[int64][]byte{}}
	l.addFile(f)
	return f, nil
}
