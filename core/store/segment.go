package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Segments (layout version 2). The commit log, the consume queues and the
// id and key indexes are cut into segments, one nested bucket each under
// mq.segs, keyed by the commit log offset of the segment's first record
// (RocketMQ's commit log files, named by their start offset):
//
//	mq.segs   start(8) -> segment bucket; Sequence() = next commit log offset
//	            info    created(8) last stored(8) bytes(8) records(8) first page(8)
//	            cl      commit log offset(8) -> record (codec.go)
//	            cq      uid(8) block(8) qid(2) queue offset(8) -> unit(20)
//	            queues  uid(8) qid(2) -> the queue's first offset in the segment
//	            ids     message id -> commit log offset(8)
//	            keys    len+topic, len+key, commit log offset(8) -> empty
//	mq.qsegs  uid(8) qid(2) first offset(8) -> segment start(8)
//
// The writer appends to the newest segment and starts a new one when it
// holds Options.SegmentBytes of records or is Options.SegmentSpan old, so
// a segment covers a bounded stretch of time and data. A queue's units
// are contiguous across segments in offset order; mq.qsegs says where
// each queue's stretch in each segment begins, so a unit is one seek
// away. Consume-queue keys put a block of offsets before the queue id:
// the units one group commit appends to the queues of a topic that grow
// together (round robin) then sit side by side on one or two pages,
// instead of one page per queue.
//
// Retention first moves queue min offsets (trimQueue: a binary search by
// store time, whole segments skipped by their info, no record removed),
// then drops whole segments in which no unit is visible any more
// (dropSegment: bbolt's DeleteBucket frees its pages; nothing is decoded
// and no index entry is deleted one by one). A deleted topic's queues
// have no metadata, so its units never keep a segment alive; they go
// with the segments that hold them. A record stays readable by commit
// log offset until its segment goes, but lookups by id and key confirm
// the unit is still inside its queue's range (unitAt).

var (
	segInfoKey = []byte("info")
	segCL      = []byte("cl")
	segCQ      = []byte("cq")
	segQueues  = []byte("queues")
	segIDs     = []byte("ids")
	segKeys    = []byte("keys")
)

// cqBlockShift groups 32 offsets of a queue in one consume-queue block.
const cqBlockShift = 5

// Segment defaults (Options.SegmentBytes, Options.SegmentSpan).
const (
	DefaultSegmentBytes = 256 << 20
	DefaultSegmentSpan  = time.Hour
)

// SegmentInfo describes one segment.
type SegmentInfo struct {
	// Start is the commit log offset of its first record.
	Start int64
	// Created and Last are the store times (unix ms) of its first and
	// last group commit.
	Created, Last int64
	// Bytes and Records count its records.
	Bytes, Records int64
	// FirstPage is bbolt's high-water mark (in pages) when the segment
	// began: while the file grows, a segment's pages lie from there to the
	// next segment's FirstPage (PrefetchSegment reads them ahead of a drop).
	FirstPage int64
}

const segInfoSize = 40

func (i SegmentInfo) encode() []byte {
	b := make([]byte, segInfoSize)
	binary.BigEndian.PutUint64(b, uint64(i.Created))
	binary.BigEndian.PutUint64(b[8:], uint64(i.Last))
	binary.BigEndian.PutUint64(b[16:], uint64(i.Bytes))
	binary.BigEndian.PutUint64(b[24:], uint64(i.Records))
	binary.BigEndian.PutUint64(b[32:], uint64(i.FirstPage))
	return b
}

func decodeSegInfo(start int64, b []byte) (SegmentInfo, error) {
	if len(b) != segInfoSize {
		return SegmentInfo{}, fmt.Errorf("%w: segment %d: info of %d bytes", ErrCorrupt, start, len(b))
	}
	return SegmentInfo{Start: start, Created: int64(binary.BigEndian.Uint64(b)), Last: int64(binary.BigEndian.Uint64(b[8:])),
		Bytes: int64(binary.BigEndian.Uint64(b[16:])), Records: int64(binary.BigEndian.Uint64(b[24:])),
		FirstPage: int64(binary.BigEndian.Uint64(b[32:]))}, nil
}

// createSegment creates the segment starting at commit log offset start
// with its sub-buckets.
func createSegment(tx *bolt.Tx, segs *bolt.Bucket, start int64, created int64) (*bolt.Bucket, SegmentInfo, error) {
	info := SegmentInfo{Start: start, Created: created, Last: created, FirstPage: tx.Size() / int64(tx.DB().Info().PageSize)}
	b, err := segs.CreateBucket(u64(start))
	if err != nil {
		return nil, info, err
	}
	for _, name := range [][]byte{segCL, segCQ, segQueues, segIDs, segKeys} {
		if _, err := b.CreateBucket(name); err != nil {
			return nil, info, err
		}
	}
	return b, info, b.Put(segInfoKey, info.encode())
}

func segmentInfo(start int64, seg *bolt.Bucket) (SegmentInfo, error) {
	return decodeSegInfo(start, seg.Get(segInfoKey))
}

// cqUnitKey is a unit's key in a segment's cq bucket.
func cqUnitKey(uid uint64, qid int, off int64) []byte {
	return appendCQUnitKey(make([]byte, 0, 26), uid, qid, off)
}

func appendCQUnitKey(b []byte, uid uint64, qid int, off int64) []byte {
	b = binary.BigEndian.AppendUint64(b, uid)
	b = binary.BigEndian.AppendUint64(b, uint64(off>>cqBlockShift))
	b = binary.BigEndian.AppendUint16(b, uint16(qid))
	return binary.BigEndian.AppendUint64(b, uint64(off))
}

// qsegKey is a queue's entry in mq.qsegs.
func qsegKey(uid uint64, qid int, first int64) []byte {
	return binary.BigEndian.AppendUint64(queueKey(uid, qid), uint64(first))
}

// segmentOf returns the segment holding commit log offset cl (nil when it
// is before the oldest segment), with its first commit log offset and the
// next segment's (-1: none, it is the newest).
func segmentOf(tx *bolt.Tx, cl int64) (seg *bolt.Bucket, start, next int64) {
	segs := tx.Bucket(bucketSegs)
	c := segs.Cursor()
	k, _ := c.Seek(u64(cl))
	if k == nil || int64(binary.BigEndian.Uint64(k)) != cl {
		k, _ = c.Prev()
	}
	if k == nil {
		return nil, 0, -1
	}
	start, next = int64(binary.BigEndian.Uint64(k)), -1
	if nk, _ := c.Next(); nk != nil {
		next = int64(binary.BigEndian.Uint64(nk))
	}
	return segs.Bucket(k), start, next
}

// recordReader reads the records of one transaction and keeps the segment
// of the last one open: a pull reads records close together, so most
// reads skip the segment lookup and its two bucket opens.
type recordReader struct {
	tx     *bolt.Tx
	lo, hi int64 // the open segment's commit log offsets [lo, hi); hi < 0: no later segment
	cl     *bolt.Bucket
}

// record returns the stored record at commit log offset cl (aliasing
// bbolt's page: valid in the transaction only), nil when absent.
func (r *recordReader) record(cl int64) []byte {
	if r.cl == nil || cl < r.lo || (r.hi >= 0 && cl >= r.hi) {
		seg, lo, hi := segmentOf(r.tx, cl)
		if seg == nil {
			r.cl = nil
			return nil
		}
		r.lo, r.hi, r.cl = lo, hi, seg.Bucket(segCL)
		if r.cl == nil {
			return nil
		}
	}
	return r.cl.Get(u64(cl))
}

// recordAt is one record read (recordReader.record).
func recordAt(tx *bolt.Tx, cl int64) []byte {
	r := recordReader{tx: tx}
	return r.record(cl)
}

// queueSegment returns the start of the segment holding offset off of a
// queue, with the queue's first offset there and the first offset of its
// next segment (-1: none, the stretch runs to the queue's max).
func queueSegment(tx *bolt.Tx, uid uint64, qid int, off int64) (start, first, next int64, ok bool) {
	prefix := queueKey(uid, qid)
	c := tx.Bucket(bucketQSegs).Cursor()
	k, v := c.Seek(qsegKey(uid, qid, off))
	if k != nil && bytes.HasPrefix(k, prefix) && int64(binary.BigEndian.Uint64(k[10:])) == off {
		start, first = int64(binary.BigEndian.Uint64(v)), off
		next = -1
		if nk, _ := c.Next(); nk != nil && bytes.HasPrefix(nk, prefix) {
			next = int64(binary.BigEndian.Uint64(nk[10:]))
		}
		return start, first, next, len(v) == 8
	}
	next = -1
	if k != nil && bytes.HasPrefix(k, prefix) {
		next = int64(binary.BigEndian.Uint64(k[10:]))
	}
	k, v = c.Prev()
	if k == nil || !bytes.HasPrefix(k, prefix) || len(k) != 18 || len(v) != 8 {
		return 0, 0, 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(k[10:])), next, true
}

// queueReader reads one queue's units across segments, keeping the
// segment of the last read.
type queueReader struct {
	tx          *bolt.Tx
	uid         uint64
	qid         int
	cq          *bolt.Bucket
	c           *bolt.Cursor // on cq, at the last unit read (nil: none)
	start       int64        // the cached segment's start
	first, next int64        // the queue's stretch in it: [first, next) (next -1: open)
	key         []byte
}

func newQueueReader(tx *bolt.Tx, uid uint64, qid int) *queueReader {
	return &queueReader{tx: tx, uid: uid, qid: qid, key: make([]byte, 0, 26)}
}

// at returns the unit at off; ok is false when no segment holds it.
func (r *queueReader) at(off int64) (u Unit, ok bool, err error) {
	if r.cq == nil || off < r.first || (r.next >= 0 && off >= r.next) {
		start, first, next, found := queueSegment(r.tx, r.uid, r.qid, off)
		if !found {
			return Unit{}, false, nil
		}
		seg := r.tx.Bucket(bucketSegs).Bucket(u64(start))
		if seg == nil {
			return Unit{}, false, fmt.Errorf("%w: queue %d of topic uid %d: segment %d is missing", ErrCorrupt, r.qid, r.uid, start)
		}
		r.cq, r.c, r.start, r.first, r.next = seg.Bucket(segCQ), nil, start, first, next
	}
	r.key = appendCQUnitKey(r.key[:0], r.uid, r.qid, off)
	// Reading on in offset order, the next unit of a block is the
	// cursor's next key; a new block (or a jump) costs a seek.
	var k, v []byte
	if r.c != nil {
		k, v = r.c.Next()
	}
	if !bytes.Equal(k, r.key) {
		if r.c == nil {
			r.c = r.cq.Cursor()
		}
		k, v = r.c.Seek(r.key)
	}
	if !bytes.Equal(k, r.key) || v == nil {
		return Unit{}, false, nil
	}
	u, err = decodeUnit(v)
	return u, err == nil, err
}

// listSegments returns every segment's info, oldest first.
func listSegments(tx *bolt.Tx) ([]SegmentInfo, error) {
	segs := tx.Bucket(bucketSegs)
	var out []SegmentInfo
	c := segs.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		seg := segs.Bucket(k)
		if len(k) != 8 || seg == nil {
			return nil, fmt.Errorf("%w: mq.segs holds a key that is not a segment", ErrCorrupt)
		}
		info, err := segmentInfo(int64(binary.BigEndian.Uint64(k)), seg)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// droppable reports whether no unit of segment seg is visible: every
// queue it holds units of belongs to a deleted topic or has its min offset
// beyond its stretch in the segment.
func droppable(tx *bolt.Tx, seg *bolt.Bucket) (bool, error) {
	qb, qs := tx.Bucket(bucketQueues), tx.Bucket(bucketQSegs)
	c := seg.Bucket(segQueues).Cursor()
	for ref, fv := c.First(); ref != nil; ref, fv = c.Next() {
		if len(ref) != 10 || len(fv) != 8 {
			return false, fmt.Errorf("%w: segment queue entry of %d+%d bytes", ErrCorrupt, len(ref), len(fv))
		}
		mv := qb.Get(ref)
		if mv == nil {
			continue // a deleted topic's queue
		}
		m, err := decodeQueueMeta(mv)
		if err != nil {
			return false, err
		}
		if lastInSegment(qs, ref, int64(binary.BigEndian.Uint64(fv)), m.Max) >= m.Min {
			return false, nil
		}
	}
	return true, nil
}

// lastInSegment is the last offset of queue ref's stretch that begins at
// first: one before the next stretch's first offset, else before max.
func lastInSegment(qs *bolt.Bucket, ref []byte, first, max int64) int64 {
	k, _ := qs.Cursor().Seek(binary.BigEndian.AppendUint64(bytes.Clone(ref), uint64(first+1)))
	if k != nil && len(k) == 18 && bytes.HasPrefix(k, ref) {
		return int64(binary.BigEndian.Uint64(k[10:])) - 1
	}
	return max - 1
}

// droppableSegments returns the starts of the segments retention or topic
// deletion left without a visible unit, oldest first. It only reads.
func droppableSegments(tx *bolt.Tx) ([]int64, error) {
	segs := tx.Bucket(bucketSegs)
	var out []int64
	c := segs.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		seg := segs.Bucket(k)
		if seg == nil {
			continue
		}
		ok, err := droppable(tx, seg)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, int64(binary.BigEndian.Uint64(k)))
		}
	}
	return out, nil
}

// dropSegment deletes the segment at start whole (bbolt DeleteBucket: its
// pages become free) if it is still droppable, with its mq.qsegs entries,
// its set-aside records and the trash entries of deleted topics left
// without data. ok is false when it is gone or holds visible units now.
func dropSegment(tx *bolt.Tx, start int64) (info SegmentInfo, ok bool, err error) {
	segs := tx.Bucket(bucketSegs)
	seg := segs.Bucket(u64(start))
	if seg == nil {
		return info, false, nil
	}
	if ok, err := droppable(tx, seg); err != nil || !ok {
		return info, false, err
	}
	if info, err = segmentInfo(start, seg); err != nil {
		return info, false, err
	}
	qs := tx.Bucket(bucketQSegs)
	dead := map[uint64]bool{}
	c := seg.Bucket(segQueues).Cursor()
	for ref, fv := c.First(); ref != nil; ref, fv = c.Next() {
		if err := qs.Delete(append(bytes.Clone(ref), fv...)); err != nil {
			return info, false, err
		}
		if tx.Bucket(bucketQueues).Get(ref) == nil {
			dead[binary.BigEndian.Uint64(ref)] = true
		}
	}
	end := int64(segs.Sequence())
	sc := segs.Cursor()
	if k, _ := sc.Seek(u64(start + 1)); k != nil {
		end = int64(binary.BigEndian.Uint64(k))
	}
	if bad := tx.Bucket(bucketCorrupt); bad != nil {
		var gone [][]byte
		bc := bad.Cursor()
		for k, _ := bc.Seek(u64(start)); k != nil && int64(binary.BigEndian.Uint64(k)) < end; k, _ = bc.Next() {
			gone = append(gone, bytes.Clone(k))
		}
		for _, k := range gone {
			if err := bad.Delete(k); err != nil {
				return info, false, err
			}
		}
	}
	if err := segs.DeleteBucket(u64(start)); err != nil {
		return info, false, err
	}
	for uid := range dead {
		if k, _ := qs.Cursor().Seek(uidKey(uid)); k == nil || !bytes.HasPrefix(k, uidKey(uid)) {
			if err := tx.Bucket(bucketTrash).Delete(uidKey(uid)); err != nil {
				return info, false, err
			}
		}
	}
	return info, true, nil
}

// countRecords counts the commit log records of every segment (it walks
// each segment's tree: for tests and tools, not for a hot path).
func countRecords(tx *bolt.Tx) int {
	n := 0
	segs := tx.Bucket(bucketSegs)
	c := segs.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if seg := segs.Bucket(k); seg != nil {
			n += seg.Bucket(segCL).Stats().KeyN
		}
	}
	return n
}

// lastCommitLogOffset returns the offset of the newest record.
func lastCommitLogOffset(tx *bolt.Tx) (int64, bool) {
	segs := tx.Bucket(bucketSegs)
	c := segs.Cursor()
	for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
		if seg := segs.Bucket(k); seg != nil {
			if rk, _ := seg.Bucket(segCL).Cursor().Last(); rk != nil {
				return int64(binary.BigEndian.Uint64(rk)), true
			}
		}
	}
	return 0, false
}

// patchRecord rewrites the record at cl in place with fn applied to a
// copy, without resealing its checksum: the fault-injection tests use it
// to leave a record as a bad disk would.
func patchRecord(tx *bolt.Tx, cl int64, fn func(rec []byte)) error {
	seg, _, _ := segmentOf(tx, cl)
	if seg == nil || seg.Bucket(segCL).Get(u64(cl)) == nil {
		return fmt.Errorf("no record at commit log offset %d", cl)
	}
	rec := bytes.Clone(seg.Bucket(segCL).Get(u64(cl)))
	fn(rec)
	return seg.Bucket(segCL).Put(u64(cl), rec)
}

// prefetchChunk is the size of one read of PrefetchSegment.
const prefetchChunk = 1 << 20

// PrefetchSegment reads the pages of the segment at start into the
// operating system's page cache with large sequential reads, outside any
// transaction. bbolt maps the file for random access (no read-ahead), and
// dropping a segment visits every page of it (DeleteBucket frees them one
// by one): on a cold cache that is one small synchronous read per page.
// Reading the segment's stretch of the file first makes the drop's visits
// cache hits. When pages were reused from the freelist the stretch may
// hold other buckets' pages too (reading them is harmless) and miss some
// of the segment's (the drop reads those itself). After the drop,
// ReleaseMapping takes what it touched out of the resident memory.
func (s *Store) PrefetchSegment(start int64) error {
	// The segment's stretch of the file, [from, to): from its first page
	// to the next segment's first page, capped at twice its bytes.
	var from, to int64
	err := s.db.View(func(tx *bolt.Tx) error {
		segs := tx.Bucket(bucketSegs)
		seg := segs.Bucket(u64(start))
		if seg == nil {
			return nil
		}
		info, err := segmentInfo(start, seg)
		if err != nil || info.FirstPage == 0 {
			return err
		}
		ps := int64(tx.DB().Info().PageSize)
		end := tx.Size() / ps
		c := segs.Cursor()
		if k, _ := c.Seek(u64(start + 1)); k != nil {
			if next, err := segmentInfo(int64(binary.BigEndian.Uint64(k)), segs.Bucket(k)); err == nil && next.FirstPage > info.FirstPage {
				end = next.FirstPage
			}
		}
		from, to = info.FirstPage*ps, min(end*ps, info.FirstPage*ps+2*info.Bytes+prefetchChunk)
		return nil
	})
	if err != nil || to <= from {
		return err
	}
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, prefetchChunk)
	for off := from; off < to; off += prefetchChunk {
		if _, err := f.ReadAt(buf[:min(prefetchChunk, to-off)], off); err != nil {
			return err
		}
	}
	return nil
}

// ReleaseMapping tells the kernel that the process no longer needs its
// mapping of the store file (madvise MADV_DONTNEED over all of it; a
// no-op where that is not available). bbolt reads every page through its
// map, which is made once at its largest and never remapped, so each page
// it touches stays counted in the server's resident memory: dropping
// segments touches every page of them (expiring 30 GB left about 19 GiB),
// and the commits read back the pages they wrote. The file's page cache
// is not affected, and a page used again is mapped in again from there
// (a minor fault): bbolt's map is read-only and writes go through the
// file. The retention cleaner calls it after each segment drop; the
// checkpoints after every 256 MiB of pages written (releaseWritten).
func (s *Store) ReleaseMapping() error {
	return s.db.View(func(tx *bolt.Tx) error {
		// bbolt remaps only while no read transaction is open, so inside
		// this one Data is the live mapping, and it covers tx.Size().
		return releaseMapped(tx.DB().Info().Data, tx.Size())
	})
}
