package store

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// removeMessage deletes the commit log record at clOffset with its id and
// key index entries (the consume-queue unit is the caller's).
func removeMessage(tx *bolt.Tx, clOffset int64) error {
	cl := tx.Bucket(bucketCommitLog)
	key := u64(clOffset)
	rec := cl.Get(key)
	if rec == nil {
		return nil
	}
	// A record that no longer decodes is deleted all the same; its index
	// entries (if any) then point nowhere and readers skip them.
	if m, err := DecodeMessage(clOffset, rec); err == nil {
		ids := tx.Bucket(bucketIDs)
		if v := ids.Get([]byte(m.ID)); len(v) == 8 && int64(binary.BigEndian.Uint64(v)) == clOffset {
			if err := ids.Delete([]byte(m.ID)); err != nil {
				return err
			}
		}
		kb := tx.Bucket(bucketKeys)
		for _, k := range m.Keys {
			if err := kb.Delete(keyIndexKey(m.Topic, k, clOffset)); err != nil {
				return err
			}
		}
	}
	if b := tx.Bucket(bucketCorrupt); b != nil {
		if err := b.Delete(key); err != nil { // its set-aside entry goes with it
			return err
		}
	}
	return cl.Delete(key)
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
		if err := removeMessage(tx, u.CommitLogOffset); err != nil {
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
		for ck, v := c.First(); ck != nil && n < limit; ck, v = c.Next() {
			if u, err := decodeUnit(v); err == nil {
				if err := removeMessage(tx, u.CommitLogOffset); err != nil {
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
