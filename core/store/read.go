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

// scanQueue calls fn for the units of queue qid of topic uid from offset on
// (at least the queue's min offset), in offset order, until fn returns
// false or the queue ends.
func scanQueue(tx *bolt.Tx, uid uint64, qid int, from int64, fn func(off int64, u Unit) bool) error {
	lo, hi, ok := queueBounds(tx, uid, qid)
	if !ok {
		return nil
	}
	r := newQueueReader(tx, uid, qid)
	for off := max(from, lo); off < hi; off++ {
		u, found, err := r.at(off)
		if err != nil {
			return err
		}
		if !found {
			return nil
		}
		if !fn(off, u) {
			return nil
		}
	}
	return nil
}

// queueBounds is queueRange without an error: ok is false when the queue
// has no (readable) metadata, as for a deleted topic's.
func queueBounds(tx *bolt.Tx, uid uint64, qid int) (min, max int64, ok bool) {
	v := tx.Bucket(bucketQueues).Get(queueKey(uid, qid))
	if v == nil {
		return 0, 0, false
	}
	m, err := decodeQueueMeta(v)
	return m.Min, m.Max, err == nil
}

// unitAt returns the unit at one queue offset; a unit outside the queue's
// [min, max) is not found (retention moved past it, or its topic is gone).
func unitAt(tx *bolt.Tx, uid uint64, qid int, off int64) (Unit, bool, error) {
	lo, hi, ok := queueBounds(tx, uid, qid)
	if !ok || off < lo || off >= hi {
		return Unit{}, false, nil
	}
	return newQueueReader(tx, uid, qid).at(off)
}

// messageAt decodes the commit log record at clOffset; nil if absent.
func messageAt(tx *bolt.Tx, clOffset int64) (*core.Message, error) {
	rec := recordAt(tx, clOffset)
	if rec == nil {
		return nil, nil
	}
	return DecodeMessage(clOffset, rec)
}

// storedAtAt reads the store time (unix ms) of the record at clOffset.
func storedAtAt(tx *bolt.Tx, clOffset int64) (int64, bool, error) {
	rec := recordAt(tx, clOffset)
	if rec == nil {
		return 0, false, nil
	}
	ms, err := StoredAtOf(rec)
	return ms, err == nil, err
}

// positionOfID reads where the message with id was placed (queue id,
// queue offset, storedAt unix ms) from its record's fixed header, without
// decoding the rest. Inside the writer's transaction it sees the request's
// own appends, so a Hook can record a publish's result (the engine's
// idempotency records).
func positionOfID(tx *bolt.Tx, id string) (qid int, qoff, storedAt int64, ok bool, err error) {
	cl, found := offsetOfID(tx, id)
	if !found {
		return 0, 0, 0, false, nil
	}
	rec := recordAt(tx, cl)
	if rec == nil {
		return 0, 0, 0, false, nil
	}
	if storedAt, err = StoredAtOf(rec); err != nil {
		return 0, 0, 0, false, err
	}
	return int(int32(binary.BigEndian.Uint32(rec[offQueueID:]))), int64(binary.BigEndian.Uint64(rec[offQOffset:])), storedAt, true, nil
}

// queueHead returns the store time (unix ms) of a queue's oldest message,
// reading its consume-queue unit and the fixed header of its record only;
// ok is false for an empty queue. A head whose record is missing or
// unreadable reports math.MinInt64: retention removes it like an expired
// one (trimQueue).
func queueHead(tx *bolt.Tx, uid uint64, qid int) (storedAt int64, ok bool, err error) {
	min, max, err := queueRange(tx, uid, qid)
	if err != nil || min == max {
		return 0, false, err
	}
	u, found, err := unitAt(tx, uid, qid, min)
	if err != nil || !found {
		return math.MinInt64, true, nil
	}
	ms, found, err := storedAtAt(tx, u.CommitLogOffset)
	if err != nil || !found {
		return math.MinInt64, true, nil
	}
	return ms, true, nil
}

// queueBytes estimates the stored bytes of a queue's messages: exact up
// to sample messages, else the mean record size of sample units spread
// evenly over [min, max) times the count. Each unit is one look-up; no
// record is read.
func queueBytes(tx *bolt.Tx, uid uint64, qid int, sample int) (int64, error) {
	lo, hi, err := queueRange(tx, uid, qid)
	if err != nil || lo == hi {
		return 0, err
	}
	n := hi - lo
	k := min(int64(sample), n)
	var sum, seen int64
	for i := range k {
		u, ok, err := unitAt(tx, uid, qid, lo+i*n/k)
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

// offsetOfID looks a message id up in the id indexes of the segments,
// newest first (a retry copy that kept its id is found before its
// original).
func offsetOfID(tx *bolt.Tx, id string) (int64, bool) {
	segs := tx.Bucket(bucketSegs)
	c := segs.Cursor()
	key := []byte(id)
	for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
		seg := segs.Bucket(k)
		if seg == nil {
			continue
		}
		if v := seg.Bucket(segIDs).Get(key); len(v) == 8 {
			return int64(binary.BigEndian.Uint64(v)), true
		}
	}
	return 0, false
}

// offsetsOfKey returns the commit log offsets of topic's messages carrying
// key, oldest first, at most limit.
func offsetsOfKey(tx *bolt.Tx, topic, key string, limit int) []int64 {
	prefix := keyIndexPrefix(topic, key)
	var out []int64
	segs := tx.Bucket(bucketSegs)
	sc := segs.Cursor()
	for sk, _ := sc.First(); sk != nil && len(out) < limit; sk, _ = sc.Next() {
		seg := segs.Bucket(sk)
		if seg == nil {
			continue
		}
		c := seg.Bucket(segKeys).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
			if len(k) != len(prefix)+8 {
				continue
			}
			out = append(out, int64(binary.BigEndian.Uint64(k[len(prefix):])))
		}
	}
	return out
}

// queueRanges returns the [min, max) of every queue of every topic, for the
// engine's in-memory arrival table.
func queueRanges(tx *bolt.Tx, gates *gateTable) (map[core.MessageQueue][2]int64, error) {
	topics, err := listTopics(tx)
	if err != nil {
		return nil, err
	}
	out := map[core.MessageQueue][2]int64{}
	for _, t := range topics {
		for q := range t.Queues {
			min, max, err := queueRange(tx, t.UID, q)
			if err != nil {
				return nil, err
			}
			out[core.MessageQueue{Topic: t.Name, QueueID: q}] = [2]int64{min, gates.clamp(qref{t.UID, q}, max)}
		}
	}
	return out, nil
}
