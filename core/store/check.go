package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// tailCheck is how many of the newest commit log records the self check
// decodes (checksum included) besides every queue's head and tail.
const tailCheck = 256

// check is the self check run on open, after the pre-check (precheck.go)
// and before anything is written. It verifies what a crash or a bad disk
// would break and what the engine relies on:
//   - bbolt's page-level consistency (tx.Check), when the file is small
//     (a second opinion on the pre-check's walk, through bbolt itself);
//   - mqgate's buckets exist (a file with no bucket at all is one bbolt
//     created but mqgate never initialised: init makes them);
//   - every topic has a consume-queue bucket and metadata for each queue;
//   - every queue's range [min, max) is sane and its head and tail units
//     exist and point at commit log records of the recorded size that
//     belong to that topic, queue and offset;
//   - the commit log sequence is beyond its last record, and the newest
//     records decode.
//
// A record that fails its checksum is not a reason to refuse the file: it
// is returned to be set aside (corrupt.go), and the check goes on.
//
// bbolt may panic when it walks a mangled page; Open's guard reports that as
// corruption too.
func (s *Store) check() (setAside []CorruptRecord, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if s.opts.FullCheckLimit > 0 && tx.Size() <= s.opts.FullCheckLimit {
			var errs []error
			for e := range tx.Check() {
				errs = append(errs, e)
			}
			if len(errs) > 0 {
				return fmt.Errorf("the file is corrupt (bbolt check): %w", errors.Join(errs...))
			}
		}
		if tx.Bucket(bucketMeta) == nil {
			if k, _ := tx.Cursor().First(); k != nil {
				return fmt.Errorf("%w: it is a bbolt file but not an mqgate store (no %s bucket)", ErrCorrupt, bucketMeta)
			}
			return nil // bbolt created it, mqgate had not initialised it yet
		}
		for _, name := range [][]byte{bucketCommitLog, bucketCQ, bucketQueues, bucketTopics, bucketIDs, bucketKeys, bucketTrash} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%w: bucket %s is missing", ErrCorrupt, name)
			}
		}
		topics, err := ListTopics(tx)
		if err != nil {
			return err
		}
		aside := map[int64]bool{}
		note := func(r CorruptRecord) {
			if !aside[r.CommitLogOffset] && !IsSetAside(tx, r.CommitLogOffset) {
				aside[r.CommitLogOffset] = true
				setAside = append(setAside, r)
			}
		}
		for _, t := range topics {
			if err := checkTopic(tx, t, note); err != nil {
				return fmt.Errorf("topic %q: %w", t.Name, err)
			}
		}
		return checkCommitLog(tx, note)
	})
	return setAside, err
}

func checkTopic(tx *bolt.Tx, t TopicRecord, note func(CorruptRecord)) error {
	cq := tx.Bucket(bucketCQ).Bucket(uidKey(t.UID))
	if cq == nil {
		return fmt.Errorf("%w: consume queue bucket missing", ErrCorrupt)
	}
	c := cq.Cursor()
	for q := range t.Queues {
		min, max, err := QueueRange(tx, t.UID, q)
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
		if err := checkUnit(tx, t, q, min, v, note); err != nil {
			return err
		}
		k, v = c.Seek(cqKey(q, max-1))
		if qid, off, ok := parseCQKey(k); !ok || qid != q || off != max-1 {
			return fmt.Errorf("%w: queue %d: consume queue tail is not at max offset %d - 1", ErrCorrupt, q, max)
		}
		if err := checkUnit(tx, t, q, max-1, v, note); err != nil {
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

func checkUnit(tx *bolt.Tx, t TopicRecord, q int, off int64, v []byte, note func(CorruptRecord)) error {
	u, err := decodeUnit(v)
	if err != nil {
		return fmt.Errorf("%w: queue %d offset %d: %v", ErrCorrupt, q, off, err)
	}
	rec := tx.Bucket(bucketCommitLog).Get(u64(u.CommitLogOffset))
	if rec == nil {
		return fmt.Errorf("%w: queue %d offset %d points at missing commit log entry %d", ErrCorrupt, q, off, u.CommitLogOffset)
	}
	if int(u.Size) != len(rec) {
		return fmt.Errorf("%w: queue %d offset %d: commit log entry %d has %d bytes, the unit says %d",
			ErrCorrupt, q, off, u.CommitLogOffset, len(rec), u.Size)
	}
	m, err := DecodeMessage(u.CommitLogOffset, rec)
	if err != nil {
		note(InspectCorrupt(tx, u.CommitLogOffset, t.UID, q, off, err))
		return nil
	}
	if m.Topic != t.Name || m.QueueID != q || m.QueueOffset != off {
		return fmt.Errorf("%w: queue %d offset %d points at commit log entry %d of %s/%d/%d",
			ErrCorrupt, q, off, u.CommitLogOffset, m.Topic, m.QueueID, m.QueueOffset)
	}
	return nil
}

func checkCommitLog(tx *bolt.Tx, note func(CorruptRecord)) error {
	cl := tx.Bucket(bucketCommitLog)
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
			note(InspectCorrupt(tx, int64(bytesU64(k)), 0, -1, -1, err))
		}
		k, v = c.Prev()
	}
	return nil
}

func bytesU64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}
