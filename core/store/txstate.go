package store

import (
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// qref names a queue by topic incarnation.
type qref struct {
	uid uint64
	qid int
}

// txState caches what one group-commit transaction has read and changed:
// topic records, queue ranges (written back once in flush), bucket handles
// and the commit log sequence. It lives for one transaction only, so a
// rolled-back attempt leaves nothing behind.
type txState struct {
	tx       *bolt.Tx
	storedAt int64
	opts     *Options
	segs     *bolt.Bucket
	seq      uint64
	clFrom   int64 // the commit log sequence when the transaction began
	topics   map[string]*TopicRecord
	queues   map[qref]*queueMeta
	names    map[qref]string
	origMax  map[qref]int64 // each queue's max before this transaction
	dirty    map[qref]bool
	// ownState: an op created or grew a topic (the read barrier's area
	// of the store's own state, durable.go).
	ownState bool

	// The segment appended to (segment.go), opened by the first append.
	seg                *bolt.Bucket
	segStart           int64
	segInfo            SegmentInfo
	cl, cq, ids, keys  *bolt.Bucket
	inSeg              map[qref]bool // queues known to have a stretch in seg
	appended, appBytes int64

	// key is scratch space for building keys: bbolt's Put copies the key,
	// so one buffer serves every Put of the transaction. Values are not
	// copied and must live until the commit: small ones (units, offsets)
	// are carved from arena, one allocation for many.
	key   []byte
	arena []byte
	// placedAt is storedAt as a time, shared by every Placed of the group.
	placedAt time.Time
}

// arenaChunk is the size of one arena allocation: about 180 messages'
// units and id-index values.
const arenaChunk = 4096

// value returns n bytes that stay valid until the transaction ends.
func (st *txState) value(n int) []byte {
	if len(st.arena)+n > cap(st.arena) {
		st.arena = make([]byte, 0, max(arenaChunk, n))
	}
	st.arena = st.arena[:len(st.arena)+n]
	return st.arena[len(st.arena)-n : len(st.arena) : len(st.arena)]
}

func newTxState(tx *bolt.Tx, storedAt int64, opts *Options) *txState {
	st := &txState{
		tx: tx, storedAt: storedAt, opts: opts, segs: tx.Bucket(bucketSegs),
		topics: map[string]*TopicRecord{},
		queues: map[qref]*queueMeta{}, names: map[qref]string{}, origMax: map[qref]int64{}, dirty: map[qref]bool{},
		inSeg: map[qref]bool{},
		key:   make([]byte, 0, 64), placedAt: time.UnixMilli(storedAt).UTC(),
	}
	st.seq = st.segs.Sequence()
	st.clFrom = int64(st.seq)
	return st
}

// segment opens the segment to append to: the newest one, or a new one
// starting at the next commit log offset when the newest is full
// (Options.SegmentBytes) or old (Options.SegmentSpan), or there is none.
func (st *txState) segment() error {
	if st.seg != nil {
		return nil
	}
	k, _ := st.segs.Cursor().Last()
	if k != nil {
		start := int64(binary.BigEndian.Uint64(k))
		seg := st.segs.Bucket(k)
		if seg == nil {
			return core.Errorf(core.EInternal, "mq.segs: key %d is not a segment", start)
		}
		info, err := segmentInfo(start, seg)
		if err != nil {
			return err
		}
		if info.Bytes < st.opts.SegmentBytes && st.storedAt-info.Created < st.opts.SegmentSpan.Milliseconds() {
			st.seg, st.segStart, st.segInfo = seg, start, info
		}
	}
	if st.seg == nil {
		start := int64(st.seq)
		seg, info, err := createSegment(st.tx, st.segs, start, st.storedAt)
		if err != nil {
			return err
		}
		st.seg, st.segStart, st.segInfo = seg, start, info
	}
	st.cl, st.cq, st.ids, st.keys = st.seg.Bucket(segCL), st.seg.Bucket(segCQ), st.seg.Bucket(segIDs), st.seg.Bucket(segKeys)
	// Append-only buckets: split pages full, not half (keys only grow).
	st.cl.FillPercent = 1.0
	st.cq.FillPercent = 0.9  // appends land in the last block or two
	st.ids.FillPercent = 0.9 // ids are time-ordered, so nearly append-only
	return nil
}

// enterSegment records that queue ref has units in the open segment from
// offset first on (once per queue and segment).
func (st *txState) enterSegment(ref qref, first int64) error {
	if st.inSeg[ref] {
		return nil
	}
	st.inSeg[ref] = true
	sq := st.seg.Bucket(segQueues)
	qk := queueKey(ref.uid, ref.qid)
	if sq.Get(qk) != nil {
		return nil
	}
	if err := sq.Put(qk, u64(first)); err != nil {
		return err
	}
	return st.tx.Bucket(bucketQSegs).Put(qsegKey(ref.uid, ref.qid, first), u64(st.segStart))
}

// topic resolves a topic, creating a system topic on first use.
func (st *txState) topic(op *Op) (*TopicRecord, error) {
	t, seen := st.topics[op.Topic]
	if !seen {
		rec, ok, err := getTopic(st.tx, op.Topic)
		if err != nil {
			return nil, err
		}
		if ok {
			t = &rec
		}
		st.topics[op.Topic] = t
	}
	if op.ExpectUID != 0 && (t == nil || t.UID != op.ExpectUID) {
		return nil, core.Errorf(core.ENotFound, "topic %q (incarnation %d) no longer exists", op.Topic, op.ExpectUID)
	}
	if op.AutoCreate > 0 && (t == nil || op.QueueID >= t.Queues) {
		rec := TopicRecord{Name: op.Topic, Queues: max(op.AutoCreate, op.QueueID+1),
			RetentionHours: core.DefaultRetentionHours, CreatedAt: time.UnixMilli(st.storedAt).UTC()}
		if t != nil {
			rec.RetentionHours = t.RetentionHours
		}
		created, _, err := putTopic(st.tx, rec)
		if err != nil {
			return nil, err
		}
		st.ownState = true
		t = &created
		st.topics[op.Topic] = t
	}
	if t == nil {
		return nil, core.Errorf(core.ENotFound, "topic %q does not exist", op.Topic)
	}
	return t, nil
}

// prepare checks every op's topic and queue before anything is written, so a
// request that targets a deleted topic fails alone, leaving the transaction
// usable for the rest of the group. Errors with a domain code are the
// request's own; others (bbolt) break the transaction.
func (st *txState) prepare(ops []Op) error {
	for i := range ops {
		t, err := st.topic(&ops[i])
		if err != nil {
			return err
		}
		if ops[i].QueueID < 0 || ops[i].QueueID >= t.Queues {
			return core.Errorf(core.EInvalid, "queue %d out of range for topic %q (%d queues)", ops[i].QueueID, t.Name, t.Queues)
		}
	}
	return nil
}

func (st *txState) queue(t *TopicRecord, qid int) (*queueMeta, error) {
	ref := qref{t.UID, qid}
	if m := st.queues[ref]; m != nil {
		return m, nil
	}
	min, max, err := queueRange(st.tx, t.UID, qid)
	if err != nil {
		return nil, err
	}
	m := &queueMeta{Min: min, Max: max}
	st.queues[ref], st.names[ref], st.origMax[ref] = m, t.Name, max
	return m, nil
}

// apply appends ops: commit log entry, consume-queue unit, id and key index
// entries (RocketMQ CommitLog.putMessage + ReputMessageService dispatch, in
// one transaction).
func (st *txState) apply(ops []Op) ([]Placed, error) {
	if err := st.segment(); err != nil {
		return nil, err
	}
	placed := make([]Placed, len(ops))
	// The ops of a request usually share one queue (a batch publish):
	// its topic, range and segment entry are looked up once per run of
	// ops, not four map operations per op in the writer.
	var (
		last *Op
		ref  qref
		q    *queueMeta
	)
	for i := range ops {
		op := &ops[i]
		if last == nil || op.Topic != last.Topic || op.QueueID != last.QueueID {
			t := st.topics[op.Topic] // resolved by prepare
			var err error
			if q, err = st.queue(t, op.QueueID); err != nil {
				return nil, err
			}
			ref = qref{t.UID, op.QueueID}
			if err := st.enterSegment(ref, q.Max); err != nil {
				return nil, err
			}
			st.dirty[ref] = true
		}
		last = op
		cl := int64(st.seq)
		qoff := q.Max
		place(op.Record, op.QueueID, qoff, st.storedAt)
		st.key = binary.BigEndian.AppendUint64(st.key[:0], uint64(cl))
		if err := st.cl.Put(st.key, op.Record); err != nil {
			return nil, err
		}
		unit := Unit{CommitLogOffset: cl, Size: int32(len(op.Record)), TagsCode: op.TagsCode}
		st.key = appendCQUnitKey(st.key[:0], ref.uid, op.QueueID, qoff)
		if err := st.cq.Put(st.key, unit.put(st.value(unitSize))); err != nil {
			return nil, err
		}
		if op.ID != "" {
			v := st.value(8)
			binary.BigEndian.PutUint64(v, uint64(cl))
			if err := st.ids.Put(append(st.key[:0], op.ID...), v); err != nil {
				return nil, err
			}
		}
		for _, k := range op.Keys {
			st.key = appendKeyIndexKey(st.key[:0], op.Topic, k, cl)
			if err := st.keys.Put(st.key, emptyValue); err != nil {
				return nil, err
			}
		}
		st.seq++
		q.Max++
		st.appended++
		st.appBytes += int64(len(op.Record))
		placed[i] = Placed{QueueOffset: qoff, CommitLogOffset: cl, StoredAt: st.placedAt}
	}
	return placed, nil
}

// flush writes back the queue ranges, the segment's info and the commit
// log sequence and reports which queues advanced.
func (st *txState) flush() ([]Advance, error) {
	if err := st.segs.SetSequence(st.seq); err != nil {
		return nil, err
	}
	if st.seg != nil && st.appended > 0 {
		info := st.segInfo
		info.Last, info.Bytes, info.Records = st.storedAt, info.Bytes+st.appBytes, info.Records+st.appended
		if err := st.seg.Put(segInfoKey, info.encode()); err != nil {
			return nil, err
		}
	}
	qb := st.tx.Bucket(bucketQueues)
	adv := make([]Advance, 0, len(st.dirty))
	for ref := range st.dirty {
		m := st.queues[ref]
		if err := qb.Put(queueKey(ref.uid, ref.qid), m.encode()); err != nil {
			return nil, err
		}
		adv = append(adv, Advance{Topic: st.names[ref], QueueID: ref.qid, Max: m.Max})
	}
	return adv, nil
}

// marks reports how the transaction moved each queue's max (gate.go).
func (st *txState) marks() []qmark {
	out := make([]qmark, 0, len(st.dirty)+1)
	for ref := range st.dirty {
		out = append(out, qmark{ref: ref, from: st.origMax[ref], to: st.queues[ref].Max})
	}
	if end := int64(st.seq); end > st.clFrom {
		out = append(out, qmark{ref: commitLogGate, from: st.clFrom, to: end})
	}
	return out
}
