package store

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/mqgate/mqgate/core"
)

// Bucket names. Every bucket of this package is a top-level bucket whose name
// starts with "mq."; other packages (core/engine, core/groups) keep their
// own buckets in the same file under names Register granted them
// (bucket.go), and the self check ignores those.
//
// Layout version 2 (segments.go) keeps the commit log, the consume queues
// and the id and key indexes in segments under mq.segs; the buckets of
// version 1 that moved (mq.commitlog, mq.cq, mq.ids, mq.keys, mq.topics)
// are kept, empty: a v1 binary's self check then finds nothing to check and
// reaches its format check, which refuses the file by its version instead
// of calling it damaged. migrate.go turns a v1 file into a v2 one.
var (
	bucketMeta   = []byte("mq.meta")     // format version
	bucketSegs   = []byte("mq.segs")     // segment start(8) -> segment bucket; Sequence() = next commit log offset
	bucketQSegs  = []byte("mq.qsegs")    // uid(8)+qid(2)+first queue offset(8) -> segment start(8)
	bucketQueues = []byte("mq.queues")   // uid(8)+qid(2) -> min(8) max(8)
	bucketTopics = []byte("mq.topics.2") // name -> topic record; Sequence() = last uid
	bucketTrash  = []byte("mq.trash")    // uid(8) -> name of a deleted topic whose segments remain
	// bucketCorrupt (corrupt.go): commit log offset(8) -> a record set aside as corrupt

	// Version 1's buckets: the data of a v1 file (migrate.go reads them);
	// empty in a v2 file.
	bucketCommitLogV1 = []byte("mq.commitlog") // seq(8) -> encoded message; Sequence() = next seq
	bucketCQV1        = []byte("mq.cq")        // topic uid(8) -> sub-bucket: qid(2)+offset(8) -> unit(20)
	bucketTopicsV1    = []byte("mq.topics")    // as bucketTopics
	bucketIDsV1       = []byte("mq.ids")       // message id -> commit log offset(8)
	bucketKeysV1      = []byte("mq.keys")      // len(topic)(1) topic len(key)(2) key clOffset(8) -> empty
)

var keyFormat = []byte("format")

// formatVersion is the layout version written in mq.meta. A file written by
// a newer layout is refused rather than misread; a file of version 1 is
// migrated when it is opened (migrate.go).
const formatVersion = 2

// unitSize is RocketMQ's consume-queue unit: commit log offset (8), size
// (4), tags code (8).
const unitSize = 20

// Unit is one consume-queue entry (RocketMQ CQ_STORE_UNIT). For schedule
// queues TagsCode holds the delivery time in unix ms.
type Unit struct {
	CommitLogOffset int64
	Size            int32
	TagsCode        int64
}

func (u Unit) encode() []byte { return u.put(make([]byte, unitSize)) }

// put writes u into b (unitSize bytes) and returns b.
func (u Unit) put(b []byte) []byte {
	binary.BigEndian.PutUint64(b[0:], uint64(u.CommitLogOffset))
	binary.BigEndian.PutUint32(b[8:], uint32(u.Size))
	binary.BigEndian.PutUint64(b[12:], uint64(u.TagsCode))
	return b
}

func decodeUnit(b []byte) (Unit, error) {
	if len(b) != unitSize {
		return Unit{}, fmt.Errorf("consume queue unit of %d bytes, want %d", len(b), unitSize)
	}
	return Unit{
		CommitLogOffset: int64(binary.BigEndian.Uint64(b[0:])),
		Size:            int32(binary.BigEndian.Uint32(b[8:])),
		TagsCode:        int64(binary.BigEndian.Uint64(b[12:])),
	}, nil
}

func u64(v int64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(v))
	return b
}

func uidKey(uid uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uid)
	return b
}

// cqKey is a version 1 consume-queue key inside a topic's sub-bucket.
func cqKey(qid int, offset int64) []byte { return appendCQKey(make([]byte, 0, 10), qid, offset) }

func appendCQKey(b []byte, qid int, offset int64) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(qid))
	return binary.BigEndian.AppendUint64(b, uint64(offset))
}

func parseCQKey(k []byte) (qid int, offset int64, ok bool) {
	if len(k) != 10 {
		return 0, 0, false
	}
	return int(binary.BigEndian.Uint16(k)), int64(binary.BigEndian.Uint64(k[2:])), true
}

func queueKey(uid uint64, qid int) []byte {
	b := make([]byte, 10)
	binary.BigEndian.PutUint64(b, uid)
	binary.BigEndian.PutUint16(b[8:], uint16(qid))
	return b
}

// queueMeta is a queue's offset range [Min, Max).
type queueMeta struct{ Min, Max int64 }

func (m queueMeta) encode() []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(m.Min))
	binary.BigEndian.PutUint64(b[8:], uint64(m.Max))
	return b
}

func decodeQueueMeta(b []byte) (queueMeta, error) {
	if len(b) != 16 {
		return queueMeta{}, fmt.Errorf("queue metadata of %d bytes, want 16", len(b))
	}
	return queueMeta{Min: int64(binary.BigEndian.Uint64(b)), Max: int64(binary.BigEndian.Uint64(b[8:]))}, nil
}

// keyIndexPrefix is the prefix of every key-index entry of (topic, key).
func keyIndexPrefix(topic, key string) []byte {
	return appendKeyIndexPrefix(make([]byte, 0, 3+len(topic)+len(key)+8), topic, key)
}

func appendKeyIndexPrefix(b []byte, topic, key string) []byte {
	b = append(b, byte(len(topic)))
	b = append(b, topic...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(key)))
	return append(b, key...)
}

func keyIndexKey(topic, key string, clOffset int64) []byte {
	return appendKeyIndexKey(make([]byte, 0, 3+len(topic)+len(key)+8), topic, key, clOffset)
}

func appendKeyIndexKey(b []byte, topic, key string, clOffset int64) []byte {
	return binary.BigEndian.AppendUint64(appendKeyIndexPrefix(b, topic, key), uint64(clOffset))
}

// appendKeyIndexKeyBytes is appendKeyIndexKey for a topic and key read
// from a record.
func appendKeyIndexKeyBytes(b, topic, key []byte, clOffset int64) []byte {
	b = append(b, byte(len(topic)))
	b = append(b, topic...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(key)))
	b = append(b, key...)
	return binary.BigEndian.AppendUint64(b, uint64(clOffset))
}

// emptyValue is the value of every key-index entry (the key says it all).
// bbolt keeps a reference to values until commit and never writes to them.
var emptyValue = []byte{}

// Limits the layout imposes: the key index prefixes a topic name with one
// byte and a key with two. What clients may publish is core's (the one
// definition of the limits); these only have to hold it, which the
// compile-time checks below prove (a negative constant does not convert
// to uint).
const (
	maxTopicBytes = 1<<8 - 1
	maxKeyBytes   = 1<<16 - 1
)

const (
	_ = uint(maxTopicBytes - 127) // core.ValidName: at most 127 ASCII characters
	_ = uint(maxKeyBytes - core.MaxKeyLen*utf8.UTFMax)
)
