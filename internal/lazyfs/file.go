package lazyfs

import (
	"context"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// pageSize is the unit of the filesystem's cache, of a cut's choices and
// of the kernel's page cache.
const pageSize = 4096

// fileNode is a regular file. What the file holds now is, byte by byte:
// the dirty page holding it if there is one, else the backing object's
// byte below floor, else zero. A sync writes the dirty pages through.
type fileNode struct {
	fs.Inode
	lfs     *FS
	id      uint64
	objPath string
	obj     *os.File // the durable contents (hard-linked to each durable name)

	mu    sync.Mutex
	mode  uint32
	mtime time.Time
	size  int64 // the file's size now
	dsize int64 // the durable size (the object's)
	// floor is how much of the object is still the file's contents: the
	// smallest size since the last sync (a truncation below the durable
	// size hides the object's bytes above it), never above dsize.
	floor int64
	dirty map[int64][]byte // page number -> the page's contents now
}

var (
	_ fs.NodeOpener    = (*fileNode)(nil)
	_ fs.NodeReader    = (*fileNode)(nil)
	_ fs.NodeWriter    = (*fileNode)(nil)
	_ fs.NodeFsyncer   = (*fileNode)(nil)
	_ fs.NodeFlusher   = (*fileNode)(nil)
	_ fs.NodeGetattrer = (*fileNode)(nil)
	_ fs.NodeSetattrer = (*fileNode)(nil)
	_ fs.NodeAllocater = (*fileNode)(nil)
)

// name is a name of the file for reports.
func (f *fileNode) name() string {
	if p := f.Path(nil); p != "" {
		return p
	}
	return f.objPath
}

func (f *fileNode) sortedPages() []int64 {
	pages := make([]int64, 0, len(f.dirty))
	for pg := range f.dirty {
		pages = append(pages, pg)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	return pages
}

// readAt fills p with the contents at off (p within the size). f.mu held.
func (f *fileNode) readAt(p []byte, off int64) error {
	clear(p)
	if off < f.floor {
		n := min(int64(len(p)), f.floor-off)
		if _, err := f.obj.ReadAt(p[:n], off); err != nil {
			return err
		}
	}
	end := off + int64(len(p))
	for pg := off / pageSize; pg*pageSize < end; pg++ {
		b, ok := f.dirty[pg]
		if !ok {
			continue
		}
		start := pg * pageSize
		lo, hi := max(start, off), min(start+pageSize, end)
		copy(p[lo-off:hi-off], b[lo-start:hi-start])
	}
	return nil
}

// page returns the dirty page pg, making it from the contents now.
func (f *fileNode) page(pg int64) ([]byte, error) {
	if b, ok := f.dirty[pg]; ok {
		return b, nil
	}
	b := make([]byte, pageSize)
	start := pg * pageSize
	if start < f.size {
		if err := f.readAt(b[:min(pageSize, f.size-start)], start); err != nil {
			return nil, err
		}
	}
	f.dirty[pg] = b
	return b, nil
}

func (f *fileNode) writeAt(data []byte, off int64) error {
	end := off + int64(len(data))
	for pg := off / pageSize; pg*pageSize < end; pg++ {
		b, err := f.page(pg)
		if err != nil {
			return err
		}
		start := pg * pageSize
		lo, hi := max(start, off), min(start+pageSize, end)
		copy(b[lo-start:hi-start], data[lo-off:hi-off])
	}
	f.size = max(f.size, end)
	f.mtime = time.Now()
	return nil
}

// truncate sets the size now. f.mu held.
func (f *fileNode) truncate(n int64) {
	if n < f.size {
		for pg, b := range f.dirty {
			start := pg * pageSize
			switch {
			case start >= n:
				delete(f.dirty, pg)
			case start+pageSize > n:
				clear(b[n-start:])
			}
		}
		f.floor = min(f.floor, n)
	}
	f.size = n
	f.mtime = time.Now()
}

// sync writes the file's contents through to the object. f.mu held.
func (f *fileNode) sync() error {
	if f.floor < f.dsize {
		if err := f.obj.Truncate(f.floor); err != nil {
			return err
		}
	}
	for _, pg := range f.sortedPages() {
		start := pg * pageSize
		b := f.dirty[pg][:min(pageSize, f.size-start)]
		if _, err := f.obj.WriteAt(b, start); err != nil {
			return err
		}
	}
	if err := f.obj.Truncate(f.size); err != nil {
		return err
	}
	f.lfs.stats.pagesSynced.Add(uint64(len(f.dirty)))
	clear(f.dirty)
	f.dsize, f.floor = f.size, f.size
	return nil
}

func (f *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !f.lfs.enter() {
		return nil, 0, syscall.EIO
	}
	defer f.lfs.leave()
	if flags&syscall.O_TRUNC != 0 {
		f.mu.Lock()
		f.truncate(0)
		f.mu.Unlock()
	}
	// No FOPEN_KEEP_CACHE: the kernel drops its cached pages of the file
	// at each open and asks again, which is always answered from here.
	return nil, 0, 0
}

func (f *fileNode) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if !f.lfs.enter() {
		return nil, syscall.EIO
	}
	defer f.lfs.leave()
	f.mu.Lock()
	defer f.mu.Unlock()
	if off >= f.size {
		return fuse.ReadResultData(nil), 0
	}
	n := min(int64(len(dest)), f.size-off)
	if err := f.readAt(dest[:n], off); err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (f *fileNode) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if !f.lfs.enter() {
		return 0, syscall.EIO
	}
	defer f.lfs.leave()
	f.lfs.stats.writes.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.writeAt(data, off); err != nil {
		return 0, fs.ToErrno(err)
	}
	return uint32(len(data)), 0
}

// Fsync serves fsync and fdatasync alike: contents and size.
func (f *fileNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	f.lfs.waitHeld()
	if !f.lfs.enter() {
		return syscall.EIO
	}
	defer f.lfs.leave()
	f.lfs.stats.syncs.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return fs.ToErrno(f.sync())
}

// Flush (close) syncs nothing, as on a real disk.
func (f *fileNode) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	if !f.lfs.enter() {
		return syscall.EIO
	}
	f.lfs.leave()
	return 0
}

func (f *fileNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if !f.lfs.enter() {
		return syscall.EIO
	}
	defer f.lfs.leave()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fill(&out.Attr)
	return 0
}

func (f *fileNode) fill(a *fuse.Attr) {
	a.Ino = f.id
	a.Mode = fuse.S_IFREG | f.mode
	a.Nlink = 1
	a.Size = uint64(f.size)
	a.Blocks = (uint64(f.size) + 511) / 512
	a.Blksize = pageSize
	a.SetTimes(nil, &f.mtime, &f.mtime)
}

func (f *fileNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if !f.lfs.enter() {
		return syscall.EIO
	}
	defer f.lfs.leave()
	f.mu.Lock()
	defer f.mu.Unlock()
	if sz, ok := in.GetSize(); ok {
		f.truncate(int64(sz))
	}
	if m, ok := in.GetMode(); ok {
		f.mode = m & 0o7777
	}
	if mt, ok := in.GetMTime(); ok {
		f.mtime = mt
	}
	f.fill(&out.Attr)
	return 0
}

// Allocate serves fallocate: mode 0 extends the size (with zeros),
// FALLOC_FL_KEEP_SIZE changes nothing visible; others are not supported.
func (f *fileNode) Allocate(ctx context.Context, fh fs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	if !f.lfs.enter() {
		return syscall.EIO
	}
	defer f.lfs.leave()
	const keepSize = 1
	f.mu.Lock()
	defer f.mu.Unlock()
	switch mode {
	case 0:
		if end := int64(off + size); end > f.size {
			f.size = end
		}
		return 0
	case keepSize:
		return 0
	}
	return syscall.EOPNOTSUPP
}
