package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"strconv"
)

// The start-up pre-check reads the bbolt file with plain reads (pread of
// whole pages, never mmap) before bbolt opens it. bbolt maps the file and
// trusts it: a page id beyond the end of a truncated file faults the
// mapping (SIGBUS, which no recover catches), and a mangled page makes it
// index out of range on goroutines Open cannot guard. Reading first means
// damage is reported as an error and the file is never written: bbolt's
// Open, which may write (a fresh file's meta pages, a new meta on the first
// commit), only runs on a file that passed.
//
// Layout facts relied on (bbolt file format version 2, as written by
// go.etcd.io/bbolt; integers in the machine's native byte order, since
// bbolt writes its structs from memory):
//
//   - The file is an array of pages of pageSize bytes; page n starts at
//     n*pageSize. A page (or a run of 1+overflow pages) starts with a
//     16-byte header: id u64, flags u16, count u16, overflow u32. Flags:
//     branch 0x01, leaf 0x02, meta 0x04, freelist 0x10.
//   - Pages 0 and 1 are meta pages. After the header: magic u32
//     (0xED0CDAED), version u32 (2), pageSize u32, flags u32, root bucket
//     (root pgid u64, sequence u64), freelist pgid u64, pgid u64 (the
//     high-water mark: pages [0, pgid) are in use or free), txid u64 and a
//     checksum u64, FNV-1a 64 of the 48 bytes from magic to txid. The
//     current meta is the valid one with the higher txid; a commit writes
//     the meta page txid%2, so the other one is the previous commit's.
//   - A branch page holds count elements of 16 bytes after the header
//     (pos u32, ksize u32, child pgid u64); a leaf page count elements of
//     16 bytes (flags u32, pos u32, ksize u32, vsize u32). pos is relative
//     to the element's own offset; a leaf's value follows its key. Keys
//     ascend strictly within a page, and the keys under branch element i
//     lie in [key i, key i+1).
//   - A leaf element with flag 0x01 is a nested bucket: its value starts
//     with root pgid u64 and sequence u64; root 0 is an inline bucket whose
//     leaf page (header and elements) follows inside the value.
//   - The freelist page (flags 0x10) lists count page ids u64 after the
//     header; a count of 0xFFFF means the real count is the first u64.
//     A freelist pgid of all ones means the freelist was not synced.
//   - Every page in [2, pgid) is reachable from the root bucket, or free,
//     or part of the freelist page; none is two of those.
//
// What it cannot see: bbolt pages carry no checksum, so a flipped bit
// inside a value (not its key, bounds or the page's structure) passes.
// Commit log records carry their own CRC-32C for that (codec.go); a record
// that fails it is set aside at read time (corrupt.go).

const (
	bboltMagic      = 0xED0CDAED
	bboltVersion    = 2
	pageHeaderSize  = 16
	elementSize     = 16
	bucketHeader    = 16
	flagBranch      = 0x01
	flagLeaf        = 0x02
	flagMeta        = 0x04
	flagFreelist    = 0x10
	leafFlagBucket  = 0x01
	noFreelist      = ^uint64(0)
	metaChecksumOff = pageHeaderSize + 56 // the 56 bytes before it are summed
	metaSize        = 64
	minPageSize     = 1024
	maxPageSize     = 1 << 24
)

var ne = binary.NativeEndian

const (
	errBadMagic = "not a bbolt meta page (bad magic number)"
	errNoMeta1  = "no valid meta page found one page in, at any page size"
)

// DamageError reports a bbolt file the pre-check refused: the file, what is
// wrong with it and what to do. The file has not been written.
type DamageError struct {
	Path    string
	Problem string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("refusing to open %s: %s. The file was not modified. "+
		"Restore it from a backup, or salvage what is still readable (docs/operations.md, \"Salvaging a damaged store\")",
		e.Path, e.Problem)
}

// metaInfo is one decoded meta page.
type metaInfo struct {
	page     int
	pageSize int
	root     uint64
	freelist uint64
	hwm      uint64
	txid     uint64
	err      string // why it is invalid; "" when valid
}

// PreCheckResult is what a file that passed the pre-check looks like.
type PreCheckResult struct {
	// Empty: the file is absent or has no bytes (bbolt will initialise it).
	Empty bool
	// Size is the file's size in bytes.
	Size int64
	// PageSize, Pages (the high-water mark) and TxID come from the meta
	// page in use.
	PageSize int
	Pages    uint64
	TxID     uint64
	// InUsePages counts the pages reachable from the root bucket with the
	// two meta pages: the data, without free pages or the freelist.
	InUsePages uint64
	// Warning is set when one meta page is damaged and the other is used
	// (bbolt does the same; its next commit rewrites the damaged one).
	Warning string
	// Quick: the file was closed cleanly and PreCheckQuick skipped the
	// page walk (InUsePages is then 0).
	Quick bool
}

// PreCheck verifies a bbolt file with plain reads, without mapping or
// writing it: both meta pages, the size against the high-water mark, the
// page tree of every bucket reachable from the root, and the freelist. A
// damaged file is a *DamageError naming the problem. It holds a shared
// lock on the file while it reads (ErrLocked when another process has it).
func PreCheck(path string) (PreCheckResult, error) { return preCheck(path, false) }

// PreCheckQuick is PreCheck without the page walk when the meta page
// lists a freelist. The store writes the freelist only in Close and just
// before a checkpoint's sync (writeFreelist), never in the commits
// between, and after a crash recovery puts the file back to the last
// checkpoint's meta page before this runs (wal.go): so a meta page that
// lists one names a state whose every page, freelist included, a sync
// made durable. Then it checks both meta pages, the size against the
// high-water mark (a truncated file would fault bbolt's mapping) and the
// freelist page, which bbolt loads instead of walking the tree. That is
// what makes a 20 GB store start in a fraction of a second, not in the
// minutes a read of every page takes, after a clean stop and after a
// crash alike. A checkpoint with a large freelist does not write it;
// after a crash back to such a checkpoint it is PreCheck: bbolt rebuilds
// the freelist by walking the tree through its mapping, so every page is
// read first. What it does not see is a page damaged at rest (bit rot,
// an edit); `mqgate serve --full-check` and mqgate backup / compact read
// them all.
func PreCheckQuick(path string) (PreCheckResult, error) { return preCheck(path, true) }

func preCheck(path string, quick bool) (PreCheckResult, error) {
	return preCheckLocked(path, quick, true)
}

// preCheckLocked is preCheck; lock false reads without the shared lock,
// for a store that holds the file itself (naming the page a panic met,
// store.go: this process's own lock would refuse it).
func preCheckLocked(path string, quick, lock bool) (PreCheckResult, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return PreCheckResult{Empty: true}, nil
	}
	if err != nil {
		return PreCheckResult{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if lock {
		if err := sharedLock(f, lockTimeout); err != nil {
			if errors.Is(err, ErrLocked) {
				return PreCheckResult{}, fmt.Errorf("%s: %w (file lock not acquired within %v)", path, ErrLocked, lockTimeout)
			}
			return PreCheckResult{}, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return PreCheckResult{}, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return PreCheckResult{}, &DamageError{Path: path, Problem: "it is not a regular file"}
	}
	c := &fileCheck{f: f, path: path, size: fi.Size(), quick: quick}
	res, err := c.run()
	res.Size = c.size
	return res, err
}

type fileCheck struct {
	f        *os.File
	path     string
	size     int64
	pageSize int
	hwm      uint64
	used     []uint64 // bitset of pages reachable or free
	buf      []byte   // the page being checked; reused
	quick    bool     // skip the walk of a cleanly closed file
}

func (c *fileCheck) damage(format string, args ...any) error {
	return &DamageError{Path: c.path, Problem: fmt.Sprintf(format, args...)}
}

func (c *fileCheck) run() (PreCheckResult, error) {
	if c.size == 0 {
		return PreCheckResult{Empty: true}, nil
	}
	m, warning, err := c.metas()
	if err != nil {
		return PreCheckResult{}, err
	}
	c.pageSize, c.hwm = m.pageSize, m.hwm
	res := PreCheckResult{PageSize: m.pageSize, Pages: m.hwm, TxID: m.txid, Warning: warning}
	if need := int64(m.hwm) * int64(m.pageSize); c.size < need {
		return res, c.damage("the file is %d bytes but its meta page %d says it uses %d (%d pages of %d bytes): the file was truncated",
			c.size, m.page, need, m.hwm, m.pageSize)
	}
	c.used = make([]uint64, (m.hwm+63)/64)
	c.mark(0)
	c.mark(1)
	if c.quick && m.freelist != noFreelist {
		res.Quick = true
		return res, c.freelist(m.freelist)
	}
	if err := c.walk(m.root); err != nil {
		return res, err
	}
	for _, w := range c.used {
		res.InUsePages += uint64(bits.OnesCount64(w))
	}
	if m.freelist != noFreelist {
		if err := c.freelist(m.freelist); err != nil {
			return res, err
		}
		for id := uint64(2); id < m.hwm; id++ {
			if !c.isMarked(id) {
				return res, c.damage("page %d is neither reachable from the root bucket nor in the freelist (a lost page: the tree or the freelist is damaged)", id)
			}
		}
	}
	return res, nil
}

// metas reads both meta pages and picks the one bbolt would use: the valid
// one with the higher txid.
func (c *fileCheck) metas() (metaInfo, string, error) {
	m0 := c.readMeta(0, 0)
	// Meta page 1 sits one page in: with meta 0 valid its page size says
	// where; otherwise try every size bbolt supports, as bbolt does.
	var m1 metaInfo
	if m0.err == "" {
		m1 = c.readMeta(1, int64(m0.pageSize))
	} else {
		m1 = metaInfo{page: 1, err: errNoMeta1}
		for ps := int64(minPageSize); ps <= maxPageSize && ps < c.size; ps <<= 1 {
			if m := c.readMeta(1, ps); m.err == "" {
				m1 = m
				break
			} else if ps == 4096 {
				m1.err = m.err // the usual page size: its reason is the telling one
			}
		}
	}
	switch {
	case m0.err == "" && m1.err == "":
		if m0.pageSize != m1.pageSize {
			return metaInfo{}, "", c.damage("the meta pages disagree on the page size (%d and %d)", m0.pageSize, m1.pageSize)
		}
		if m1.txid > m0.txid {
			return m1, "", nil
		}
		return m0, "", nil
	case m0.err == "":
		return m0, c.metaWarning(m1, m0), nil
	case m1.err == "":
		return m1, c.metaWarning(m0, m1), nil
	}
	if c.size < 2*minPageSize {
		return metaInfo{}, "", c.damage("the file is %d bytes, too short for its two meta pages (meta page 0: %s): the file was truncated", c.size, m0.err)
	}
	if m0.err == errBadMagic && (m1.err == errBadMagic || m1.err == errNoMeta1) {
		return metaInfo{}, "", c.damage("neither meta page carries the bbolt magic number: it is not a bbolt file, or both meta pages are overwritten")
	}
	return metaInfo{}, "", c.damage("both meta pages are invalid (meta page 0: %s; meta page 1: %s)", m0.err, m1.err)
}

func (c *fileCheck) metaWarning(bad, good metaInfo) string {
	return fmt.Sprintf("meta page %d of %s is invalid (%s); using meta page %d (transaction %d) as bbolt does. "+
		"The next commit rewrites the damaged page. If the damaged page held the newer commit, that one commit is lost",
		bad.page, c.path, bad.err, good.page, good.txid)
}

// readMeta decodes the meta page at byte offset off.
func (c *fileCheck) readMeta(page int, off int64) metaInfo {
	m := metaInfo{page: page}
	buf := make([]byte, pageHeaderSize+metaSize)
	n, err := c.f.ReadAt(buf, off)
	if n < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			m.err = fmt.Sprintf("the file ends inside it (%d bytes)", c.size)
		} else {
			m.err = err.Error()
		}
		return m
	}
	b := buf[pageHeaderSize:]
	switch {
	case ne.Uint32(b[0:]) != bboltMagic:
		m.err = errBadMagic
		return m
	case ne.Uint32(b[4:]) != bboltVersion:
		m.err = fmt.Sprintf("file format version %d, this build reads %d", ne.Uint32(b[4:]), bboltVersion)
		return m
	}
	h := fnv.New64a()
	h.Write(b[:56])
	if h.Sum64() != ne.Uint64(buf[metaChecksumOff:]) {
		m.err = "checksum mismatch"
		return m
	}
	if fl := ne.Uint16(buf[8:]); fl != flagMeta {
		m.err = fmt.Sprintf("page flags %#x, want meta", fl)
		return m
	}
	ps := int(ne.Uint32(b[8:]))
	m.pageSize = ps
	m.root = ne.Uint64(b[16:])
	m.freelist = ne.Uint64(b[32:])
	m.hwm = ne.Uint64(b[40:])
	m.txid = ne.Uint64(b[48:])
	switch {
	case ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0:
		m.err = fmt.Sprintf("page size %d is not a power of two in [%d, %d]", ps, minPageSize, maxPageSize)
	case page == 1 && off != int64(ps):
		m.err = fmt.Sprintf("found at byte %d but says the page size is %d", off, ps)
	case m.hwm < 3 || m.hwm > uint64(1)<<48:
		m.err = fmt.Sprintf("high-water mark %d pages is impossible", m.hwm)
	case m.root < 2 || m.root >= m.hwm:
		m.err = fmt.Sprintf("root page %d is outside [2, %d)", m.root, m.hwm)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.hwm):
		m.err = fmt.Sprintf("freelist page %d is outside [2, %d)", m.freelist, m.hwm)
	}
	return m
}

func (c *fileCheck) mark(id uint64)          { c.used[id/64] |= 1 << (id % 64) }
func (c *fileCheck) isMarked(id uint64) bool { return c.used[id/64]&(1<<(id%64)) != 0 }

// readPage reads page id with its overflow pages into the check's buffer:
// the result is valid until the next readPage (callers clone what they
// keep). what names the page for messages.
func (c *fileCheck) readPage(id uint64, what string) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, c.damage("%s is outside the file's pages [2, %d)", what, c.hwm)
	}
	ps := int64(c.pageSize)
	if cap(c.buf) < c.pageSize {
		c.buf = make([]byte, c.pageSize)
	}
	buf := c.buf[:c.pageSize]
	if _, err := c.f.ReadAt(buf, int64(id)*ps); err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", what, c.path, err)
	}
	if got := ne.Uint64(buf); got != id {
		return nil, c.damage("%s has the id %d in its header (a damaged or misplaced page)", what, got)
	}
	ov := uint64(ne.Uint32(buf[12:]))
	if id+ov >= c.hwm {
		return nil, c.damage("%s runs %d overflow pages past the high-water mark %d", what, ov, c.hwm)
	}
	for p := id; p <= id+ov; p++ {
		if c.isMarked(p) {
			return nil, c.damage("%s reuses page %d, which is already in use (a cycle or cross-linked pages)", what, p)
		}
		c.mark(p)
	}
	if ov > 0 {
		n := (int64(ov) + 1) * ps
		if int64(cap(c.buf)) < n {
			c.buf = append(c.buf[:0], make([]byte, n)...)
			copy(c.buf, buf)
		}
		buf = c.buf[:n]
		if _, err := c.f.ReadAt(buf[ps:], (int64(id)+1)*ps); err != nil {
			return nil, fmt.Errorf("read %s of %s: %w", what, c.path, err)
		}
	}
	return buf, nil
}

// treeStep is one page of a bucket's tree still to visit, with the key
// range its keys must lie in (nil: unbounded).
type treeStep struct {
	id     uint64
	bucket string
	lo, hi []byte
}

// walk visits every page of the root bucket's tree and of every nested
// bucket, depth first with an explicit stack.
func (c *fileCheck) walk(root uint64) error {
	stack := []treeStep{{id: root, bucket: "the root bucket"}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		what := "page " + strconv.FormatUint(s.id, 10) + " (in " + s.bucket + ")"
		buf, err := c.readPage(s.id, what)
		if err != nil {
			return err
		}
		switch fl := ne.Uint16(buf[8:]); fl {
		case flagBranch:
			what = "page " + strconv.FormatUint(s.id, 10) + " (branch, in " + s.bucket + ")"
			kids, err := c.branch(buf, s, what)
			if err != nil {
				return err
			}
			stack = append(stack, kids...)
		case flagLeaf:
			what = "page " + strconv.FormatUint(s.id, 10) + " (leaf, in " + s.bucket + ")"
			kids, err := c.leaf(buf, s, what)
			if err != nil {
				return err
			}
			stack = append(stack, kids...)
		default:
			return c.damage("%s has an invalid flag %#x (want branch 0x01 or leaf 0x02)", what, fl)
		}
	}
	return nil
}

// elements returns the page's element count after checking the element
// table fits in buf.
func (c *fileCheck) elements(buf []byte, what string) (int, error) {
	n := int(ne.Uint16(buf[10:]))
	if pageHeaderSize+n*elementSize > len(buf) {
		return 0, c.damage("%s claims %d elements, more than fit in %d bytes", what, n, len(buf))
	}
	return n, nil
}

// region returns buf[at+pos : at+pos+n] or an error when it leaves buf.
func (c *fileCheck) region(buf []byte, at int, pos, n uint32, what, field string, i int) ([]byte, error) {
	start := uint64(at) + uint64(pos)
	end := start + uint64(n)
	if end > uint64(len(buf)) {
		return nil, c.damage("%s: element %d's %s (%d bytes at offset %d) runs past the page's %d bytes", what, i, field, n, start, len(buf))
	}
	return buf[start:end], nil
}

// inRange checks key i of a page against its predecessor and the range.
func (c *fileCheck) inRange(key, prev []byte, s treeStep, i int, what string) error {
	if i > 0 && bytes.Compare(prev, key) >= 0 {
		return c.damage("%s: key %d is not above key %d (keys out of order)", what, i, i-1)
	}
	if s.lo != nil && bytes.Compare(key, s.lo) < 0 {
		return c.damage("%s: key %d is below its parent's key (keys out of order)", what, i)
	}
	if s.hi != nil && bytes.Compare(key, s.hi) >= 0 {
		return c.damage("%s: key %d is not below the parent's next key (keys out of order)", what, i)
	}
	return nil
}

func (c *fileCheck) branch(buf []byte, s treeStep, what string) ([]treeStep, error) {
	n, err := c.elements(buf, what)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, c.damage("%s has no elements", what)
	}
	keys := make([][]byte, n)
	kids := make([]treeStep, n)
	for i := range n {
		at := pageHeaderSize + i*elementSize
		key, err := c.region(buf, at, ne.Uint32(buf[at:]), ne.Uint32(buf[at+4:]), what, "key", i)
		if err != nil {
			return nil, err
		}
		if err := c.inRange(key, prevKey(keys, i), s, i, what); err != nil {
			return nil, err
		}
		keys[i] = bytes.Clone(key)
		child := ne.Uint64(buf[at+8:])
		if child < 2 || child >= c.hwm {
			return nil, c.damage("%s: element %d points at page %d, outside the file's pages [2, %d)", what, i, child, c.hwm)
		}
		kids[i] = treeStep{id: child, bucket: s.bucket, lo: keys[i], hi: s.hi}
		if i > 0 {
			kids[i-1].hi = keys[i]
		}
	}
	// Children pushed in reverse so the walk reads the file mostly forward.
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		kids[i], kids[j] = kids[j], kids[i]
	}
	return kids, nil
}

func prevKey(keys [][]byte, i int) []byte {
	if i == 0 {
		return nil
	}
	return keys[i-1]
}

// leaf checks a leaf page (or an inline bucket's page) and returns the
// roots of the nested buckets it holds.
func (c *fileCheck) leaf(buf []byte, s treeStep, what string) ([]treeStep, error) {
	n, err := c.elements(buf, what)
	if err != nil {
		return nil, err
	}
	var kids []treeStep
	var prev []byte
	for i := range n {
		at := pageHeaderSize + i*elementSize
		flags := ne.Uint32(buf[at:])
		if flags&^leafFlagBucket != 0 {
			return nil, c.damage("%s: element %d has invalid flags %#x", what, i, flags)
		}
		pos, ksize, vsize := ne.Uint32(buf[at+4:]), ne.Uint32(buf[at+8:]), ne.Uint32(buf[at+12:])
		key, err := c.region(buf, at, pos, ksize, what, "key", i)
		if err != nil {
			return nil, err
		}
		val, err := c.region(buf, at, pos+ksize, vsize, what, "value", i)
		if err != nil || uint64(pos)+uint64(ksize) > uint64(^uint32(0)) {
			return nil, c.damage("%s: element %d's value (%d bytes) runs past the page's %d bytes", what, i, vsize, len(buf))
		}
		if err := c.inRange(key, prev, s, i, what); err != nil {
			return nil, err
		}
		prev = key
		if flags&leafFlagBucket == 0 {
			continue
		}
		name := printableName(key)
		if s.bucket != "the root bucket" {
			name = s.bucket + "/" + name
		}
		if len(val) < bucketHeader {
			return nil, c.damage("%s: bucket %s has a %d-byte header, want %d", what, name, len(val), bucketHeader)
		}
		root := ne.Uint64(val)
		if root != 0 {
			if root < 2 || root >= c.hwm {
				return nil, c.damage("%s: bucket %s's root page %d is outside the file's pages [2, %d)", what, name, root, c.hwm)
			}
			kids = append(kids, treeStep{id: root, bucket: "bucket " + name})
			continue
		}
		inline := val[bucketHeader:]
		iwhat := "the inline page of bucket " + name + " (in " + what + ")"
		if len(inline) < pageHeaderSize {
			return nil, c.damage("%s is %d bytes, shorter than a page header", iwhat, len(inline))
		}
		if fl := ne.Uint16(inline[8:]); fl != flagLeaf {
			return nil, c.damage("%s has an invalid flag %#x (want leaf 0x02)", iwhat, fl)
		}
		sub, err := c.leaf(inline, treeStep{bucket: "bucket " + name}, iwhat)
		if err != nil {
			return nil, err
		}
		kids = append(kids, sub...)
	}
	return kids, nil
}

// printableName shows a bucket name as text when it is printable.
func printableName(k []byte) string {
	for _, b := range k {
		if b < 0x20 || b > 0x7e {
			return fmt.Sprintf("%x", k)
		}
	}
	return string(k)
}

// freelist checks the freelist page: its flag, and every id in bounds, not
// listed twice and not reachable from the tree.
func (c *fileCheck) freelist(id uint64) error {
	what := "page " + strconv.FormatUint(id, 10) + " (the freelist)"
	buf, err := c.readPage(id, what)
	if err != nil {
		return err
	}
	if fl := ne.Uint16(buf[8:]); fl != flagFreelist {
		return c.damage("%s has an invalid flag %#x (want freelist 0x10)", what, fl)
	}
	data := buf[pageHeaderSize:]
	count := uint64(ne.Uint16(buf[10:]))
	if count == 0xFFFF {
		if len(data) < 8 {
			return c.damage("%s is too short for its count", what)
		}
		count, data = ne.Uint64(data), data[8:]
	}
	if count > uint64(len(data)/8) {
		return c.damage("%s lists %d pages, more than fit in %d bytes", what, count, len(buf))
	}
	for i := range count {
		p := ne.Uint64(data[i*8:])
		if p < 2 || p >= c.hwm {
			return c.damage("%s lists page %d, outside the file's pages [2, %d)", what, p, c.hwm)
		}
		if c.isMarked(p) {
			return c.damage("%s lists page %d, which is in use or listed twice (a damaged freelist would hand out live pages)", what, p)
		}
		c.mark(p)
	}
	return nil
}
