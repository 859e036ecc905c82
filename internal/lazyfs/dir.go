package lazyfs

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirNode is a directory. Its entries now are go-fuse's children of its
// Inode; durable is what the backing directory holds, which a directory
// fsync brings up to date. Directories are created, removed and renamed
// in the backing tree at once (only files' entries are lazy).
type dirNode struct {
	fs.Inode
	lfs *FS

	mu      sync.Mutex
	path    string               // relative to the backing directory
	mode    uint32               // permission bits
	durable map[string]*fileNode // durable name -> file
}

var (
	_ fs.NodeCreater   = (*dirNode)(nil)
	_ fs.NodeMkdirer   = (*dirNode)(nil)
	_ fs.NodeUnlinker  = (*dirNode)(nil)
	_ fs.NodeRmdirer   = (*dirNode)(nil)
	_ fs.NodeRenamer   = (*dirNode)(nil)
	_ fs.NodeFsyncer   = (*dirNode)(nil)
	_ fs.NodeGetattrer = (*dirNode)(nil)
	_ fs.NodeSetattrer = (*dirNode)(nil)
	_ fs.NodeLookuper  = (*dirNode)(nil)
	_ fs.NodeReaddirer = (*dirNode)(nil)
	_ fs.NodeLinker    = (*dirNode)(nil)
)

func (d *dirNode) backingPath() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return filepath.Join(d.lfs.backing, d.path)
}

func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !d.lfs.enter() {
		return nil, syscall.EIO
	}
	defer d.lfs.leave()
	ch := d.GetChild(name)
	if ch == nil {
		return nil, syscall.ENOENT
	}
	switch n := ch.Operations().(type) {
	case *fileNode:
		n.mu.Lock()
		n.fill(&out.Attr)
		n.mu.Unlock()
	case *dirNode:
		n.fill(&out.Attr)
	}
	return ch, 0
}

func (d *dirNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	if !d.lfs.enter() {
		return nil, syscall.EIO
	}
	defer d.lfs.leave()
	var ents []fuse.DirEntry
	for name, ch := range d.Children() {
		ents = append(ents, fuse.DirEntry{Name: name, Mode: ch.StableAttr().Mode, Ino: ch.StableAttr().Ino})
	}
	return fs.NewListDirStream(ents), 0
}

func (d *dirNode) fill(a *fuse.Attr) {
	a.Ino = d.StableAttr().Ino
	d.mu.Lock()
	mode := d.mode
	d.mu.Unlock()
	if mode == 0 {
		mode = 0o755
	}
	a.Mode = fuse.S_IFDIR | mode
	a.Nlink = 2
	a.Blksize = pageSize
}

func (d *dirNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if !d.lfs.enter() {
		return syscall.EIO
	}
	defer d.lfs.leave()
	d.fill(&out.Attr)
	return 0
}

func (d *dirNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if !d.lfs.enter() {
		return syscall.EIO
	}
	defer d.lfs.leave()
	if m, ok := in.GetMode(); ok {
		d.mu.Lock()
		d.mode = m & 0o7777
		d.mu.Unlock()
	}
	d.fill(&out.Attr)
	return 0
}

func (d *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if !d.lfs.enter() {
		return nil, nil, 0, syscall.EIO
	}
	defer d.lfs.leave()
	if mode&syscall.S_IFMT != 0 && mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, nil, 0, syscall.EOPNOTSUPP
	}
	if ch := d.GetChild(name); ch != nil {
		// The kernel asks to create a name it did not find; a race with
		// another creator lands here.
		if flags&syscall.O_EXCL != 0 {
			return nil, nil, 0, syscall.EEXIST
		}
		f, ok := ch.Operations().(*fileNode)
		if !ok {
			return nil, nil, 0, syscall.EISDIR
		}
		f.mu.Lock()
		if flags&syscall.O_TRUNC != 0 {
			f.truncate(0)
		}
		f.fill(&out.Attr)
		f.mu.Unlock()
		return ch, nil, 0, 0
	}
	f, err := d.lfs.newFile("", mode&0o7777, 0)
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	f.fill(&out.Attr)
	ch := d.NewPersistentInode(ctx, f, fs.StableAttr{Mode: fuse.S_IFREG, Ino: f.id})
	return ch, nil, 0, 0
}

func (d *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !d.lfs.enter() {
		return nil, syscall.EIO
	}
	defer d.lfs.leave()
	if d.GetChild(name) != nil {
		return nil, syscall.EEXIST
	}
	d.mu.Lock()
	p := filepath.Join(d.path, name)
	d.mu.Unlock()
	if err := os.Mkdir(filepath.Join(d.lfs.backing, p), 0o755); err != nil {
		return nil, fs.ToErrno(err)
	}
	c := &dirNode{lfs: d.lfs, path: p, mode: mode & 0o7777, durable: map[string]*fileNode{}}
	ch := d.NewPersistentInode(ctx, c, fs.StableAttr{Mode: fuse.S_IFDIR, Ino: d.lfs.newID()})
	c.fill(&out.Attr)
	return ch, 0
}

// Link adds a name of a file now (durable when the directory is synced):
// a create that must not replace, as the gateway's key file does.
func (d *dirNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !d.lfs.enter() {
		return nil, syscall.EIO
	}
	defer d.lfs.leave()
	f, ok := target.(*fileNode)
	if !ok {
		return nil, syscall.EPERM
	}
	if d.GetChild(name) != nil {
		return nil, syscall.EEXIST
	}
	f.mu.Lock()
	f.fill(&out.Attr)
	f.mu.Unlock()
	return f.EmbeddedInode(), 0
}

// Unlink removes the name now; the durable name stays until the
// directory is synced.
func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	if !d.lfs.enter() {
		return syscall.EIO
	}
	defer d.lfs.leave()
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	if _, ok := ch.Operations().(*fileNode); !ok {
		return syscall.EISDIR
	}
	return 0
}

func (d *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	if !d.lfs.enter() {
		return syscall.EIO
	}
	defer d.lfs.leave()
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	c, ok := ch.Operations().(*dirNode)
	if !ok {
		return syscall.ENOTDIR
	}
	if len(ch.Children()) > 0 {
		return syscall.ENOTEMPTY
	}
	// Durable names of files no longer in it go with it.
	c.mu.Lock()
	defer c.mu.Unlock()
	full := filepath.Join(d.lfs.backing, c.path)
	for n := range c.durable {
		if err := os.Remove(filepath.Join(full, n)); err != nil {
			return fs.ToErrno(err)
		}
	}
	clear(c.durable)
	return fs.ToErrno(os.Remove(full))
}

// Rename moves a file's name now (its durable names change when the
// directories are synced) or a directory's at once.
func (d *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if !d.lfs.enter() {
		return syscall.EIO
	}
	defer d.lfs.leave()
	const noReplace = 1 // RENAME_NOREPLACE; RENAME_EXCHANGE and others are not supported
	if flags&^noReplace != 0 {
		return syscall.EINVAL
	}
	np, ok := newParent.(*dirNode)
	if !ok {
		return syscall.ENOTDIR
	}
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	old := np.GetChild(newName)
	if old != nil && flags&noReplace != 0 {
		return syscall.EEXIST
	}
	switch c := ch.Operations().(type) {
	case *fileNode:
		if old != nil {
			if _, isDir := old.Operations().(*dirNode); isDir {
				return syscall.EISDIR
			}
		}
		return 0
	case *dirNode:
		if old != nil {
			od, isDir := old.Operations().(*dirNode)
			if !isDir {
				return syscall.ENOTDIR
			}
			if len(old.Children()) > 0 {
				return syscall.ENOTEMPTY
			}
			if len(od.durable) > 0 {
				return syscall.ENOTEMPTY // names that are gone but not yet synced away
			}
		}
		np.mu.Lock()
		to := filepath.Join(np.path, newName)
		np.mu.Unlock()
		if err := os.Rename(filepath.Join(d.lfs.backing, c.path), filepath.Join(d.lfs.backing, to)); err != nil {
			return fs.ToErrno(err)
		}
		c.setPath(to)
		return 0
	}
	return syscall.EINVAL
}

// setPath moves d and the directories under it to p.
func (d *dirNode) setPath(p string) {
	d.mu.Lock()
	d.path = p
	d.mu.Unlock()
	for name, ch := range d.Children() {
		if c, ok := ch.Operations().(*dirNode); ok {
			c.setPath(filepath.Join(p, name))
		}
	}
}

// Fsync of a directory makes its files' entries durable: each name now
// is linked to its file's contents, each durable name gone is removed.
func (d *dirNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	d.lfs.waitHeld()
	if !d.lfs.enter() {
		return syscall.EIO
	}
	defer d.lfs.leave()
	d.lfs.stats.dirSyncs.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	full := filepath.Join(d.lfs.backing, d.path)
	now := map[string]*fileNode{}
	for name, ch := range d.Children() {
		if f, ok := ch.Operations().(*fileNode); ok {
			now[name] = f
		}
	}
	for name, f := range now {
		if d.durable[name] == f {
			continue
		}
		// Link the contents under a temporary name, then rename it over
		// the name: the backing name is always whole.
		tmp := filepath.Join(full, ".lazyfs-link-"+name)
		_ = os.Remove(tmp)
		if err := os.Link(f.objPath, tmp); err != nil {
			return fs.ToErrno(err)
		}
		if err := os.Rename(tmp, filepath.Join(full, name)); err != nil {
			return fs.ToErrno(err)
		}
		d.durable[name] = f
	}
	for name := range d.durable {
		if now[name] == nil {
			if err := os.Remove(filepath.Join(full, name)); err != nil && !os.IsNotExist(err) {
				return fs.ToErrno(err)
			}
			delete(d.durable, name)
		}
	}
	return 0
}
