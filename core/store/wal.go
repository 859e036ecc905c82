package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// The log-ahead. A group commit used to be a bbolt commit with bbolt's two
// fdatasyncs of scattered pages. Now the writer writes the group's record
// to mqgate.wal and commits the group to bbolt without syncing either; the
// syncer then makes it durable with one fdatasync of sequential bytes
// while the writer commits the next group, and only then answers it and
// opens its queues' gates to readers (gate.go). Every so often a
// checkpoint syncs the bbolt file and moves the log's start past what the
// file now holds (checkpoint.go).
//
// Why an unsynced bbolt file can be recovered: after a power cut such a
// file may hold any mix of the page writes made since its last sync,
// including a meta page that points at pages never written. Two things
// make the state of the last checkpoint recoverable from it anyway:
//   - a read transaction opened at the checkpoint (the pin) stays open
//     until the next one, and bbolt never reuses a page that a reader may
//     still see, so no page of that state is written over;
//   - the meta page of that state is copied into the log's header, since
//     bbolt writes its two meta pages in turn.
//
// Open puts that meta page back, which brings the file back to the
// checkpoint exactly, and redoes the log's records on it in order.
//
// A record holds a group's requests as the writer applied them: every op
// with its record bytes and where it landed, and every hook's writes as
// recorded (walrec.go). The writer's append is deterministic given the
// state, the ops and the group's store time, so redoing the ops gives the
// same offsets; redo checks that it does.
//
// Writes outside group commit (Store.Update) are not logged: each is
// followed by a checkpoint.
//
// The pin needs the file's mapping never to be remapped while it is held
// (bbolt remaps under a lock that waits for every reader), so the file is
// mapped at its largest size up front (mmapSize) and the writer refuses
// to grow it past that.

// WALName is the log-ahead's file in the data directory.
const WALName = "mqgate.wal"

// Checkpoint thresholds: the writer starts the log over when it holds
// this many bytes of records; it takes a rolling checkpoint when the
// group commits since the last one allocated this many bytes of pages
// (what the pin keeps from being reused), or this long after the first
// record; and it starts the log over when no group came for a second
// (CheckpointIdle) and the log holds records. checkpoint.go has the two
// kinds.
const (
	DefaultCheckpointBytes    = 64 << 20
	DefaultCheckpointInterval = 30 * time.Second
	DefaultCheckpointIdle     = time.Second
)

// mmapSize is the size of bbolt's mapping of the file: the file may not
// grow past it while the store runs (mapping it costs address space only).
const mmapSize = 1 << 40

// Record kinds.
const (
	walGroup byte = 1 // a group commit
	walVoid  byte = 2 // the group with this txid did not commit after all
)

// Offsets in a bbolt meta page: the page header is 16 bytes, then the
// meta: magic, version, page size, flags (4 bytes each), root bucket (16),
// freelist, high-water page id, txid, checksum (8 each).
const (
	metaMagicAt    = 16
	metaRootAt     = 16 + 16
	metaTxidAt     = 16 + 16 + 16 + 8 + 8
	metaChecksumAt = metaTxidAt + 8
	boltMagic      = 0xED0CDAED
)

// metaTxid returns the txid of a meta page and whether the page is a
// valid meta (magic and checksum).
func metaTxid(page []byte) (uint64, bool) {
	if len(page) < metaChecksumAt+8 || binary.LittleEndian.Uint32(page[metaMagicAt:]) != boltMagic {
		return 0, false
	}
	// bbolt's checksum: FNV-64a over the meta up to its checksum field.
	h := uint64(14695981039346656037)
	for _, c := range page[metaMagicAt:metaChecksumAt] {
		h ^= uint64(c)
		h *= 1099511628211
	}
	if h != binary.LittleEndian.Uint64(page[metaChecksumAt:]) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(page[metaTxidAt:]), true
}

// pageSum is the checksum of the root page named by a meta page.
func pageSum(f *os.File, meta []byte) (uint32, error) {
	root := int64(binary.LittleEndian.Uint64(meta[metaRootAt:]))
	page := make([]byte, len(meta))
	if _, err := f.ReadAt(page, root*int64(len(meta))); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return crc32.Checksum(page, crcTable), nil
}

// walLog is the writer's side of the log. The writer and Update use it
// under Store.wmu only.
type walLog struct {
	f        *os.File // the log
	dbf      *os.File // the bbolt file, read for its meta pages
	pageSize int
	off      int64    // where the next record goes
	end      int64    // the file's size: bytes below it are allocated
	pin      *bolt.Tx // the read transaction holding the checkpoint's pages
	slot     int      // the header slot the next checkpoint writes
	gen      uint64   // the gen of the last header made (walHeader)
	rolling  *rolling // the rolling checkpoint under way, if any
	// broken is set when the log cannot be trusted to hold what it was
	// given (a failed fdatasync, a write that could not be undone); every
	// commit fails with it until a restart. The syncer sets it too.
	broken atomic.Pointer[error]
	buf    []byte
	// What the checkpoint thresholds count since the last checkpoint.
	records bool
	firstAt time.Time // when the first record since the checkpoint came
	pages   int64
	dbSize  int64 // the file's size after the last commit
	// unsynced counts the pages committed since the syncer last started
	// the store file's writeback (the writer adds, the syncer resets).
	unsynced atomic.Int64
	// dur is the store's read barrier: told what is logged, voided and
	// made durable, and that the log broke (durable.go).
	dur *durability
}

// openWAL opens (creating) the log of the store at path. The writer's
// first checkpoint writes its header, into the slot the newest header
// found is not in.
func openWAL(path string, pageSize int) (*walLog, error) {
	f, err := os.OpenFile(filepath.Join(filepath.Dir(path), WALName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the log-ahead: %w", err)
	}
	w := &walLog{f: f, pageSize: pageSize}
	fi, err := f.Stat()
	if err == nil {
		w.end = fi.Size()
		w.slot, w.gen, err = nextSlot(f)
	}
	if err == nil {
		w.dbf, err = os.Open(path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path)) // the log's name, if just created
	}
	if err != nil {
		if w.dbf != nil {
			w.dbf.Close()
		}
		f.Close()
		return nil, err
	}
	return w, nil
}

// close releases the pins and closes the files, after waiting for a
// rolling checkpoint under way (Close's rewind has normally finished it).
func (w *walLog) close() error {
	if r := w.rolling; r != nil {
		<-r.done
		_ = r.pin.Rollback()
		w.rolling = nil
	}
	if w.pin != nil {
		_ = w.pin.Rollback()
		w.pin = nil
	}
	w.dbf.Close()
	return w.f.Close()
}

func (w *walLog) fail(err error) error {
	err = core.Errorf(core.EUnavailable, "the store's log-ahead failed; restart the gateway: %v", err)
	w.broken.CompareAndSwap(nil, &err)
	if w.dur != nil {
		w.dur.fail()
	}
	return w.err()
}

// err is the error that broke the log, or nil.
func (w *walLog) err() error {
	if p := w.broken.Load(); p != nil {
		return *p
	}
	return nil
}

// sync makes every record written so far durable: the syncer's one
// fdatasync for the groups it answers. After a failed fdatasync the
// kernel may have dropped the pages, so what is on disk is unknown (the
// "fsyncgate" lesson): the log is broken. On success the read barrier
// learns the last txid logged before it began, unless a record was
// voided meanwhile (its txid is used again; the next sync covers it).
func (w *walLog) sync() error {
	d := w.dur
	var logged, voids uint64
	if d != nil {
		logged, voids = d.logged.Load(), d.voids.Load()
	}
	if err := fdatasync(w.f); err != nil {
		return w.fail(fmt.Errorf("sync the log-ahead: %w", err))
	}
	if err := w.err(); err != nil {
		return err
	}
	if d != nil && d.voids.Load() == voids {
		d.mark(logged)
	}
	return nil
}

// checkpointKind is what a checkpoint due now is.
type checkpointKind int

const (
	noCheckpoint checkpointKind = iota
	rollingCheckpoint
	rewindCheckpoint
)

// due reports which checkpoint, if any, the log's growth and age call for.
func (w *walLog) due(opts *Options) checkpointKind {
	switch {
	case w.off >= walRecords+opts.CheckpointBytes:
		return rewindCheckpoint
	case w.pages*int64(w.pageSize) >= opts.CheckpointBytes || w.records && time.Since(w.firstAt) >= opts.CheckpointInterval:
		return rollingCheckpoint
	}
	return noCheckpoint
}

// roomFor fails a group that could grow the file past the mapping.
func (w *walLog) roomFor(bytes int) error {
	if w.dbSize+int64(4*bytes)+(4<<30) > mmapSize {
		return core.Errorf(core.EUnavailable, "the store file (%d bytes) is at this build's limit of %d bytes", w.dbSize, int64(mmapSize))
	}
	return nil
}

// logGroup writes the record of a group about to commit as txid; the
// syncer syncs it. Requests that failed (r.err) wrote nothing and are left out.
func (w *walLog) logGroup(txid uint64, storedAt int64, reqs []*Request) error {
	b := binary.AppendVarint(w.record(walGroup, txid), storedAt)
	n := 0
	for _, r := range reqs {
		if r.err == nil {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for _, r := range reqs {
		if r.err != nil {
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(r.ops)))
		for i := range r.ops {
			b = appendWALOp(b, &r.ops[i], r.placed[i])
		}
		b = appendString(b, r.rec.buf)
	}
	w.buf = b
	if err := w.append(b); err != nil {
		return err
	}
	if w.dur != nil {
		w.dur.logged.Store(txid)
	}
	return nil
}

// logVoid records that txid, logged, did not commit.
func (w *walLog) logVoid(txid uint64) {
	if w.dur != nil {
		w.dur.voids.Add(1)
		w.dur.logged.Store(txid - 1)
	}
	if err := w.append(w.record(walVoid, txid)); err != nil {
		// The group's record stands: after a crash it would be redone,
		// though its publishers were told it failed. Stop here instead.
		w.fail(err)
	}
}

// record starts a record of kind for txid in the log's buffer, after
// room for the frame append fills in.
func (w *walLog) record(kind byte, txid uint64) []byte {
	w.buf = append(w.buf[:0], 0, 0, 0, 0, 0, 0, 0, 0, kind)
	return binary.BigEndian.AppendUint64(w.buf, txid)
}

// append frames b (whose first 8 bytes are room for the frame) and writes
// it at the log's end; the syncer syncs it.
func (w *walLog) append(b []byte) error {
	if err := w.err(); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-8))
	binary.BigEndian.PutUint32(b[4:], crc32.Checksum(b[8:], crcTable))
	_, err := w.f.WriteAt(b, w.off)
	if err == nil && w.off+int64(len(b)) > w.end {
		err = w.grow(w.off + int64(len(b)))
	}
	if err != nil {
		// Nothing after off counts (recovery stops at the first record
		// that fails its checksum), but a record written later must not
		// follow a torn one that happens to pass: put the bytes back.
		if terr := w.f.Truncate(w.off); terr != nil {
			return w.fail(fmt.Errorf("write: %v; and undoing it: %v", err, terr))
		}
		w.end = w.off
		return core.Errorf(core.EUnavailable, "write the log-ahead: %v", err)
	}
	w.off += int64(len(b))
	if !w.records {
		w.records, w.firstAt = true, time.Now()
	}
	return nil
}

// walGrowStep is how far ahead of its records the log is written with
// zeros. fdatasync of a write inside the file's size syncs the data only;
// of a write that grows the file, the size too, a journal commit that
// measured 2.4 times slower here. The log is reused from its start at
// each rewind (checkpoint.go), so it grows only until it holds one round.
const walGrowStep = 4 << 20

// zeros is what grow writes, a chunk at a time.
var zeros [256 << 10]byte

// grow writes zeros from the end of the file to a step past need, so the
// next records overwrite allocated bytes.
func (w *walLog) grow(need int64) error {
	return w.zeroFill(max(w.end, need), need+walGrowStep)
}

// zeroFill writes zeros over [from, to) and makes to the file's end.
func (w *walLog) zeroFill(from, to int64) error {
	for at := from; at < to; at += int64(len(zeros)) {
		if _, err := w.f.WriteAt(zeros[:min(int64(len(zeros)), to-at)], at); err != nil {
			return err
		}
	}
	w.end = to
	return nil
}

func appendWALOp(b []byte, op *Op, p Placed) []byte {
	b = appendString(b, op.Topic)
	b = binary.AppendUvarint(b, uint64(op.QueueID))
	b = appendString(b, op.Record)
	b = appendString(b, op.ID)
	b = binary.AppendUvarint(b, uint64(len(op.Keys)))
	for _, k := range op.Keys {
		b = appendString(b, k)
	}
	b = binary.AppendVarint(b, op.TagsCode)
	b = binary.AppendUvarint(b, uint64(op.AutoCreate))
	b = binary.AppendUvarint(b, op.ExpectUID)
	b = binary.AppendVarint(b, p.QueueOffset)
	return binary.AppendVarint(b, p.CommitLogOffset)
}

// walRecovery is what Open found in the log: the records to redo on the
// checkpoint, which recoverWAL has already put back.
type walRecovery struct {
	header  walHeader
	records [][]byte // payloads, in order, voided groups removed
	tail    string   // why reading stopped before the end, if it did
}

// recoverWAL reads the log of the store at path and, when it holds a
// checkpoint, puts the checkpoint's meta page back into the file, so the
// file opens at that state; the records are redone after bbolt opens
// (Store.redoWAL). It returns nil when there is no log to recover.
func recoverWAL(path string) (*walRecovery, error) {
	rec, err := readWAL(path)
	if rec == nil || err != nil || rec.header.meta == nil {
		return rec, err
	}
	if err := restoreMeta(path, rec.header); err != nil {
		return nil, err
	}
	return rec, nil
}

// ErrUnsettled refuses to read a store file offline while a crash left it
// unsettled: its log-ahead holds commits the file may lack, or the file is
// past the log's checkpoint (checkSettled).
var ErrUnsettled = errors.New("the store was not closed cleanly: its log-ahead holds commits the file may lack, " +
	"or the file holds page writes of commits never answered, which a start undoes: " +
	"start the gateway once (it recovers the file) and stop it, or back up through the running gateway")

// checkSettled fails with ErrUnsettled when the log-ahead next to the
// store file at path holds records (a crash, or a server running), or
// when the file is not at the log's checkpoint: after a power cut that
// lost the log's unsynced records, the file may still hold some of the
// page writes of those commits, a meta page naming pages never written
// among them. Open puts the checkpoint's meta page back (restoreMeta);
// read as it is, the file may look damaged, or hold a state no start
// would open.
func checkSettled(path string) error {
	rec, err := readWAL(path)
	if err != nil {
		return err
	}
	if rec == nil {
		return nil
	}
	if len(rec.records) == 0 {
		ahead, err := aheadOfCheckpoint(path, rec.header)
		if err != nil || !ahead {
			return err
		}
	}
	// A running server's log holds records too: say that instead.
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := sharedLock(f, lockTimeout); err != nil {
		return fmt.Errorf("%s: %w (file lock not acquired within %v)", path, err, lockTimeout)
	}
	return fmt.Errorf("%s: %w", path, ErrUnsettled)
}

// aheadOfCheckpoint reports whether the file at path, which the log with
// header h belongs to, is not exactly at h's checkpoint: whether Open's
// restoreMeta would write its meta pages. A log without a checkpoint,
// or one written for another file (Open refuses that pair, and the file
// is read as it is), is not ahead.
func aheadOfCheckpoint(path string, h walHeader) (bool, error) {
	if h.meta == nil {
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	pages, err := readMetaPages(f, len(h.meta))
	if err != nil {
		return false, err
	}
	if ok, err := logBelongs(f, h, pages); err != nil || !ok {
		return false, err
	}
	return len(slotsToRestore(h, pages)) > 0, nil
}

// readWAL parses the log next to the store file at path; nil when there
// is none. A header that does not parse gives a recovery without one.
func readWAL(path string) (*walRecovery, error) {
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), WALName))
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(raw) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the log-ahead: %w", err)
	}
	h, _, err := newestHeader(raw)
	if err != nil {
		// With no valid header at all, the one torn was the first written
		// into this log (a new log, or the first after an upgrade), by a
		// rewind: after the file was synced and before anything new was
		// committed, so the file is exactly at that checkpoint.
		return &walRecovery{tail: err.Error()}, nil
	}
	rec := &walRecovery{header: h}
	next := h.base + 1
	for off := int(h.start); off >= 0 && len(raw)-off >= 8; {
		size := int(binary.BigEndian.Uint32(raw[off:]))
		if size == 0 {
			break // the zeros written ahead of the records
		}
		if size < 9 || len(raw)-off-8 < size {
			rec.tail = fmt.Sprintf("record at %d cut short", off)
			break
		}
		p := raw[off+8 : off+8+size]
		if crc32.Checksum(p, crcTable) != binary.BigEndian.Uint32(raw[off+4:]) {
			rec.tail = fmt.Sprintf("record at %d fails its checksum", off)
			break
		}
		txid := binary.BigEndian.Uint64(p[1:])
		if p[0] == walVoid && len(rec.records) > 0 && txid == next-1 {
			rec.records = rec.records[:len(rec.records)-1]
			next--
		} else if p[0] == walGroup && txid == next {
			rec.records = append(rec.records, p)
			next++
		} else {
			break // records of an earlier round of the log, behind the header
		}
		off += 8 + size
	}
	return rec, nil
}

// restoreMeta brings the file back to the checkpoint, after checking that
// the log belongs to it: the checkpoint's meta page goes back into its
// slot, and a newer meta page in the other slot (a commit since) is
// replaced by a copy of it. A file already at the checkpoint (closed
// cleanly) is not written.
func restoreMeta(path string, h walHeader) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("recover from the log-ahead: %w", err)
	}
	defer f.Close()
	if err := exclusiveLock(f, lockTimeout); err != nil {
		if errors.Is(err, ErrLocked) {
			return fmt.Errorf("%s: %w (file lock not acquired within %v)", path, ErrLocked, lockTimeout)
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	pages, err := readMetaPages(f, len(h.meta))
	if err != nil {
		return fmt.Errorf("recover from the log-ahead: %w", err)
	}
	if ok, err := logBelongs(f, h, pages); err != nil {
		return fmt.Errorf("recover from the log-ahead: %w", err)
	} else if !ok {
		newest, _ := newestMeta(pages)
		return fmt.Errorf("the log-ahead %s was not written for %s: it starts at transaction %d, whose root page the file "+
			"does not hold (the file is at transaction %d). Was the file replaced, e.g. by a backup, without the log? "+
			"The file was not modified; move %s away to open it as it is",
			WALName, filepath.Base(path), h.base, newest, WALName)
	}
	slots := slotsToRestore(h, pages)
	for _, slot := range slots {
		page := bytes.Clone(h.meta)
		binary.LittleEndian.PutUint64(page, uint64(slot)) // the page header's id
		if _, err := f.WriteAt(page, int64(slot)*int64(len(h.meta))); err != nil {
			return fmt.Errorf("recover from the log-ahead: %w", err)
		}
	}
	if len(slots) == 0 {
		return nil
	}
	return fdatasync(f)
}

// readMetaPages reads the file's two meta pages of ps bytes each.
func readMetaPages(f *os.File, ps int) ([2][]byte, error) {
	var pages [2][]byte
	for slot := range pages {
		pages[slot] = make([]byte, ps)
		if _, err := f.ReadAt(pages[slot], int64(slot*ps)); err != nil && !errors.Is(err, io.EOF) {
			return pages, err
		}
	}
	return pages, nil
}

// newestMeta is the highest txid of the valid meta pages among pages,
// and whether there is one.
func newestMeta(pages [2][]byte) (newest uint64, valid bool) {
	for _, p := range pages {
		if txid, ok := metaTxid(p); ok {
			valid = true
			newest = max(newest, txid)
		}
	}
	return newest, valid
}

// logBelongs reports whether the log with header h was written for the
// file f, whose meta pages are pages: the file holds the checkpoint's
// root page and is not older than the checkpoint.
func logBelongs(f *os.File, h walHeader, pages [2][]byte) (bool, error) {
	rootSum, err := pageSum(f, h.meta)
	if err != nil {
		return false, err
	}
	newest, valid := newestMeta(pages)
	// The checkpoint's own meta slot may be torn, leaving the one before.
	return !(valid && newest+1 < h.base || rootSum != h.rootSum), nil
}

// slotsToRestore lists the meta slots restoreMeta writes the checkpoint's
// meta page into: its own slot unless it holds that page already, and the
// other unless it holds a valid meta older than the checkpoint (a newer
// one is a commit since, a torn one may have been). None for a file at
// the checkpoint exactly (closed cleanly).
func slotsToRestore(h walHeader, pages [2][]byte) []int {
	var slots []int
	for slot := range pages {
		txid, ok := metaTxid(pages[slot])
		own := uint64(slot) == h.base%2
		if own && bytes.Equal(pages[slot], h.meta) || !own && ok && txid < h.base {
			continue
		}
		slots = append(slots, slot)
	}
	return slots
}

// redoWAL redoes the recovered records on the freshly opened file, each in
// a transaction of its own with the txid it had, and syncs the result.
func (s *Store) redoWAL(rec *walRecovery) error {
	if len(rec.records) == 0 {
		return nil
	}
	opts := s.opts
	opts.SegmentBytes, opts.SegmentSpan = rec.header.segBytes, time.Duration(rec.header.segSpan)*time.Millisecond
	// The checkpoint's pages stay untouched until a new header names a
	// newer state: a crash during the redo, or before this run's first
	// checkpoint, recovers from the same checkpoint again.
	pin, err := s.db.Begin(false)
	if err != nil {
		return err
	}
	s.recoveryPin = pin
	s.db.NoSync = true
	defer func() { s.db.NoSync = false }()
	for _, p := range rec.records {
		if err := s.redoGroup(p, &opts); err != nil {
			return fmt.Errorf("redoing the log-ahead: %w", err)
		}
	}
	return s.db.Sync()
}

func (s *Store) redoGroup(p []byte, opts *Options) error {
	txid := binary.BigEndian.Uint64(p[1:])
	rd := reader{b: p[9:]}
	storedAt := rd.varint()
	n := rd.count()
	tx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if uint64(tx.ID()) != txid {
		return fmt.Errorf("record of transaction %d meets the file at %d", txid, tx.ID())
	}
	st := newTxState(tx, storedAt, opts)
	for range n {
		ops := make([]Op, rd.count())
		want := make([]Placed, len(ops))
		for i := range ops {
			op := &ops[i]
			op.Topic, op.QueueID, op.Record, op.ID = rd.str(), int(rd.uvarint()), rd.bytes(), rd.str()
			if k := rd.count(); k > 0 {
				op.Keys = make([]string, k)
				for j := range op.Keys {
					op.Keys[j] = rd.str()
				}
			}
			op.TagsCode, op.AutoCreate, op.ExpectUID = rd.varint(), int(rd.uvarint()), rd.uvarint()
			want[i].QueueOffset, want[i].CommitLogOffset = rd.varint(), rd.varint()
		}
		hook := rd.bytes()
		if rd.err != nil {
			return fmt.Errorf("record of transaction %d: %v", txid, rd.err)
		}
		if err := st.prepare(ops); err != nil {
			return fmt.Errorf("transaction %d: %w", txid, err)
		}
		placed, err := st.apply(ops)
		if err != nil {
			return fmt.Errorf("transaction %d: %w", txid, err)
		}
		for i := range placed {
			if placed[i].QueueOffset != want[i].QueueOffset || placed[i].CommitLogOffset != want[i].CommitLogOffset {
				return fmt.Errorf("transaction %d: %s queue %d placed at %d/%d, logged at %d/%d", txid, ops[i].Topic, ops[i].QueueID,
					placed[i].QueueOffset, placed[i].CommitLogOffset, want[i].QueueOffset, want[i].CommitLogOffset)
			}
		}
		if err := redo(tx, hook); err != nil {
			return fmt.Errorf("transaction %d: %w", txid, err)
		}
	}
	if _, err := st.flush(); err != nil {
		return err
	}
	return tx.Commit()
}
