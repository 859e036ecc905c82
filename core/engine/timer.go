package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Timer messages (deliverAt / delaySeconds; RocketMQ 5's timer messages)
// live in one time-ordered index, bucket sched.timers: key = due unix ms
// (8, big-endian) + a bucket sequence (8), value = the message record. A
// timer message is not in the commit log until it is due: the move puts it
// to its real topic and deletes its index entry in one transaction, so a
// delivered timer leaves nothing behind and nothing is ever moved twice.
//
// One task (timerTask) sleeps on one timer armed for the earliest key.

// timerKey builds an index key.
func timerKey(due int64, seq uint64) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(due))
	return binary.BigEndian.AppendUint64(k, seq)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealRecord fills the CRC-32C trailer of a record made by
// store.EncodeMessage (codec.go: the last 4 bytes checksum everything
// before them), which the writer would otherwise seal when it places the
// record, so store.DecodeMessage accepts it from the index.
func sealRecord(rec []byte) []byte {
	n := len(rec) - 4
	binary.BigEndian.PutUint32(rec[n:], crc32.Checksum(rec[:n], castagnoli))
	return rec
}

// timerInsertHook writes msgs to the index inside the publish's
// transaction. It may run more than once (store.Hook): each run starts
// from a fresh transaction, so sequences and entries are not doubled.
func timerInsertHook(msgs []*core.Message) store.Hook {
	recs := make([][]byte, len(msgs))
	dues := make([]int64, len(msgs))
	uids := make([]uint64, len(msgs))
	ids := make([][]byte, len(msgs))
	for i, m := range msgs {
		recs[i] = sealRecord(store.EncodeMessage(m))
		dues[i] = parseDue(m)
		uids[i] = realUID(m)
		ids[i] = []byte(m.ID)
	}
	return func(tx store.Tx) error {
		b, bt, bi := tx.Bucket(bucketTimers), tx.Bucket(bucketTimerTopics), tx.Bucket(bucketTimerIDs)
		for i, rec := range recs {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			k := timerKey(dues[i], seq)
			if err := b.Put(k, rec); err != nil {
				return err
			}
			if err := bi.Put(ids[i], k); err != nil {
				return err
			}
			if uids[i] != 0 {
				if err := bt.Put(timerTopicKey(uids[i], k), []byte{}); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// timerTopicKey is a bucketTimerTopics key: the topic incarnation, then
// the timer's index key.
func timerTopicKey(uid uint64, key []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uid), key...)
}

// realUID is a parked message's REAL_TOPIC_UID, 0 if it has none.
func realUID(m *core.Message) uint64 {
	uid, err := strconv.ParseUint(m.SysProps[core.PropRealTopicUID], 10, 64)
	if err != nil {
		return 0
	}
	return uid
}

func parseDue(m *core.Message) int64 {
	var due int64
	for _, c := range m.SysProps[core.PropDeliverAt] {
		due = due*10 + int64(c-'0')
	}
	return due
}

// timerTask delivers due timer messages on the same dueLoop as the
// level tasks (armed is idle while a pass runs).
type timerTask struct {
	e *Engine
	dueLoop
}

func (t *timerTask) run() {
	t.dueLoop.run(t.e, t.pass, func(err error) {
		t.e.log.Error().Err(err).Msg("schedule: delivering timer messages failed; retrying later")
	})
}

// timerBatch is one read of the index: the due entries' keys and ops.
type timerBatch struct {
	keys [][]byte
	uids []uint64 // per key: the topic incarnation it was stamped with
	ops  []putOp
	bad  [][]byte // undecodable entries, removed with the batch
	next int64
}

// pass moves every due timer message; it returns the due time of the
// earliest entry not yet due, or 0 when the index is empty.
func (t *timerTask) pass() (int64, error) {
	single := false
	for {
		if isClosing(t.e) {
			return 0, core.ErrClosed
		}
		b, err := t.read(single)
		if err != nil {
			return 0, err
		}
		if len(b.keys) == 0 && len(b.bad) == 0 {
			return b.next, nil
		}
		err = t.e.commit(context.Background(), b.ops, timerDeleteHook(append(b.keys, b.bad...), b.uids))
		// (timerDeleteHook removes each entry's id from bucketTimerIDs.)
		switch core.ErrorCode(err) {
		case "":
			t.e.sched.moved.Add(int64(len(b.ops)))
		case core.EConflict:
		case core.ENotFound, core.EInvalid:
			if len(b.ops) > 1 {
				single = true
				continue
			}
			err := t.e.commit(context.Background(), nil, timerDeleteHook(append(b.keys, b.bad...), b.uids))
			if err != nil && core.ErrorCode(err) != core.EConflict {
				return 0, err
			}
			single = false
			if err == nil {
				t.e.sched.dropped.Add(1)
				t.e.log.Warn().Str("topic", b.ops[0].topic).Str("msgId", b.ops[0].msg.ID).
					Msg("schedule: real topic of a timer message is gone (deleted, maybe re-created); dropped")
			}
		default:
			return 0, err
		}
	}
}

func (t *timerTask) read(single bool) (b timerBatch, err error) {
	now := time.Now().UnixMilli()
	limit := moveBatch
	if single {
		limit = 1
	}
	err = t.e.view(func(tx store.ReadTx) error {
		c := tx.Bucket(bucketTimers).Cursor()
		size := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 16 {
				b.bad = append(b.bad, bytes.Clone(k))
				continue
			}
			due := int64(binary.BigEndian.Uint64(k))
			if due > now || len(b.ops) == limit || size >= moveBatchBytes {
				b.next = due
				return nil
			}
			m, err := store.DecodeMessage(0, v)
			if err != nil {
				t.e.sched.skip.Add(1)
				t.e.log.Error().Err(err).Msg("schedule: undecodable timer entry; removed")
				b.bad = append(b.bad, bytes.Clone(k))
				continue
			}
			op, ok := realTarget(m)
			if !ok {
				t.e.sched.skip.Add(1)
				b.bad = append(b.bad, bytes.Clone(k))
				continue
			}
			size += len(m.Body)
			b.keys = append(b.keys, bytes.Clone(k))
			b.uids = append(b.uids, op.expectUID)
			b.ops = append(b.ops, op)
		}
		return nil
	})
	return b, err
}

// timerDeleteHook removes moved entries (and, for keys[i] with uids[i] !=
// 0, their bucketTimerTopics entries) in the move's transaction; an entry
// already gone means another mover (or a deletion's sweep) won, so the
// request fails alone.
func timerDeleteHook(keys [][]byte, uids []uint64) store.Hook {
	return func(tx store.Tx) error {
		b, bt := tx.Bucket(bucketTimers), tx.Bucket(bucketTimerTopics)
		for i, k := range keys {
			v := b.Get(k)
			if v == nil {
				return errMoved
			}
			if err := forgetTimerID(tx, k, v); err != nil {
				return err
			}
			if err := b.Delete(k); err != nil {
				return err
			}
			if i < len(uids) && uids[i] != 0 {
				if err := bt.Delete(timerTopicKey(uids[i], k)); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// pendingTimers counts the index (bbolt keeps the key count in its page
// headers, so Stats walks pages, not values; used by tests and stats).
func (e *Engine) pendingTimers() (n int, err error) {
	err = e.view(func(tx store.ReadTx) error {
		n = tx.Bucket(bucketTimers).KeyN()
		return nil
	})
	return n, err
}

// forgetTimerID removes the bucketTimerIDs entry of the timer entry k
// (record v) when it still points at k: the id is read from the record,
// so an undecodable record has no entry to remove.
func forgetTimerID(tx store.Tx, k, v []byte) error {
	m, err := store.DecodeMessage(0, v)
	if err != nil || m.ID == "" {
		return nil
	}
	bi := tx.Bucket(bucketTimerIDs)
	if cur := bi.Get([]byte(m.ID)); cur != nil && bytes.Equal(cur, k) {
		return bi.Delete([]byte(m.ID))
	}
	return nil
}

// indexTimerIDs creates bucketTimerIDs and, when it is new (a store
// written before it existed), fills it from the timer index, once.
func indexTimerIDs(tx store.Tx) error {
	if tx.Bucket(bucketTimerIDs) != nil {
		return nil
	}
	bi, err := tx.CreateBucket(bucketTimerIDs)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketTimers).ForEach(func(k, v []byte) error {
		m, err := store.DecodeMessage(0, v)
		if err != nil || m.ID == "" || len(k) != 16 {
			return nil // the timer task removes undecodable entries
		}
		return bi.Put([]byte(m.ID), bytes.Clone(k))
	})
}

// pendingTimer returns the timer message with id still waiting in the
// index, or nil. It is shown the way a message waiting on a delay level
// is: under the schedule topic, with its real topic in PropRealTopic and
// no queue position.
func pendingTimer(tx store.ReadTx, id string) (*core.Message, error) {
	bi := tx.Bucket(bucketTimerIDs)
	if bi == nil {
		return nil, nil
	}
	k := bi.Get([]byte(id))
	if k == nil {
		return nil, nil
	}
	v := tx.Bucket(bucketTimers).Get(k)
	if v == nil {
		return nil, nil
	}
	m, err := store.DecodeMessage(0, v)
	if err != nil {
		return nil, nil // undecodable: the timer task drops it when due
	}
	m.Topic, m.QueueID, m.QueueOffset = core.ScheduleTopic, 0, 0
	if m.StoredAt.IsZero() {
		// The writer stamps a store time when it places a record; an
		// index entry was stored by its publish, at its born time.
		m.StoredAt = m.BornAt
	}
	return m, nil
}
