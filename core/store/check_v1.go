package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The self check of a layout version 1 file (before segments): what a
// backup or a file not yet migrated is checked against (Verify, and Open
// before it migrates). It reads the v1 buckets only.

func checkV1(tx *bolt.Tx, note func(CorruptRecord)) error {
	for _, name := range [][]byte{bucketCommitLogV1, bucketCQV1, bucketQueues, bucketTopicsV1, bucketIDsV1, bucketKeysV1, bucketTrash} {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("%w: bucket %s is missing", ErrCorrupt, name)
		}
	}
	topics, err := listTopicsIn(tx.Bucket(bucketTopicsV1))
	if err != nil {
		return err
	}
	for _, t := range topics {
		if err := checkTopicV1(tx, t, note); err != nil {
			return fmt.Errorf("topic %q: %w", t.Name, err)
		}
	}
	return checkCommitLogV1(tx, note)
}

func checkTopicV1(tx *bolt.Tx, t TopicRecord, note func(CorruptRecord)) error {
	cq := tx.Bucket(bucketCQV1).Bucket(uidKey(t.UID))
	if cq == nil {
		return fmt.Errorf("%w: consume queue bucket missing", ErrCorrupt)
	}
	cl := tx.Bucket(bucketCommitLogV1)
	c := cq.Cursor()
	unit := func(q int, off int64, v []byte) error {
		u, err := decodeUnit(v)
		if err != nil {
			return fmt.Errorf("%w: queue %d offset %d: %v", ErrCorrupt, q, off, err)
		}
		return checkUnit(tx, t, q, off, u, cl.Get(u64(u.CommitLogOffset)), note)
	}
	for q := range t.Queues {
		min, max, err := queueRange(tx, t.UID, q)
		if err != nil {
			return err
		}
		if min < 0 || max < min {
			return fmt.Errorf("%w: queue %d has range [%d, %d)", ErrCorrupt, q, min, max)
		}
		if min == max {
			if k, _ := c.Seek(cqKey(q, 0)); k != nil {
				if qid, off, _ := parseCQKey(k); qid == q {
					return fmt.Errorf("%w: queue %d is empty at offset %d but holds a unit at offset %d", ErrCorrupt, q, max, off)
				}
			}
			continue
		}
		k, v := c.Seek(cqKey(q, 0))
		if qid, off, ok := parseCQKey(k); !ok || qid != q || off != min {
			return fmt.Errorf("%w: queue %d: first unit is not at its min offset %d", ErrCorrupt, q, min)
		}
		if err := unit(q, min, v); err != nil {
			return err
		}
		k, v = c.Seek(cqKey(q, max-1))
		if qid, off, ok := parseCQKey(k); !ok || qid != q || off != max-1 {
			return fmt.Errorf("%w: queue %d: consume queue tail is not at max offset %d - 1", ErrCorrupt, q, max)
		}
		if err := unit(q, max-1, v); err != nil {
			return err
		}
		if k, _ := c.Next(); k != nil {
			if qid, off, _ := parseCQKey(k); qid == q {
				return fmt.Errorf("%w: queue %d holds a unit at offset %d beyond its max offset %d", ErrCorrupt, q, off, max)
			}
		}
	}
	return nil
}

func checkCommitLogV1(tx *bolt.Tx, note func(CorruptRecord)) error {
	cl := tx.Bucket(bucketCommitLogV1)
	c := cl.Cursor()
	k, v := c.Last()
	if k == nil {
		return nil
	}
	if len(k) != 8 {
		return fmt.Errorf("%w: commit log key of %d bytes", ErrCorrupt, len(k))
	}
	if last := int64(bytesU64(k)); uint64(last) >= cl.Sequence() {
		return fmt.Errorf("%w: commit log sequence %d is not beyond its last entry %d", ErrCorrupt, cl.Sequence(), last)
	}
	for i := 0; k != nil && i < tailCheck; i++ {
		if _, err := DecodeMessage(int64(bytesU64(k)), v); err != nil {
			note(CorruptRecord{CommitLogOffset: int64(bytesU64(k)), QueueID: -1, QueueOffset: -1, Reason: err.Error()})
		}
		k, v = c.Prev()
	}
	return nil
}
