package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Stored message layout, version 1 (all integers big-endian):
//
//	[0]      magic 0xC7
//	[1]      version 1
//	[2]      flags (bit 0: body published as text)
//	[3:11]   storedAt, unix ms     — patched by the writer at commit
//	[11:19]  bornAt, unix ms
//	[19:27]  queue offset          — patched by the writer
//	[27:31]  queue id              — patched by the writer
//	[31:35]  reconsume times
//	then uvarint-length-prefixed: topic, id, tags, sharding key;
//	uvarint count + strings: keys; uvarint count + pairs: properties,
//	system properties (sorted by name); uvarint length + body;
//	[-4:]    CRC-32C of everything before it.
//
// The fixed header lets the writer place a message encoded by the publisher
// (outside the transaction) by patching three fields, and lets retention and
// SearchOffset read storedAt without decoding the rest.
const (
	msgMagic    = 0xC7
	msgVersion  = 1
	hdrSize     = 35
	offStoredAt = 3
	offQOffset  = 19
	offQueueID  = 27
	crcSize     = 4
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt marks a stored record that fails to decode.
var ErrCorrupt = errors.New("corrupt record")

// EncodeMessage encodes m for the commit log. StoredAt, QueueID and
// QueueOffset are placeholders until the writer patches and seals the record.
func EncodeMessage(m *core.Message) []byte {
	return AppendMessage(make([]byte, 0, EncodedSize(m)), m)
}

// EncodedSize bounds the length of m's record: AppendMessage never grows
// a buffer with that much room, so a publisher can encode a whole batch
// into one allocation.
func EncodedSize(m *core.Message) int {
	n := hdrSize + crcSize + 5*4 + len(m.Topic) + len(m.ID) + len(m.Tags) + len(m.ShardingKey) + len(m.Body) + 5*3
	for _, k := range m.Keys {
		n += len(k) + 5
	}
	for k, v := range m.Properties {
		n += len(k) + len(v) + 10
	}
	for k, v := range m.SysProps {
		n += len(k) + len(v) + 10
	}
	return n
}

// AppendMessage appends m's record (EncodeMessage) to dst.
func AppendMessage(dst []byte, m *core.Message) []byte {
	b := append(dst, make([]byte, hdrSize)...)
	h := b[len(dst):]
	h[0], h[1] = msgMagic, msgVersion
	if m.BodyIsText {
		h[2] = 1
	}
	binary.BigEndian.PutUint64(h[offStoredAt:], uint64(m.StoredAt.UnixMilli()))
	binary.BigEndian.PutUint64(h[11:], uint64(m.BornAt.UnixMilli()))
	binary.BigEndian.PutUint64(h[offQOffset:], uint64(m.QueueOffset))
	binary.BigEndian.PutUint32(h[offQueueID:], uint32(m.QueueID))
	binary.BigEndian.PutUint32(h[31:], uint32(m.ReconsumeTimes))
	b = appendString(b, m.Topic)
	b = appendString(b, m.ID)
	b = appendString(b, m.Tags)
	b = appendString(b, m.ShardingKey)
	b = binary.AppendUvarint(b, uint64(len(m.Keys)))
	for _, k := range m.Keys {
		b = appendString(b, k)
	}
	b = appendMap(b, m.Properties)
	b = appendMap(b, m.SysProps)
	b = binary.AppendUvarint(b, uint64(len(m.Body)))
	b = append(b, m.Body...)
	return binary.BigEndian.AppendUint32(b, 0) // CRC placeholder
}

// place patches the writer-assigned fields and seals the record's checksum.
func place(rec []byte, qid int, qoff int64, storedAt int64) {
	binary.BigEndian.PutUint64(rec[offStoredAt:], uint64(storedAt))
	binary.BigEndian.PutUint64(rec[offQOffset:], uint64(qoff))
	binary.BigEndian.PutUint32(rec[offQueueID:], uint32(qid))
	seal(rec)
}

func seal(rec []byte) {
	n := len(rec) - crcSize
	binary.BigEndian.PutUint32(rec[n:], crc32.Checksum(rec[:n], crcTable))
}

// appendString appends s with its length first (reader.bytes, .str).
func appendString[T string | []byte](b []byte, s T) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendMap appends m's pairs sorted by name. Most messages have no
// properties: the empty map costs no key slice (slices.Sorted's iterator
// and slice were five allocations per message).
func appendMap(b []byte, m map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	if len(m) == 0 {
		return b
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = appendString(b, k)
		b = appendString(b, m[k])
	}
	return b
}

// StoredAtOf reads a record's store time without decoding the rest.
func StoredAtOf(rec []byte) (int64, error) {
	if len(rec) < hdrSize+crcSize || rec[0] != msgMagic || rec[1] != msgVersion {
		return 0, fmt.Errorf("%w: bad message header", ErrCorrupt)
	}
	return int64(binary.BigEndian.Uint64(rec[offStoredAt:])), nil
}

// recordRefs reads what removing a record needs from the front of it:
// its topic, id and keys, which the layout places before the properties
// and the body. It neither checks the checksum nor touches the body, so
// removing a 4 MiB message reads its first page, not its thousand, and a
// record whose body is damaged still gives up its index entries. The
// slices alias rec (valid in its transaction); keys are appended to
// keysBuf. ok is false when the header or those fields do not parse.
func recordRefs(rec []byte, keysBuf [][]byte) (topic, id []byte, keys [][]byte, ok bool) {
	if len(rec) < hdrSize+crcSize || rec[0] != msgMagic || rec[1] != msgVersion {
		return nil, nil, nil, false
	}
	b := rec[hdrSize : len(rec)-crcSize]
	field := func() []byte {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			ok = false
			return nil
		}
		f := b[w : w+int(n)]
		b = b[w+int(n):]
		return f
	}
	ok = true
	topic = field()
	id = field()
	field() // tags
	field() // sharding key
	n, w := binary.Uvarint(b)
	if !ok || w <= 0 || n > uint64(len(b)) {
		return nil, nil, nil, false
	}
	b = b[w:]
	keys = keysBuf[:0]
	for range n {
		k := field()
		if !ok {
			return nil, nil, nil, false
		}
		keys = append(keys, k)
	}
	return topic, id, keys, true
}

// DecodeMessage decodes a commit log record; it copies everything out of rec,
// so the result stays valid after the transaction ends.
func DecodeMessage(clOffset int64, rec []byte) (*core.Message, error) {
	if len(rec) < hdrSize+crcSize {
		return nil, fmt.Errorf("%w: message record of %d bytes", ErrCorrupt, len(rec))
	}
	if rec[0] != msgMagic {
		return nil, fmt.Errorf("%w: bad magic %#x", ErrCorrupt, rec[0])
	}
	if rec[1] != msgVersion {
		return nil, fmt.Errorf("%w: unknown message version %d", ErrCorrupt, rec[1])
	}
	n := len(rec) - crcSize
	if got, want := crc32.Checksum(rec[:n], crcTable), binary.BigEndian.Uint32(rec[n:]); got != want {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	m := &core.Message{
		CommitLogOffset: clOffset,
		BodyIsText:      rec[2]&1 != 0,
		StoredAt:        time.UnixMilli(int64(binary.BigEndian.Uint64(rec[offStoredAt:]))).UTC(),
		BornAt:          time.UnixMilli(int64(binary.BigEndian.Uint64(rec[11:]))).UTC(),
		QueueOffset:     int64(binary.BigEndian.Uint64(rec[offQOffset:])),
		QueueID:         int(binary.BigEndian.Uint32(rec[offQueueID:])),
		ReconsumeTimes:  int(binary.BigEndian.Uint32(rec[31:])),
	}
	r := reader{b: rec[hdrSize:n]}
	m.Topic = r.str()
	m.ID = r.str()
	m.Tags = r.str()
	m.ShardingKey = r.str()
	if nk := r.count(); nk > 0 {
		m.Keys = make([]string, 0, nk)
		for range nk {
			m.Keys = append(m.Keys, r.str())
		}
	}
	m.Properties = r.strMap()
	m.SysProps = r.strMap()
	m.Body = r.bytes()
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, r.err)
	}
	return m, nil
}

// reader walks a record; the first error sticks and later reads return zero
// values, so decoding code reads straight through.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *reader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads one varint with decode (binary.Uvarint or Varint).
func readVarint[T uint64 | int64](r *reader, decode func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := decode(r.b)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a collection length, bounded by the bytes left (every element
// takes at least one byte) so a corrupt count cannot make us allocate.
func (r *reader) count() int {
	v := r.uvarint()
	if v > uint64(len(r.b)) {
		r.fail("count %d exceeds record", v)
		return 0
	}
	return int(v)
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("length %d exceeds record", n)
		return nil
	}
	out := make([]byte, n)
	copy(out, r.b[:n])
	r.b = r.b[n:]
	return out
}

func (r *reader) str() string { return string(r.bytes()) }

func (r *reader) strMap() map[string]string {
	n := r.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.str()
		m[k] = r.str()
	}
	return m
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}
