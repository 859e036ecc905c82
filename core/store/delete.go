package store

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// remover deletes commit log records with their index entries, reusing
// its buffers across the records of one transaction.
type remover struct {
	tx   *bolt.Tx
	cl   *bolt.Bucket
	ids  *bolt.Bucket
	keys *bolt.Bucket
	bad  *bolt.Bucket // mq.corrupt; nil before anything was set aside
	key  []byte       // scratch (bbolt's Delete does not keep the key)
	refs [][]byte
}

func newRemover(tx *bolt.Tx) *remover {
	return &remover{tx: tx, cl: tx.Bucket(bucketCommitLog), ids: tx.Bucket(bucketIDs),
		keys: tx.Bucket(bucketKeys), bad: tx.Bucket(bucketCorrupt), key: make([]byte, 0, 64)}
}

// removeMessage deletes the commit log record at clOffset with its id and
// key index entries (the consume-queue unit is the caller's). It reads the
// id and keys from the front of the record (recordRefs), never the body.
func (r *remover) removeMessage(clOffset int64) error {
	var clk [8]byte
	binary.BigEndian.PutUint64(clk[:], uint64(clOffset))
	rec := r.cl.Get(clk[:])
	if rec == nil {
		return nil
	}
	// A record whose front no longer parses is deleted all the same; its
	// index entries (if any) then point nowhere and readers skip them.
	// (The slices alias rec's page, which deleting from other buckets
	// leaves in place until the commit.)
	if topic, id, keys, ok := recordRefs(rec, r.refs); ok {
		r.refs = keys[:0]
		if v := r.ids.Get(id); len(v) == 8 && int64(binary.BigEndian.Uint64(v)) == clOffset {
			if err := r.ids.Delete(id); err != nil {
				return err
			}
		}
		for _, k := range keys {
			r.key = appendKeyIndexKeyBytes(r.key[:0], topic, k, clOffset)
			if err := r.keys.Delete(r.key); err != nil {
				return err
			}
		}
	}
	if r.bad != nil {
		if err := r.bad.Delete(clk[:]); err != nil { // its set-aside entry goes with it
			return err
		}
	}
	return r.cl.Delete(clk[:])
}

// TrimQueue removes up to limit messages from the head of a queue while
// their store time is before cutoff (unix ms), advancing the queue's min
// offset (RocketMQ deleteExpiredFile + correctMinOffset, per queue). It
// reports how many it removed and whether more may be due.
func TrimQueue(tx *bolt.Tx, t TopicRecord, qid int, cutoff int64, limit int) (removed int, more bool, err error) {
	min, max, err := QueueRange(tx, t.UID, qid)
	if err != nil {
		return 0, false, err
	}
	cq := tx.Bucket(bucketCQ).Bucket(uidKey(t.UID))
	rm := newRemover(tx)
	for min < max {
		if removed == limit {
			more = true
			break
		}
		key := cqKey(qid, min)
		v := cq.Get(key)
		if v == nil {
			min++ // a hole cannot happen, but never loop on one
			continue
		}
		u, err := decodeUnit(v)
		if err != nil {
			return removed, false, err
		}
		ms, ok, err := StoredAtAt(tx, u.CommitLogOffset)
		if err == nil && ok && ms >= cutoff {
			break
		}
		if err := rm.removeMessage(u.CommitLogOffset); err != nil {
			return removed, false, err
		}
		if err := cq.Delete(key); err != nil {
			return removed, false, err
		}
		min++
		removed++
	}
	if removed > 0 {
		err = tx.Bucket(bucketQueues).Put(queueKey(t.UID, qid), queueMeta{Min: min, Max: max}.encode())
	}
	return removed, more, err
}

// RemoveTopic deletes a topic's config and queue metadata at once and moves
// its incarnation to the trash, whose messages EmptyTrash removes in small
// transactions. After it commits the topic no longer exists for readers.
func RemoveTopic(tx *bolt.Tx, name string) (TopicRecord, bool, error) {
	t, ok, err := GetTopic(tx, name)
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

// EmptyTrash removes up to limit messages of deleted topics; more reports
// whether trash is left.
func EmptyTrash(tx *bolt.Tx, limit int) (more bool, err error) {
	trash := tx.Bucket(bucketTrash)
	k, _ := trash.Cursor().First()
	if k == nil {
		return false, nil
	}
	uid := bytes.Clone(k)
	cqs := tx.Bucket(bucketCQ)
	cq := cqs.Bucket(uid)
	if cq != nil {
		c := cq.Cursor()
		n := 0
		var keys [][]byte
		rm := newRemover(tx)
		for ck, v := c.First(); ck != nil && n < limit; ck, v = c.Next() {
			if u, err := decodeUnit(v); err == nil {
				if err := rm.removeMessage(u.CommitLogOffset); err != nil {
					return false, err
				}
			}
			keys = append(keys, bytes.Clone(ck))
			n++
		}
		for _, ck := range keys {
			if err := cq.Delete(ck); err != nil {
				return false, err
			}
		}
		if n == limit {
			return true, nil
		}
		if err := cqs.DeleteBucket(uid); err != nil {
			return false, err
		}
	}
	if err := trash.Delete(uid); err != nil {
		return false, err
	}
	k, _ = trash.Cursor().First()
	return k != nil, nil
}

// HasTrash reports whether deleted topics still hold messages.
func HasTrash(tx *bolt.Tx) bool {
	k, _ := tx.Bucket(bucketTrash).Cursor().First()
	return k != nil
}
