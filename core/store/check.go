package store

import (
	"encoding/binary"
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
//   - the layout version is one this build reads: version 2 (segments),
//     or version 1, checked as version 1 (check_v1.go) and migrated by
//     Open afterwards; a newer one is refused, unchanged;
//   - mqgate's buckets exist (a file with no bucket at all is one bbolt
//     created but mqgate never initialised: init makes them);
//   - every segment has its info and sub-buckets, and every queue's
//     stretch names an existing segment;
//   - every queue's range [min, max) is sane and its head and tail units
//     exist and point at commit log records of the recorded size that
//     belong to that topic, queue and offset, and no unit lies at max;
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
		if s.pageChecked && s.opts.FullCheckLimit > 0 && tx.Size() <= s.opts.FullCheckLimit {
			var errs []error
			for e := range tx.Check() {
				errs = append(errs, e)
			}
			if len(errs) > 0 {
				return fmt.Errorf("the file is corrupt (bbolt check): %w", errors.Join(errs...))
			}
		}
		version, err := layoutVersion(tx)
		if err != nil {
			return err
		}
		aside := map[int64]bool{}
		note := func(r CorruptRecord) {
			if !aside[r.CommitLogOffset] && !isSetAside(tx, r.CommitLogOffset) {
				aside[r.CommitLogOffset] = true
				setAside = append(setAside, r)
			}
		}
		switch version {
		case 0:
			return nil // bbolt created it, mqgate had not initialised it yet
		case 1:
			return checkV1(tx, note)
		}
		for _, name := range [][]byte{bucketSegs, bucketQSegs, bucketQueues, bucketTopics, bucketTrash} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("%w: bucket %s is missing", ErrCorrupt, name)
			}
		}
		if err := checkSegments(tx); err != nil {
			return err
		}
		topics, err := listTopics(tx)
		if err != nil {
			return err
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

// layoutVersion reads the file's layout version: 0 for a file mqgate has
// not initialised. A version this build does not read is an error.
func layoutVersion(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		if k, _ := tx.Cursor().First(); k != nil {
			return 0, fmt.Errorf("%w: it is a bbolt file but not an mqgate store (no %s bucket)", ErrCorrupt, bucketMeta)
		}
		return 0, nil
	}
	v := meta.Get(keyFormat)
	switch {
	case v == nil:
		return 0, fmt.Errorf("%w: %s holds no format version", ErrCorrupt, bucketMeta)
	case len(v) == 1 && (v[0] == 1 || v[0] == formatVersion):
		return int(v[0]), nil
	default:
		return 0, fmt.Errorf("%w: unsupported store format %v (this build reads 1 and %d): it was written by a newer mqgate", ErrFormat, v, formatVersion)
	}
}

// ErrFormat is returned for a file written in a layout this build does
// not read (a newer mqgate's).
var ErrFormat = errors.New("unsupported store format")

// checkSegments checks every segment's info and sub-buckets and that
// every queue stretch names an existing segment.
func checkSegments(tx *bolt.Tx) error {
	segs := tx.Bucket(bucketSegs)
	infos, err := listSegments(tx)
	if err != nil {
		return err
	}
	for _, i := range infos {
		seg := segs.Bucket(u64(i.Start))
		for _, name := range [][]byte{segCL, segCQ, segQueues, segIDs, segKeys} {
			if seg.Bucket(name) == nil {
				return fmt.Errorf("%w: segment %d lacks its %s bucket", ErrCorrupt, i.Start, name)
			}
		}
	}
	return tx.Bucket(bucketQSegs).ForEach(func(k, v []byte) error {
		if len(k) != 18 || len(v) != 8 {
			return fmt.Errorf("%w: queue stretch entry of %d+%d bytes", ErrCorrupt, len(k), len(v))
		}
		if segs.Bucket(v) == nil {
			return fmt.Errorf("%w: queue %d of topic uid %d: its stretch from offset %d names segment %d, which is missing",
				ErrCorrupt, binary.BigEndian.Uint16(k[8:]), binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[10:]), binary.BigEndian.Uint64(v))
		}
		return nil
	})
}

func checkTopic(tx *bolt.Tx, t TopicRecord, note func(CorruptRecord)) error {
	for q := range t.Queues {
		min, max, err := queueRange(tx, t.UID, q)
		if err != nil {
			return err
		}
		if min < 0 || max < min {
			return fmt.Errorf("%w: queue %d has range [%d, %d)", ErrCorrupt, q, min, max)
		}
		r := newQueueReader(tx, t.UID, q)
		if min < max {
			for _, off := range []int64{min, max - 1} {
				u, ok, err := r.at(off)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("%w: queue %d has range [%d, %d) but no unit at offset %d", ErrCorrupt, q, min, max, off)
				}
				if err := checkUnit(tx, t, q, off, u, recordAt(tx, u.CommitLogOffset), note); err != nil {
					return err
				}
			}
		}
		if _, ok, err := r.at(max); err != nil || ok {
			return fmt.Errorf("%w: queue %d holds a unit at its max offset %d", ErrCorrupt, q, max)
		}
	}
	return nil
}

// checkUnit checks that unit u at offset off of queue q of t points at rec,
// a record of its size that names the same topic, queue and offset.
func checkUnit(tx *bolt.Tx, t TopicRecord, q int, off int64, u Unit, rec []byte, note func(CorruptRecord)) error {
	if rec == nil {
		return fmt.Errorf("%w: queue %d offset %d points at missing commit log entry %d", ErrCorrupt, q, off, u.CommitLogOffset)
	}
	if int(u.Size) != len(rec) {
		return fmt.Errorf("%w: queue %d offset %d: commit log entry %d has %d bytes, the unit says %d",
			ErrCorrupt, q, off, u.CommitLogOffset, len(rec), u.Size)
	}
	m, err := DecodeMessage(u.CommitLogOffset, rec)
	if err != nil {
		note(inspectCorrupt(tx, u.CommitLogOffset, t.UID, q, off, err))
		return nil
	}
	if m.Topic != t.Name || m.QueueID != q || m.QueueOffset != off {
		return fmt.Errorf("%w: queue %d offset %d points at commit log entry %d of %s/%d/%d",
			ErrCorrupt, q, off, u.CommitLogOffset, m.Topic, m.QueueID, m.QueueOffset)
	}
	return nil
}

// checkCommitLog checks that the commit log sequence is beyond the newest
// record and decodes the newest tailCheck records, across segments.
func checkCommitLog(tx *bolt.Tx, note func(CorruptRecord)) error {
	segs := tx.Bucket(bucketSegs)
	sc := segs.Cursor()
	n, first := 0, true
	for sk, _ := sc.Last(); sk != nil && n < tailCheck; sk, _ = sc.Prev() {
		c := segs.Bucket(sk).Bucket(segCL).Cursor()
		for k, v := c.Last(); k != nil && n < tailCheck; k, v = c.Prev() {
			if len(k) != 8 {
				return fmt.Errorf("%w: commit log key of %d bytes", ErrCorrupt, len(k))
			}
			cl := int64(binary.BigEndian.Uint64(k))
			if first {
				if uint64(cl) >= segs.Sequence() {
					return fmt.Errorf("%w: commit log sequence %d is not beyond its last entry %d", ErrCorrupt, segs.Sequence(), cl)
				}
				first = false
			}
			if cl < int64(binary.BigEndian.Uint64(sk)) {
				return fmt.Errorf("%w: commit log entry %d lies before the start of its segment %d", ErrCorrupt, cl, binary.BigEndian.Uint64(sk))
			}
			if _, err := DecodeMessage(cl, v); err != nil {
				note(inspectCorrupt(tx, cl, 0, -1, -1, err))
			}
			n++
		}
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
