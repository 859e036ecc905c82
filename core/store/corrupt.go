package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Records set aside. A commit log record that fails its checksum (or no
// longer decodes) at read time is never skipped silently: the reader that
// finds it records it here, in the same file, and moves past it; stats,
// metrics and GET /v1/topics/{topic}/corrupt report what is here.
//
//	mq.corrupt  commit log offset(8) -> set-aside record (below)
//
// Value, version 1: [0] version, uid(8) (0: not located), queue id(4)
// (all ones: unknown), queue offset(8) (all ones: unknown), detected at
// unix ms(8), then uvarint-length-prefixed message id and reason.
//
// An entry goes when its record's segment goes (dropSegment), so it
// counts what is still in the store.
var bucketCorrupt = []byte("mq.corrupt")

const corruptVersion = 1

// CorruptRecord is one commit log record set aside as corrupt.
type CorruptRecord struct {
	CommitLogOffset int64
	// UID is the topic incarnation it belongs to; 0 when the record's
	// header is too damaged to place it in a queue.
	UID uint64
	// QueueID and QueueOffset place it; -1 when unknown.
	QueueID     int
	QueueOffset int64
	// MessageID is the record's id when it could be read and the id
	// index confirms it points at this record; "" otherwise.
	MessageID  string
	Reason     string
	DetectedAt time.Time
}

func (r CorruptRecord) encode() []byte {
	b := make([]byte, 0, 1+8+4+8+8+len(r.MessageID)+len(r.Reason)+4)
	b = append(b, corruptVersion)
	b = binary.BigEndian.AppendUint64(b, r.UID)
	b = binary.BigEndian.AppendUint32(b, uint32(int32(r.QueueID)))
	b = binary.BigEndian.AppendUint64(b, uint64(r.QueueOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(r.DetectedAt.UnixMilli()))
	b = appendString(b, r.MessageID)
	return appendString(b, r.Reason)
}

func decodeCorrupt(clOffset int64, v []byte) (CorruptRecord, error) {
	if len(v) < 29 || v[0] != corruptVersion {
		return CorruptRecord{}, fmt.Errorf("%w: set-aside entry of commit log offset %d", ErrCorrupt, clOffset)
	}
	r := CorruptRecord{
		CommitLogOffset: clOffset,
		UID:             binary.BigEndian.Uint64(v[1:]),
		QueueID:         int(int32(binary.BigEndian.Uint32(v[9:]))),
		QueueOffset:     int64(binary.BigEndian.Uint64(v[13:])),
		DetectedAt:      time.UnixMilli(int64(binary.BigEndian.Uint64(v[21:]))).UTC(),
	}
	rd := reader{b: v[29:]}
	r.MessageID = rd.str()
	r.Reason = rd.str()
	if rd.err != nil {
		return CorruptRecord{}, fmt.Errorf("%w: set-aside entry of commit log offset %d: %v", ErrCorrupt, clOffset, rd.err)
	}
	return r, nil
}

// isSetAside reports whether the record at clOffset is recorded as corrupt.
func isSetAside(tx *bolt.Tx, clOffset int64) bool {
	b := tx.Bucket(bucketCorrupt)
	return b != nil && b.Get(u64(clOffset)) != nil
}

// recordCorrupt records r unless its commit log offset is recorded
// already; added reports whether it was new. tx must be writable.
func recordCorrupt(tx *bolt.Tx, r CorruptRecord) (added bool, err error) {
	b, err := tx.CreateBucketIfNotExists(bucketCorrupt)
	if err != nil {
		return false, err
	}
	k := u64(r.CommitLogOffset)
	if b.Get(k) != nil {
		return false, nil
	}
	if r.DetectedAt.IsZero() {
		r.DetectedAt = time.Now()
	}
	return true, b.Put(k, r.encode())
}

// listCorrupt returns every set-aside record in commit log order.
func listCorrupt(tx *bolt.Tx) ([]CorruptRecord, error) {
	b := tx.Bucket(bucketCorrupt)
	if b == nil {
		return nil, nil
	}
	var out []CorruptRecord
	err := b.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("%w: set-aside key of %d bytes", ErrCorrupt, len(k))
		}
		r, err := decodeCorrupt(int64(binary.BigEndian.Uint64(k)), v)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// inspectCorrupt describes the unreadable record at clOffset for setting it
// aside. uid, qid and qoff place it when the caller knows (it read the
// record through its consume queue; uid 0 when it does not). cause is the
// decode error (nil: the record is missing). The id and, when not given,
// the place are read leniently from the damaged record and kept only when
// the indexes confirm them.
func inspectCorrupt(tx *bolt.Tx, clOffset int64, uid uint64, qid int, qoff int64, cause error) CorruptRecord {
	r := CorruptRecord{CommitLogOffset: clOffset, UID: uid, QueueID: qid, QueueOffset: qoff, DetectedAt: time.Now()}
	if uid == 0 {
		r.QueueID, r.QueueOffset = -1, -1
	}
	switch {
	case cause == nil:
		r.Reason = "the commit log record is missing"
	case errors.Is(cause, ErrCorrupt):
		r.Reason = cause.Error()
	default:
		r.Reason = "unreadable: " + cause.Error()
	}
	rec := recordAt(tx, clOffset)
	if rec == nil {
		return r
	}
	topic, id, pqid, pqoff, ok := peekRecord(rec)
	if !ok {
		return r
	}
	if at, found := offsetOfID(tx, id); id != "" && found && at == clOffset {
		r.MessageID = id
	}
	if uid == 0 {
		t, found, err := getTopic(tx, topic)
		if err != nil || !found || pqid < 0 || pqid >= t.Queues {
			return r
		}
		if u, found, err := unitAt(tx, t.UID, pqid, pqoff); err == nil && found && u.CommitLogOffset == clOffset {
			r.UID, r.QueueID, r.QueueOffset = t.UID, pqid, pqoff
		}
	}
	return r
}

// peekRecord reads a record's place and id without trusting its checksum.
func peekRecord(rec []byte) (topic, id string, qid int, qoff int64, ok bool) {
	if len(rec) < hdrSize+crcSize || rec[0] != msgMagic || rec[1] != msgVersion {
		return "", "", 0, 0, false
	}
	qoff = int64(binary.BigEndian.Uint64(rec[offQOffset:]))
	qid = int(int32(binary.BigEndian.Uint32(rec[offQueueID:])))
	r := reader{b: rec[hdrSize : len(rec)-crcSize]}
	topic = r.str()
	id = r.str()
	return topic, id, qid, qoff, r.err == nil
}
