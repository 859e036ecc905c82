package store

import (
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
	cl, ids  *bolt.Bucket
	keys     *bolt.Bucket
	seq      uint64
	topics   map[string]*TopicRecord
	cq       map[uint64]*bolt.Bucket
	queues   map[qref]*queueMeta
	names    map[qref]string
	dirty    map[qref]bool
}

func newTxState(tx *bolt.Tx, storedAt int64) *txState {
	st := &txState{
		tx: tx, storedAt: storedAt,
		cl: tx.Bucket(bucketCommitLog), ids: tx.Bucket(bucketIDs), keys: tx.Bucket(bucketKeys),
		topics: map[string]*TopicRecord{}, cq: map[uint64]*bolt.Bucket{},
		queues: map[qref]*queueMeta{}, names: map[qref]string{}, dirty: map[qref]bool{},
	}
	// Append-only buckets: split pages full, not half (keys only grow).
	st.cl.FillPercent = 1.0
	st.ids.FillPercent = 0.9 // ids are time-ordered, so nearly append-only
	st.seq = st.cl.Sequence()
	return st
}

// topic resolves a topic, creating a system topic on first use.
func (st *txState) topic(op *Op) (*TopicRecord, error) {
	t, seen := st.topics[op.Topic]
	if !seen {
		rec, ok, err := GetTopic(st.tx, op.Topic)
		if err != nil {
			return nil, err
		}
		if ok {
			t = &rec
		}
		st.topics[op.Topic] = t
	}
	if op.AutoCreate > 0 && (t == nil || op.QueueID >= t.Queues) {
		rec := TopicRecord{Name: op.Topic, Queues: max(op.AutoCreate, op.QueueID+1),
			RetentionHours: core.DefaultRetentionHours, CreatedAt: time.UnixMilli(st.storedAt).UTC()}
		if t != nil {
			rec.RetentionHours = t.RetentionHours
		}
		created, _, err := PutTopic(st.tx, rec)
		if err != nil {
			return nil, err
		}
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
	min, max, err := QueueRange(st.tx, t.UID, qid)
	if err != nil {
		return nil, err
	}
	m := &queueMeta{Min: min, Max: max}
	st.queues[ref], st.names[ref] = m, t.Name
	return m, nil
}

func (st *txState) cqBucket(uid uint64) *bolt.Bucket {
	b := st.cq[uid]
	if b == nil {
		b = st.tx.Bucket(bucketCQ).Bucket(uidKey(uid))
		b.FillPercent = 1.0
		st.cq[uid] = b
	}
	return b
}

// apply appends ops: commit log entry, consume-queue unit, id and key index
// entries (RocketMQ CommitLog.putMessage + ReputMessageService dispatch, in
// one transaction).
func (st *txState) apply(ops []Op) ([]Placed, error) {
	placed := make([]Placed, len(ops))
	for i := range ops {
		op := &ops[i]
		t := st.topics[op.Topic] // resolved by prepare
		q, err := st.queue(t, op.QueueID)
		if err != nil {
			return nil, err
		}
		cl := int64(st.seq)
		qoff := q.Max
		place(op.Record, op.QueueID, qoff, st.storedAt)
		if err := st.cl.Put(u64(cl), op.Record); err != nil {
			return nil, err
		}
		unit := Unit{CommitLogOffset: cl, Size: int32(len(op.Record)), TagsCode: op.TagsCode}
		if err := st.cqBucket(t.UID).Put(cqKey(op.QueueID, qoff), unit.encode()); err != nil {
			return nil, err
		}
		if op.ID != "" {
			if err := st.ids.Put([]byte(op.ID), u64(cl)); err != nil {
				return nil, err
			}
		}
		for _, k := range op.Keys {
			if err := st.keys.Put(keyIndexKey(op.Topic, k, cl), []byte{}); err != nil {
				return nil, err
			}
		}
		st.seq++
		q.Max++
		st.dirty[qref{t.UID, op.QueueID}] = true
		placed[i] = Placed{QueueOffset: qoff, CommitLogOffset: cl, StoredAt: time.UnixMilli(st.storedAt).UTC()}
	}
	return placed, nil
}

// flush writes back the queue ranges and the commit log sequence and reports
// which queues advanced.
func (st *txState) flush() ([]Advance, error) {
	if err := st.cl.SetSequence(st.seq); err != nil {
		return nil, err
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
