package store

import (
	"bytes"
	"encoding/binary"
	"math"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// Read helpers. They run inside a caller's transaction; everything they
// return is copied out of bbolt's pages and stays valid after it.

// ScanQueue calls fn for the units of queue qid of topic uid from offset on,
// in offset order, until fn returns false or the queue ends.
func ScanQueue(tx *bolt.Tx, uid uint64, qid int, from int64, fn func(off int64, u Unit) bool) error {
	b := tx.Bucket(bucketCQ).Bucket(uidKey(uid))
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(cqKey(qid, from)); k != nil; k, v = c.Next() {
		q, off, ok := parseCQKey(k)
		if !ok || q != qid {
			return nil
		}
		u, err := decodeUnit(v)
		if err != nil {
			return err
		}
		if !fn(off, u) {
			return nil
		}
	}
	return nil
}

// UnitAt returns the unit at one queue offset.
func UnitAt(tx *bolt.Tx, uid uint64, qid int, off int64) (Unit, bool, error) {
	b := tx.Bucket(bucketCQ).Bucket(uidKey(uid))
	if b == nil {
		return Unit{}, false, nil
	}
	v := b.Get(cqKey(qid, off))
	if v == nil {
		return Unit{}, false, nil
	}
	u, err := decodeUnit(v)
	return u, err == nil, err
}

// MessageAt decodes the commit log record at clOffset; nil if absent.
func MessageAt(tx *bolt.Tx, clOffset int64) (*core.Message, error) {
	rec := tx.Bucket(bucketCommitLog).Get(u64(clOffset))
	if rec == nil {
		return nil, nil
	}
	return DecodeMessage(clOffset, rec)
}

// StoredAtAt reads the store time (unix ms) of the record at clOffset.
func StoredAtAt(tx *bolt.Tx, clOffset int64) (int64, bool, error) {
	rec := tx.Bucket(bucketCommitLog).Get(u64(clOffset))
	if rec == nil {
		return 0, false, nil
	}
	ms, err := StoredAtOf(rec)
	return ms, err == nil, err
}

// PositionOfID reads where the message with id was placed (queue id,
// queue offset, storedAt unix ms) from its record's fixed header, without
// decoding the rest. Inside the writer's transaction it sees the request's
// own appends, so a Hook can record a publish's result (the engine's
// idempotency records).
func PositionOfID(tx *bolt.Tx, id string) (qid int, qoff, storedAt int64, ok bool, err error) {
	cl, found := OffsetOfID(tx, id)
	if !found {
		return 0, 0, 0, false, nil
	}
	rec := tx.Bucket(bucketCommitLog).Get(u64(cl))
	if rec == nil {
		return 0, 0, 0, false, nil
	}
	if storedAt, err = StoredAtOf(rec); err != nil {
		return 0, 0, 0, false, err
	}
	return int(int32(binary.BigEndian.Uint32(rec[offQueueID:]))), int64(binary.BigEndian.Uint64(rec[offQOffset:])), storedAt, true, nil
}

// QueueHead returns the store time (unix ms) of a queue's oldest message,
// reading its consume-queue unit and the fixed header of its record only;
// ok is false for an empty queue. A head whose record is missing or
// unreadable reports math.MinInt64: retention removes it like an expired
// one (TrimQueue).
func QueueHead(tx *bolt.Tx, uid uint64, qid int) (storedAt int64, ok bool, err error) {
	min, max, err := QueueRange(tx, uid, qid)
	if err != nil || min == max {
		return 0, false, err
	}
	u, found, err := UnitAt(tx, uid, qid, min)
	if err != nil || !found {
		return math.MinInt64, true, nil
	}
	ms, found, err := StoredAtAt(tx, u.CommitLogOffset)
	if err != nil || !found {
		return math.MinInt64, true, nil
	}
	return ms, true, nil
}

// QueueBytes estimates the stored bytes of a queue's messages: exact up
// to sample messages, else the mean record size of sample units spread
// evenly over [min, max) times the count. Each unit is one look-up; no
// record is read.
func QueueBytes(tx *bolt.Tx, uid uint64, qid int, sample int) (int64, error) {
	lo, hi, err := QueueRange(tx, uid, qid)
	if err != nil || lo == hi {
		return 0, err
	}
	n := hi - lo
	k := min(int64(sample), n)
	var sum, seen int64
	for i := range k {
		u, ok, err := UnitAt(tx, uid, qid, lo+i*n/k)
		if err != nil {
			return 0, err
		}
		if ok {
			sum += int64(u.Size)
			seen++
		}
	}
	if seen == 0 {
		return 0, nil
	}
	return sum * n / seen, nil
}

// OffsetOfID looks a message id up in the id index.
func OffsetOfID(tx *bolt.Tx, id string) (int64, bool) {
	v := tx.Bucket(bucketIDs).Get([]byte(id))
	if len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
}

// OffsetsOfKey returns the commit log offsets of topic's messages carrying
// key, oldest first, at most limit.
func OffsetsOfKey(tx *bolt.Tx, topic, key string, limit int) []int64 {
	prefix := keyIndexPrefix(topic, key)
	var out []int64
	c := tx.Bucket(bucketKeys).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
		if len(k) != len(prefix)+8 {
			continue
		}
		out = append(out, int64(binary.BigEndian.Uint64(k[len(prefix):])))
	}
	return out
}

// QueueRanges returns the [min, max) of every queue of every topic, for the
// engine's in-memory arrival table.
func QueueRanges(tx *bolt.Tx) (map[core.MessageQueue][2]int64, error) {
	topics, err := ListTopics(tx)
	if err != nil {
		return nil, err
	}
	out := map[core.MessageQueue][2]int64{}
	for _, t := range topics {
		for q := range t.Queues {
			min, max, err := QueueRange(tx, t.UID, q)
			if err != nil {
				return nil, err
			}
			out[core.MessageQueue{Topic: t.Name, QueueID: q}] = [2]int64{min, max}
		}
	}
	return out, nil
}
