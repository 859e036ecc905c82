package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The recorder writes down what a Hook changes inside the group commit,
// so that the log-ahead (wal.go) can redo it after a crash without the
// hook: a hook is code, its effect is data. Two kinds of entries:
//   - bucket writes through Bucket and Cursor (put, delete, sequence,
//     nested buckets), each naming its bucket by path;
//   - the store's typed writes (Tx.PutTopic, Tx.TrimQueue, ...), each
//     with its arguments, redone by calling the same function on the same
//     state, which gives the same result.
//
// A recorder belongs to one request of one group-commit attempt: a hook
// that fails, or a group that is retried, starts a fresh one.

// Entry kinds of a recording.
const (
	walPut byte = iota + 1
	walDelete
	walSetSequence
	walCreateBucket
	walCreateBucketIfNotExists
	walDeleteBucket
	walPutTopic
	walRemoveTopic
	walTrimQueue
	walPatchRecord
	walDropSegment
	walEmptyTrash
	walRecordCorrupt
)

type recorder struct {
	buf []byte
	// tops are the top-level buckets the recording writes and typedWrites
	// whether it holds a typed write: the areas the read barrier waits on
	// (durable.go).
	tops        [][]byte
	typedWrites bool
	// areasOnly: note the areas, record nothing (Store.Update, whose
	// writes its checkpoint makes durable without the log).
	areasOnly bool
}

// skip notes path's area and reports whether there is nothing more to
// record: r is nil, or it only notes areas.
func (r *recorder) skip(path []byte) bool {
	if r == nil {
		return true
	}
	if r.areasOnly {
		r.noteTop(path)
		return true
	}
	return false
}

// reset starts a fresh recording.
func (r *recorder) reset() {
	r.buf, r.tops, r.typedWrites = r.buf[:0], r.tops[:0], false
}

// entry starts an entry naming its bucket by path: each name with its
// length first (appendString), ended by a zero length (bbolt refuses empty
// bucket names).
func (r *recorder) entry(kind byte, path []byte) {
	r.buf = append(r.buf, kind)
	r.buf = append(r.buf, path...)
	r.buf = append(r.buf, 0)
	r.noteTop(path)
}

func (r *recorder) put(path, key, value []byte) {
	if !r.skip(path) {
		r.entry(walPut, path)
		r.buf = appendString(appendString(r.buf, key), value)
	}
}

func (r *recorder) del(path, key []byte) {
	if !r.skip(path) {
		r.entry(walDelete, path)
		r.buf = appendString(r.buf, key)
	}
}

func (r *recorder) setSequence(path []byte, seq uint64) {
	if !r.skip(path) {
		r.entry(walSetSequence, path)
		r.buf = binary.AppendUvarint(r.buf, seq)
	}
}

// bucketOp records creating or deleting bucket name inside parent (nil:
// a top-level bucket).
func (r *recorder) bucketOp(kind byte, parent, name []byte) {
	if r != nil {
		if path := childPath(parent, name); !r.skip(path) {
			r.entry(kind, path)
		}
	}
}

// childPath is the path of bucket name inside the bucket at parent.
func childPath(parent, name []byte) []byte {
	return appendString(append([]byte(nil), parent...), name)
}

// typed records a call of one of the store's typed writes.
func (r *recorder) typed(kind byte, args []byte) {
	if r != nil {
		r.typedWrites = true
		if !r.areasOnly {
			r.buf = append(r.buf, kind)
			r.buf = appendString(r.buf, args)
		}
	}
}

func appendTrimArgs(t TopicRecord, qid int, cutoff int64) []byte {
	b := binary.AppendUvarint(nil, uint64(qid))
	b = binary.AppendVarint(b, cutoff)
	return append(b, t.encode()...)
}

// errRecording is a recording that does not parse: the log-ahead record
// holding it passed its checksum, so this is a bug, not damage.
var errRecording = errors.New("log-ahead: malformed hook recording")

// redo applies a recording to tx.
func redo(tx *bolt.Tx, rec []byte) error {
	rd := reader{b: rec}
	for len(rd.b) > 0 && rd.err == nil {
		kind := rd.b[0]
		rd.b = rd.b[1:]
		var err error
		switch kind {
		case walPut, walDelete, walSetSequence, walCreateBucket, walCreateBucketIfNotExists, walDeleteBucket:
			err = redoBucketOp(tx, kind, &rd)
		default:
			err = redoTyped(tx, kind, rd.bytes())
		}
		if err != nil {
			return err
		}
	}
	if rd.err != nil {
		return fmt.Errorf("%w: %v", errRecording, rd.err)
	}
	return nil
}

// readPath reads a path up to its zero end.
func readPath(rd *reader) [][]byte {
	var path [][]byte
	for rd.err == nil {
		elem := rd.bytes()
		if len(elem) == 0 {
			return path
		}
		path = append(path, elem)
	}
	return nil
}

// bucketAt walks path from the top level.
func bucketAt(tx *bolt.Tx, path [][]byte) *bolt.Bucket {
	if len(path) == 0 {
		return nil
	}
	b := tx.Bucket(path[0])
	for _, name := range path[1:] {
		if b == nil {
			return nil
		}
		b = b.Bucket(name)
	}
	return b
}

func redoBucketOp(tx *bolt.Tx, kind byte, rd *reader) error {
	path := readPath(rd)
	if rd.err != nil || len(path) == 0 {
		return fmt.Errorf("%w: bucket path", errRecording)
	}
	switch kind {
	case walCreateBucket, walCreateBucketIfNotExists, walDeleteBucket:
		parent, name := path[:len(path)-1], path[len(path)-1]
		var err error
		switch {
		case len(parent) == 0 && kind == walDeleteBucket:
			err = tx.DeleteBucket(name)
		case len(parent) == 0:
			_, err = tx.CreateBucketIfNotExists(name)
		default:
			p := bucketAt(tx, parent)
			if p == nil {
				return fmt.Errorf("log-ahead: no bucket %q to redo a write in", parent)
			}
			if kind == walDeleteBucket {
				err = p.DeleteBucket(name)
			} else {
				_, err = p.CreateBucketIfNotExists(name)
			}
		}
		return err
	}
	b := bucketAt(tx, path)
	if b == nil {
		return fmt.Errorf("log-ahead: no bucket %q to redo a write in", path)
	}
	switch kind {
	case walPut:
		k, v := rd.bytes(), rd.bytes()
		if rd.err != nil {
			return fmt.Errorf("%w: put", errRecording)
		}
		return b.Put(k, v)
	case walDelete:
		k := rd.bytes()
		if rd.err != nil {
			return fmt.Errorf("%w: delete", errRecording)
		}
		return b.Delete(k)
	default: // walSetSequence
		seq := rd.uvarint()
		if rd.err != nil {
			return fmt.Errorf("%w: sequence", errRecording)
		}
		return b.SetSequence(seq)
	}
}

func redoTyped(tx *bolt.Tx, kind byte, args []byte) error {
	rd := reader{b: args}
	switch kind {
	case walPutTopic:
		rec, err := decodeTopicRecord(args)
		if err != nil {
			return err
		}
		_, _, err = putTopic(tx, rec)
		return err
	case walRemoveTopic:
		_, _, err := removeTopic(tx, string(args))
		return err
	case walTrimQueue:
		qid, cutoff := rd.uvarint(), rd.varint()
		if rd.err != nil {
			return fmt.Errorf("%w: trim", errRecording)
		}
		t, err := decodeTopicRecord(rd.b)
		if err != nil {
			return err
		}
		_, _, err = trimQueue(tx, t, int(qid), cutoff, 0)
		return err
	case walPatchRecord:
		if len(args) < 8 {
			return fmt.Errorf("%w: patch", errRecording)
		}
		cl := int64(binary.BigEndian.Uint64(args))
		rd.b = args[8:]
		rec := rd.bytes()
		if rd.err != nil {
			return fmt.Errorf("%w: patch", errRecording)
		}
		return patchRecord(tx, cl, func(b []byte) { copy(b, rec) })
	case walDropSegment:
		if len(args) != 8 {
			return fmt.Errorf("%w: drop", errRecording)
		}
		_, _, err := dropSegment(tx, int64(binary.BigEndian.Uint64(args)))
		return err
	case walEmptyTrash:
		_, err := emptyTrash(tx, 0)
		return err
	case walRecordCorrupt:
		if len(args) < 8 {
			return fmt.Errorf("%w: corrupt", errRecording)
		}
		r, err := decodeCorrupt(int64(binary.BigEndian.Uint64(args)), args[8:])
		if err != nil {
			return err
		}
		_, err = recordCorrupt(tx, r)
		return err
	}
	return fmt.Errorf("%w: entry kind %d", errRecording, kind)
}
