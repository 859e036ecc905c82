package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Checkpoints. A checkpoint makes the store file durable at one state
// (bbolt txid X) and names it in the log's header: X's meta page, and
// where in the log the records of the commits after X begin. Recovery
// starts from the newest header (wal.go).
//
// There are two kinds:
//   - A rewind (Store.checkpoint) stops the writer, syncs the file and
//     starts the log over at its first record. It is taken when the log
//     holds CheckpointBytes of records, after Store.Update (whose writes
//     are not logged), once the store is idle, and at close.
//   - A rolling checkpoint (Store.beginRolling) stops the writer only to
//     pin X and note where the log is; a goroutine then syncs the file
//     and writes the header while the writer commits on, logging after
//     that point. It is taken when the pages allocated since the last
//     checkpoint (what the pins keep from reuse) or the log's age reach
//     their bounds, which at 1,000 single publishes a second is every
//     second. Before it, every checkpoint stalled publishers for the
//     file's fdatasync: 3 ms at the median, tens of ms on a busy disk.
//
// The header has two slots, written in turn: a checkpoint writes the slot
// the durable header is not in, and the previous pin is released only
// once the new header is durable. A header torn by a power cut therefore
// leaves the previous one valid, with its pages still pinned and its
// records all still in the log (records are only written over after a
// rewind, whose header names the log's start).

// Header slots: slot i starts at i*walSlotSize; records start at
// walRecords. A slot holds the fixed fields and a meta page of up to
// 64 KiB, bbolt's largest page.
const (
	walSlotSize = 128 << 10
	walRecords  = 2 * walSlotSize
)

// Header magics: version 1 had one header, at 0, with the records right
// after it; version 2 has the slots. A version 1 log left by a crash of
// an older build is still recovered.
const (
	walMagicV1 = "MQGWAL01"
	walMagic   = "MQGWAL02"
)

// walHeader is a log header: the checkpoint its records start from.
type walHeader struct {
	gen      uint64 // counts the headers written into this log: the newest valid slot is the one
	base     uint64 // the bbolt txid of the checkpoint
	start    int64  // where the records of the commits after base begin
	segBytes int64  // the segment bounds the records were applied with
	segSpan  int64  // (ms)
	// rootSum is the checksum of the root page of the state at base. That
	// page is pinned, so it is on disk unchanged: a file whose page
	// differs is not the one the log was written for.
	rootSum uint32
	meta    []byte // the file's meta page at base, a whole page
}

func (h walHeader) encode() []byte {
	b := make([]byte, 0, 60+len(h.meta))
	b = append(b, walMagic...)
	b = binary.BigEndian.AppendUint64(b, h.gen)
	b = binary.BigEndian.AppendUint64(b, h.base)
	b = binary.BigEndian.AppendUint64(b, uint64(h.start))
	b = binary.BigEndian.AppendUint64(b, uint64(h.segBytes))
	b = binary.BigEndian.AppendUint64(b, uint64(h.segSpan))
	b = binary.BigEndian.AppendUint32(b, h.rootSum)
	b = binary.BigEndian.AppendUint32(b, uint32(len(h.meta)))
	b = append(b, h.meta...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// decodeWALHeader reads a header of either version; v1 tells which. A
// version 1 header's records start right after it.
func decodeWALHeader(b []byte) (h walHeader, v1 bool, err error) {
	if len(b) < 8 {
		return h, false, errors.New("no log-ahead header")
	}
	switch string(b[:8]) {
	case walMagicV1:
		v1 = true
	case walMagic:
	default:
		return h, false, errors.New("no log-ahead header")
	}
	rd := b[8:]
	field := func() uint64 {
		if len(rd) < 8 {
			rd = nil
			return 0
		}
		v := binary.BigEndian.Uint64(rd)
		rd = rd[8:]
		return v
	}
	if !v1 {
		h.gen = field()
	}
	h.base = field()
	if !v1 {
		h.start = int64(field())
	}
	h.segBytes, h.segSpan = int64(field()), int64(field())
	if len(rd) < 8 {
		return h, v1, errors.New("log-ahead header cut short")
	}
	h.rootSum = binary.BigEndian.Uint32(rd)
	ml := int(binary.BigEndian.Uint32(rd[4:]))
	rd = rd[8:]
	if ml > 1<<16 || len(rd) < ml+4 {
		return h, v1, errors.New("log-ahead header cut short")
	}
	n := len(b) - len(rd) + ml + 4
	if crc32.Checksum(b[:n-4], crcTable) != binary.BigEndian.Uint32(b[n-4:]) {
		return h, v1, errors.New("log-ahead header fails its checksum")
	}
	h.meta = bytes.Clone(rd[:ml])
	if v1 {
		h.start = int64(n)
	}
	return h, v1, nil
}

// newestHeader finds the header recovery starts from in the log's first
// bytes: the valid slot written last, or a version 1 header. slot is the
// slot it is in (0 for version 1). (Two headers may name the same
// checkpoint, a rewind and a rolling one with nothing committed between,
// whose records start at different places: hence gen, not base.)
func newestHeader(raw []byte) (h walHeader, slot int, err error) {
	h, v1, err := decodeWALHeader(raw)
	if err == nil && v1 {
		return h, 0, nil
	}
	if len(raw) > walSlotSize {
		h1, v1, err1 := decodeWALHeader(raw[walSlotSize:])
		if err1 == nil && !v1 && (err != nil || h1.gen > h.gen) {
			return h1, 1, nil
		}
		if err != nil && err1 != nil {
			err = fmt.Errorf("slot 0: %v; slot 1: %v", err, err1)
		}
	}
	return h, 0, err
}

// nextSlot is the slot the next checkpoint of the log f writes, the one
// its newest header is not in, and that header's gen. After a version 1
// header, or none, it is slot 0 (a version 1 log's records run over
// slot 1).
func nextSlot(f *os.File) (slot int, gen uint64, err error) {
	raw := make([]byte, walRecords)
	n, err := f.ReadAt(raw, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, fmt.Errorf("read the log-ahead's header: %w", err)
	}
	h, slot, err := newestHeader(raw[:n])
	if err != nil || h.start < walRecords { // none, or version 1
		return 0, 0, nil
	}
	return 1 - slot, h.gen, nil
}

// pinCheckpoint pins the store's current state and makes the header that
// names it, with its records starting at start. The caller holds wmu
// with no write transaction open.
func (s *Store) pinCheckpoint(start int64) (walHeader, *bolt.Tx, error) {
	w := s.wal
	pin, err := s.db.Begin(false)
	if err != nil {
		return walHeader{}, nil, err
	}
	txid := uint64(pin.ID())
	meta := make([]byte, w.pageSize)
	if _, err := w.dbf.ReadAt(meta, int64(txid%2)*int64(w.pageSize)); err != nil {
		_ = pin.Rollback()
		return walHeader{}, nil, fmt.Errorf("read the meta page at a checkpoint: %w", err)
	}
	if got, ok := metaTxid(meta); !ok || got != txid {
		_ = pin.Rollback()
		return walHeader{}, nil, fmt.Errorf("checkpoint: meta page %d holds txid %d (valid %v), want %d", txid%2, got, ok, txid)
	}
	rootSum, err := pageSum(w.dbf, meta)
	if err != nil {
		_ = pin.Rollback()
		return walHeader{}, nil, fmt.Errorf("read the root page at a checkpoint: %w", err)
	}
	w.gen++
	return walHeader{gen: w.gen, base: txid, start: start, segBytes: s.opts.SegmentBytes, segSpan: s.opts.SegmentSpan.Milliseconds(),
		rootSum: rootSum, meta: meta}, pin, nil
}

// writeHeader writes a header into slot and syncs it.
func (w *walLog) writeHeader(h walHeader, slot int) error {
	if _, err := w.f.WriteAt(h.encode(), int64(slot)*walSlotSize); err != nil {
		return fmt.Errorf("write the log-ahead header: %w", err)
	}
	if err := fdatasync(w.f); err != nil {
		return fmt.Errorf("sync the log-ahead header: %w", err)
	}
	return nil
}

// installed makes pin the checkpoint's, once its header in slot is
// durable: the previous pin goes, and the next header goes in the other
// slot.
func (w *walLog) installed(pin *bolt.Tx, slot int) {
	if w.pin != nil {
		_ = w.pin.Rollback()
	}
	w.pin, w.slot = pin, 1-slot
}

// checkpoint is a rewind: it syncs the bbolt file and starts the log over
// from its current state. The caller holds wmu and no write transaction
// is open. On failure the log is broken: the previous header and pin are
// kept, so recovery still works from the previous checkpoint.
func (s *Store) checkpoint() error { return s.rewind(false) }

// rewind is checkpoint; forceFreelist writes bbolt's freelist into the
// checkpoint whatever its size (Close: the next open reads it).
func (s *Store) rewind(forceFreelist bool) error {
	w := s.wal
	t0 := time.Now() // waiting for a rolling checkpoint is the writer's wait too
	defer func() { s.stats.checkpointNanos.Add(uint64(time.Since(t0))) }()
	if err := s.finishRolling(true); err != nil {
		return err
	}
	if err := w.err(); err != nil {
		return err
	}
	if err := s.writeFreelist(forceFreelist); err != nil {
		return err
	}
	if h := s.opts.SyncHook; h != nil {
		h(SyncCheckpoint)
	}
	if err := s.db.Sync(); err != nil {
		return w.fail(fmt.Errorf("sync the store file at a checkpoint: %w", err))
	}
	if w.end < walRecords {
		// The slots and the first records land on allocated bytes, so
		// their fdatasyncs sync data only (see walGrowStep).
		if err := w.zeroFill(w.end, walRecords+walGrowStep); err != nil {
			return w.fail(fmt.Errorf("extend the log-ahead: %w", err))
		}
	}
	h, pin, err := s.pinCheckpoint(walRecords)
	if err != nil {
		return w.fail(err)
	}
	if err := w.writeHeader(h, w.slot); err != nil {
		_ = pin.Rollback()
		return w.fail(err)
	}
	w.installed(pin, w.slot)
	// The file holds every commit up to the pin's, and the header names
	// it: a Store.Update's writes, which no record holds, are durable now.
	if w.dur != nil {
		w.dur.mark(uint64(pin.ID()))
	}
	w.off, w.records, w.pages = walRecords, false, 0
	w.dbSize = pin.Size()
	s.stats.checkpoints.Add(1)
	s.releaseWritten()
	return nil
}

// rolling is a rolling checkpoint under way: its goroutine syncs the file
// and writes the header, then closes done.
type rolling struct {
	pin  *bolt.Tx
	slot int
	done chan struct{}
	err  error // set before done closes
}

// beginRolling starts a rolling checkpoint of the current state, unless
// one is under way. The caller holds wmu, between groups. The records the
// writer logs from here on follow the point the new header names.
func (s *Store) beginRolling() error {
	w := s.wal
	if w.rolling != nil {
		return nil
	}
	t0 := time.Now()
	defer func() { s.stats.checkpointNanos.Add(uint64(time.Since(t0))) }()
	if err := s.writeFreelist(false); err != nil {
		return err
	}
	h, pin, err := s.pinCheckpoint(w.off)
	if err != nil {
		return w.fail(err)
	}
	r := &rolling{pin: pin, slot: w.slot, done: make(chan struct{})}
	w.rolling = r
	w.records, w.pages = false, 0
	hook := s.beforeRollingSync
	go func() {
		defer close(r.done)
		if hook != nil {
			hook()
		}
		// Every page of the pinned state was written before this sync
		// began, so it is on disk when the sync returns; the commits the
		// writer makes meanwhile may or may not be, which is what their
		// records are for.
		if err := s.db.Sync(); err != nil {
			r.err = fmt.Errorf("sync the store file at a checkpoint: %w", err)
			return
		}
		if r.err = w.writeHeader(h, r.slot); r.err == nil {
			s.releaseWritten()
		}
	}()
	return nil
}

// finishRolling installs a rolling checkpoint that is done: waiting for
// it with wait, else only if it already is. The caller holds wmu. A
// failed one breaks the log, as a failed rewind does.
func (s *Store) finishRolling(wait bool) error {
	w := s.wal
	r := w.rolling
	if r == nil {
		return nil
	}
	if wait {
		<-r.done
	} else {
		select {
		case <-r.done:
		default:
			return nil
		}
	}
	w.rolling = nil
	if r.err != nil {
		_ = r.pin.Rollback()
		return w.fail(r.err)
	}
	w.installed(r.pin, r.slot)
	s.stats.checkpoints.Add(1)
	return nil
}

// checkpointFreelistPages bounds the freelist a checkpoint writes: at
// most this many free and pending pages (a 256 KiB freelist, 128 MiB of
// free space with 4 KiB pages). Writing it stops the writer for about
// 130 ns a page (BenchmarkCheckpointFreelist: 4.1 ms for 34,000 pages,
// 17 ms for 134,000), so the bound keeps that stall to about 4 ms. Under
// load the freelist is mostly the pages freed since the previous
// checkpoint, which its pin still holds: at most CheckpointBytes' worth
// (16,384 pages by default); at 14,000 single publishes a second it
// added 0.5 ms a checkpoint, 0.1% of the writer's time. A variable for
// tests: -1 writes none.
var checkpointFreelistPages = 1 << 15

// writeFreelist makes the state the next checkpoint pins list its free
// pages, so that a start after a crash finds the freelist in the
// checkpoint's meta page: the pre-check then reads the meta pages, the
// size and the freelist instead of every page of the file, and bbolt
// loads the freelist instead of walking the whole tree to rebuild it. On
// a filled 30 GB store those two reads of every page took minutes.
//
// It commits an empty transaction with the freelist written, as Close
// does, unless the freelist is larger than checkpointFreelistPages and
// force is false: the commits between checkpoints do not write it (see
// openBolt), and a large freelist is costly to write every second (the
// walk it would save is over the pages in use, which are few when so
// many are free).
//
// It runs before the checkpoint's file sync, so the freelist page is
// durable with the pages of the tree: a meta page that names a freelist
// is, in the file as a crash leaves it, one that a sync or a clean close
// made durable (recovery puts the file back to a checkpoint's meta page,
// wal.go). The next commit frees the freelist page, and the checkpoint's
// pin keeps it, like every page of the pinned state, from reuse. With
// the log-ahead the commit is logged as an empty group: recovery from an
// earlier header redoes the log's records in txid order and must find no
// gap. Close without the log-ahead calls it with force.
//
// The caller holds wmu with no write transaction open. A failure that is
// not the log's leaves the checkpoint without a freelist, which costs
// only the walk after a crash.
func (s *Store) writeFreelist(force bool) error {
	w := s.wal // nil without the log-ahead (Close only): nothing to log
	if st := s.db.Stats(); !force && st.FreePageN+st.PendingPageN > checkpointFreelistPages {
		return nil
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	txid := uint64(tx.ID())
	if w != nil {
		// A failed append leaves nothing of the record in the log.
		err = w.logGroup(txid, 0, nil)
	}
	if err != nil {
		_ = tx.Rollback()
	} else {
		// Read by this commit, under bbolt's writer lock like every commit's.
		s.db.NoFreelistSync = false
		err = tx.Commit()
		s.db.NoFreelistSync = !syncFreelist
		if err != nil && w != nil {
			w.logVoid(txid)
		}
	}
	if err != nil {
		// The checkpoint goes on without a freelist unless the log is broken.
		s.log.Warn().Err(err).Msg("freelist not written; a start after a crash rebuilds it")
		if w == nil {
			return nil
		}
		return w.err()
	}
	if w != nil && w.dur != nil {
		w.dur.wroteNothing(txid)
	}
	s.stats.freelists.Add(1)
	return nil
}

// releaseMappingPages is how many pages the group commits allocate
// between two releases of the file's mapping (256 MiB), so the mapped
// part of the resident memory stays below about that plus the pages in
// use. After a release the pages in use fault back in: with a release
// every 64 MiB (about once a second at 1,000 single publishes a second)
// publish->receive p99 was 1.12x that without (8 paired rounds), every
// 256 MiB 1.03x. A variable for tests.
var releaseMappingPages uint64 = 64 << 10

// releaseWritten releases the process's mapping of the file
// (ReleaseMapping) once the group commits have allocated
// releaseMappingPages since the last time: a commit reads back through
// the map the pages the one before wrote, so without it every page
// written would stay resident (a 20 GiB fill left 4 GiB). It runs after
// a checkpoint: a rewind's, on the writer, which already waited for a
// sync; a rolling one's, in its goroutine, beside the writer.
func (s *Store) releaseWritten() {
	n := s.stats.pages.Load()
	if n-s.releasedAt.Load() < releaseMappingPages {
		return
	}
	s.releasedAt.Store(n)
	if err := s.ReleaseMapping(); err != nil {
		s.log.Warn().Err(err).Msg("checkpoint: the file's mapping not released")
	}
}
