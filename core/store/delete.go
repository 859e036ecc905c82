package store

import (
	"bytes"
	"math"

	bolt "go.etcd.io/bbolt"
)

// trimQueue moves a queue's min offset past its messages stored before
// cutoff (unix ms) (RocketMQ deleteExpiredFile + correctMinOffset, per
// queue). Store times never decrease along a queue, so the new min is
// found without touching the trimmed units: stretches in segments whose
// last commit is before cutoff are skipped whole, then a binary search
// reads the record headers of the one stretch that straddles it. Nothing
// is deleted here: dropSegment frees whole segments once no unit in them
// is visible. It reports how many messages left the queue; limit is
// kept for callers and ignored (the move costs the same at any size),
// so more is always false.
func trimQueue(tx *bolt.Tx, t TopicRecord, qid int, cutoff int64, limit int) (removed int, more bool, err error) {
	lo, hi, err := queueRange(tx, t.UID, qid)
	if err != nil {
		return 0, false, err
	}
	min := lo
	segs := tx.Bucket(bucketSegs)
	for min < hi {
		start, _, next, ok := queueSegment(tx, t.UID, qid, min)
		if !ok {
			min = hi // no stretch holds min: nothing readable is left
			break
		}
		end := hi
		if next >= 0 && next < hi {
			end = next
		}
		seg := segs.Bucket(u64(start))
		if seg == nil {
			min = end
			continue
		}
		info, err := segmentInfo(start, seg)
		if err != nil {
			return 0, false, err
		}
		if info.Last < cutoff {
			min = end // the whole stretch is older than cutoff
			continue
		}
		// The first offset in [min, end) stored at or after cutoff.
		r := newQueueReader(tx, t.UID, qid)
		a, b := min, end
		for a < b {
			mid := a + (b-a)/2
			at, err := storedAtOfUnit(tx, r, mid)
			if err != nil {
				return 0, false, err
			}
			if at < cutoff {
				a = mid + 1
			} else {
				b = mid
			}
		}
		min = a
		break
	}
	if min > lo {
		err = tx.Bucket(bucketQueues).Put(queueKey(t.UID, qid), queueMeta{Min: min, Max: hi}.encode())
	}
	return int(min - lo), false, err
}

// storedAtOfUnit is the store time of the message at off, read from its
// record's header (a record failing its checksum still has one); a unit
// or record that is missing or whose header is unreadable counts as
// expired (math.MinInt64), so retention never stalls on one.
func storedAtOfUnit(tx *bolt.Tx, r *queueReader, off int64) (int64, error) {
	u, ok, err := r.at(off)
	if err != nil || !ok {
		return math.MinInt64, nil
	}
	ms, ok, err := storedAtAt(tx, u.CommitLogOffset)
	if err != nil || !ok {
		return math.MinInt64, nil
	}
	return ms, nil
}

// removeTopic deletes a topic's config and queue metadata at once and moves
// its incarnation to the trash. After it commits the topic no longer
// exists for readers, and its units no longer keep segments alive: they
// go with the segments that hold them (dropSegment), which also clears
// the trash entry once no segment holds any.
func removeTopic(tx *bolt.Tx, name string) (TopicRecord, bool, error) {
	t, ok, err := getTopic(tx, name)
	if err != nil || !ok {
		return t, ok, err
	}
	qb := tx.Bucket(bucketQueues)
	for q := range t.Queues {
		if err := qb.Delete(queueKey(t.UID, q)); err != nil {
			return t, false, err
		}
	}
	if err := tx.Bucket(bucketTrash).Put(uidKey(t.UID), []byte(t.Name)); err != nil {
		return t, false, err
	}
	return t, true, tx.Bucket(bucketTopics).Delete([]byte(name))
}

// emptyTrash clears the trash entries of deleted topics no segment holds
// units of, then drops at most one droppable segment (dropSegment): a
// segment that held only deleted topics' (or expired) messages. more
// reports whether it dropped one (another may be droppable). limit is
// kept for callers; a segment goes whole.
func emptyTrash(tx *bolt.Tx, limit int) (more bool, err error) {
	if err := sweepTrash(tx); err != nil {
		return false, err
	}
	starts, err := droppableSegments(tx)
	if err != nil || len(starts) == 0 {
		return false, err
	}
	_, ok, err := dropSegment(tx, starts[0])
	return ok, err
}

// sweepTrash deletes the trash entries of incarnations without units in
// any segment.
func sweepTrash(tx *bolt.Tx) error {
	trash, qs := tx.Bucket(bucketTrash), tx.Bucket(bucketQSegs)
	var gone [][]byte
	c := trash.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if qk, _ := qs.Cursor().Seek(k); qk == nil || !bytes.HasPrefix(qk, k) {
			gone = append(gone, bytes.Clone(k))
		}
	}
	for _, k := range gone {
		if err := trash.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// hasTrash reports whether deleted topics still hold messages.
func hasTrash(tx *bolt.Tx) bool {
	k, _ := tx.Bucket(bucketTrash).Cursor().First()
	return k != nil
}
