package store

import (
	"errors"
	"math"
	"runtime"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/mqgate/mqgate/core"
)

// ReadTx is a read view of the store: what a bbolt read transaction may
// see, through mqgate's own structures (topics, queues, the commit log,
// the indexes, the records set aside) and through the buckets registered
// by other packages (Bucket). It is passed by value; it is valid only
// inside the function it was given to, and so is every byte
// slice read through it (Bucket.Get, Cursor) unless the method says it
// copies.
type ReadTx struct {
	tx *bolt.Tx
	// rec records the writes of a Hook for the log-ahead (wal.go); nil
	// in View, in Update and in the store's own code.
	rec *recorder
	// gates, in View only, hides appends not yet durable (gate.go);
	// dur, in View only, makes reads of other state wait until it is
	// durable (durable.go).
	gates *gateTable
	dur   *durability
}

// Tx is a write view: a ReadTx that may also change the store. The
// writer hands one to a Hook inside the group commit; Store.Update hands
// one to its function outside it.
type Tx struct{ ReadTx }

// View runs fn in a read transaction. Once the store is closed it
// answers core.ErrClosed.
// What fn reads has been made durable, or it waits until it is (the read
// barrier, durable.go); if the log-ahead breaks meanwhile, View answers
// the log's error, whatever fn returned.
//
// A fault on the file's mapping (a damaged page pointing past the file's
// end) or a runtime error of bbolt walking a mangled page is answered as
// an error naming the file (and, for a fault, the page), logged with its
// stack, not a crash (fault.go); other panics go on.
func (s *Store) View(fn func(ReadTx) error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if _, ok := r.(runtime.Error); !ok {
				panic(r)
			}
			err = guardRead(s.db, s.path, func() error { panic(r) })
			s.log.Error().Err(err).Str("stack", string(debug.Stack())).
				Msg("a read of the store file failed: the file may be damaged (mqgate check DATA_DIR reads every page)")
			err = core.Errorf(core.EInternal, "%v", err)
		}
	}()
	return closedErr(s.db.View(func(tx *bolt.Tx) error {
		err := fn(ReadTx{tx: tx, gates: &s.gates, dur: s.dur})
		if s.dur.lost(uint64(tx.ID())) {
			if werr := s.wal.err(); werr != nil {
				return werr
			}
		}
		return err
	}))
}

// Update runs fn in a read-write transaction outside group commit (topic
// changes, retention and trash chunks, consumer group configs); bbolt
// serialises it with the writer, so publishers wait for it. Its commit
// is followed by a rewind (checkpoint.go): the file is synced and the
// log-ahead starts over, so nothing fn wrote needs logging. Counted in
// WriterStats.Updates. Once the store is closed it answers core.ErrClosed.
func (s *Store) Update(fn func(Tx) error) error {
	s.stats.updates.Add(1)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wal != nil {
		if err := s.wal.err(); err != nil {
			return err
		}
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		// The recorder only notes what fn writes: readers of that wait
		// for the checkpoint below (durable.go).
		rec := &recorder{areasOnly: true}
		if err := fn(Tx{ReadTx{tx: tx, rec: rec}}); err != nil {
			return err
		}
		s.dur.wroteUpdate(uint64(tx.ID()), rec)
		return nil
	})
	if err != nil || s.wal == nil {
		return closedErr(err)
	}
	return s.checkpoint()
}

func closedErr(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return core.ErrClosed
	}
	return err
}

// Topics and queues.

// GetTopic reads a topic record. The returned Layouts are shared: read
// them, never write (decoded records are memoised, topic.go).
func (tx ReadTx) GetTopic(name string) (TopicRecord, bool, error) {
	tx.awaitOwn()
	return getTopic(tx.tx, name)
}

// TopicCommitted reports whether a topic record exists, durable or not:
// a look-up past the read barrier, like BucketUnsynced, for a caller to
// whom "not yet" is a safe answer (a test holding a sync, say).
func (tx ReadTx) TopicCommitted(name string) bool {
	_, ok, err := getTopic(tx.tx, name)
	return ok && err == nil
}

// ListTopics returns every topic record (system topics included), by name.
func (tx ReadTx) ListTopics() ([]TopicRecord, error) {
	tx.awaitOwn()
	return listTopics(tx.tx)
}

// QueueRange returns a queue's [min, max) offsets.
func (tx ReadTx) QueueRange(uid uint64, qid int) (min, max int64, err error) {
	tx.awaitOwn() // min: retention's moves
	min, max, err = queueRange(tx.tx, uid, qid)
	return min, tx.gates.clamp(qref{uid, qid}, max), err
}

// QueueRanges returns the [min, max) of every queue of every topic.
func (tx ReadTx) QueueRanges() (map[core.MessageQueue][2]int64, error) {
	tx.awaitOwn()
	return queueRanges(tx.tx, tx.gates)
}

// QueueHead returns the store time (unix ms) of a queue's oldest message;
// ok is false for an empty queue; math.MinInt64 for a head whose record
// is unreadable (retention removes it like an expired one).
func (tx ReadTx) QueueHead(uid uint64, qid int) (storedAt int64, ok bool, err error) {
	tx.awaitOwn()
	return queueHead(tx.tx, uid, qid)
}

// QueueBytes estimates the stored bytes of a queue's messages from at
// most sample units (no record is read).
func (tx ReadTx) QueueBytes(uid uint64, qid int, sample int) (int64, error) {
	tx.awaitOwn()
	return queueBytes(tx.tx, uid, qid, sample)
}

// PutTopic creates a topic (new UID, empty queues) or updates one: queues
// may only grow. created reports a new topic.
func (tx Tx) PutTopic(rec TopicRecord) (TopicRecord, bool, error) {
	out, created, err := putTopic(tx.tx, rec)
	if err == nil && tx.rec != nil {
		tx.rec.typed(walPutTopic, rec.encode())
	}
	return out, created, err
}

// RemoveTopic deletes a topic at once (config and queue metadata) and
// moves its incarnation to the trash; its messages go with their
// segments (DropSegment, EmptyTrash).
func (tx Tx) RemoveTopic(name string) (TopicRecord, bool, error) {
	rec, ok, err := removeTopic(tx.tx, name)
	if err == nil && tx.rec != nil {
		tx.rec.typed(walRemoveTopic, []byte(name))
	}
	return rec, ok, err
}

// TrimQueue moves a queue's min offset past its messages stored before
// cutoff (unix ms) and reports how many left the queue; nothing is
// deleted (DropSegment frees whole segments), and the move costs the same
// at any size.
func (tx Tx) TrimQueue(t TopicRecord, qid int, cutoff int64) (removed int, err error) {
	removed, _, err = trimQueue(tx.tx, t, qid, cutoff, 0)
	if err == nil && tx.rec != nil {
		tx.rec.typed(walTrimQueue, appendTrimArgs(t, qid, cutoff))
	}
	return removed, err
}

// Messages.

// ScanQueue calls fn for the units of queue qid of topic uid from offset
// on (at least the queue's min), in order, until fn returns false or the
// queue ends.
func (tx ReadTx) ScanQueue(uid uint64, qid int, from int64, fn func(off int64, u Unit) bool) error {
	if end := tx.gates.clamp(qref{uid, qid}, math.MaxInt64); end < math.MaxInt64 {
		// Appends not yet durable are past the end (gate.go).
		return scanQueue(tx.tx, uid, qid, from, func(off int64, u Unit) bool { return off < end && fn(off, u) })
	}
	return scanQueue(tx.tx, uid, qid, from, fn)
}

// UnitAt returns the unit at one queue offset; a unit outside the queue's
// [min, max) is not found.
func (tx ReadTx) UnitAt(uid uint64, qid int, off int64) (Unit, bool, error) {
	if off >= tx.gates.clamp(qref{uid, qid}, math.MaxInt64) {
		return Unit{}, false, nil // not durable yet (gate.go)
	}
	return unitAt(tx.tx, uid, qid, off)
}

// MessageAt decodes (and copies) the commit log record at clOffset; nil
// if absent.
func (tx ReadTx) MessageAt(clOffset int64) (*core.Message, error) { return messageAt(tx.tx, clOffset) }

// Records returns a reader of this transaction's commit log records for
// a run of reads close together (a pull): it keeps the last record's
// segment open instead of looking it up for every record.
func (tx ReadTx) Records() *Records { return &Records{r: recordReader{tx: tx.tx}} }

// Records reads commit log records inside one transaction (ReadTx.Records).
type Records struct{ r recordReader }

// MessageAt is ReadTx.MessageAt through the reader's open segment.
func (rs *Records) MessageAt(clOffset int64) (*core.Message, error) {
	rec := rs.r.record(clOffset)
	if rec == nil {
		return nil, nil
	}
	return DecodeMessage(clOffset, rec)
}

// StoredAtAt reads the store time (unix ms) of the record at clOffset.
func (tx ReadTx) StoredAtAt(clOffset int64) (int64, bool, error) { return storedAtAt(tx.tx, clOffset) }

// OffsetOfID looks a message id up in the id indexes, newest segment
// first. In View, a record not yet durable is not found.
func (tx ReadTx) OffsetOfID(id string) (int64, bool) {
	cl, ok := offsetOfID(tx.tx, id)
	if ok && cl >= tx.gates.clamp(commitLogGate, math.MaxInt64) {
		return 0, false // not durable yet (gate.go)
	}
	return cl, ok
}

// PositionOfID reads where the message with id was placed from its
// record's fixed header. Inside the writer's transaction (a Hook) it sees
// the request's own appends.
func (tx ReadTx) PositionOfID(id string) (qid int, qoff, storedAt int64, ok bool, err error) {
	return positionOfID(tx.tx, id)
}

// OffsetsOfKey returns the commit log offsets of topic's messages
// carrying key, oldest first, at most limit; in View, only durable ones.
func (tx ReadTx) OffsetsOfKey(topic, key string, limit int) []int64 {
	out := offsetsOfKey(tx.tx, topic, key, limit)
	if end := tx.gates.clamp(commitLogGate, math.MaxInt64); end < math.MaxInt64 {
		// Oldest first: the records not durable yet are a tail (gate.go).
		for len(out) > 0 && out[len(out)-1] >= end {
			out = out[:len(out)-1]
		}
	}
	return out
}

// CountRecords counts every commit log record (it walks every segment:
// for tests and tools).
func (tx ReadTx) CountRecords() int { return countRecords(tx.tx) }

// LastCommitLogOffset returns the offset of the newest record.
func (tx ReadTx) LastCommitLogOffset() (int64, bool) { return lastCommitLogOffset(tx.tx) }

// PatchRecord rewrites the record at cl in place with fn applied to a
// copy, without resealing its checksum: for fault-injection tests only.
func (tx Tx) PatchRecord(cl int64, fn func(rec []byte)) error {
	err := patchRecord(tx.tx, cl, fn)
	if err == nil && tx.rec != nil {
		tx.rec.typed(walPatchRecord, appendString(u64(cl), recordAt(tx.tx, cl)))
	}
	return err
}

// Segments and the trash (retention, topic deletion).

// DroppableSegments returns the starts of the segments no visible unit
// keeps alive, oldest first.
func (tx ReadTx) DroppableSegments() ([]int64, error) {
	tx.awaitOwn()
	return droppableSegments(tx.tx)
}

// DropSegment deletes the segment at start whole if it is still
// droppable; ok is false when it is gone or holds visible units now.
func (tx Tx) DropSegment(start int64) (info SegmentInfo, ok bool, err error) {
	info, ok, err = dropSegment(tx.tx, start)
	if err == nil && tx.rec != nil {
		tx.rec.typed(walDropSegment, u64(start))
	}
	return info, ok, err
}

// HasTrash reports whether deleted topics still hold messages.
func (tx ReadTx) HasTrash() bool {
	tx.awaitOwn()
	return hasTrash(tx.tx)
}

// EmptyTrash clears the trash entries no segment needs any more and drops
// at most one droppable segment; more reports whether it dropped one.
func (tx Tx) EmptyTrash() (more bool, err error) {
	more, err = emptyTrash(tx.tx, 0)
	if err == nil && tx.rec != nil {
		tx.rec.typed(walEmptyTrash, nil)
	}
	return more, err
}

// Records set aside as corrupt (corrupt.go).

// IsSetAside reports whether the record at clOffset is set aside.
func (tx ReadTx) IsSetAside(clOffset int64) bool {
	tx.awaitOwn()
	return isSetAside(tx.tx, clOffset)
}

// ListCorrupt returns every set-aside record in commit log order.
func (tx ReadTx) ListCorrupt() ([]CorruptRecord, error) {
	tx.awaitOwn()
	return listCorrupt(tx.tx)
}

// InspectCorrupt describes the unreadable record at clOffset for setting
// it aside (RecordCorrupt). uid, qid and qoff place it when the caller
// knows (uid 0 when it does not); cause is the decode error (nil: the
// record is missing).
func (tx ReadTx) InspectCorrupt(clOffset int64, uid uint64, qid int, qoff int64, cause error) CorruptRecord {
	return inspectCorrupt(tx.tx, clOffset, uid, qid, qoff, cause)
}

// RecordCorrupt sets r aside unless its offset is already; added reports
// whether it was new.
func (tx Tx) RecordCorrupt(r CorruptRecord) (added bool, err error) {
	added, err = recordCorrupt(tx.tx, r)
	if err == nil && tx.rec != nil {
		tx.rec.typed(walRecordCorrupt, appendString(u64(r.CommitLogOffset), r.encode()))
	}
	return added, err
}
