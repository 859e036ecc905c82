package gateway

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// A receipt handle names one delivery of one message: which gateway run
// (epoch) leased it, the lease sequence number, the group and consumer, the
// queue and offset, and when the lease first ended. It is the payload below
// followed by a truncated HMAC-SHA256 of it, base64url without padding:
//
//	version(1) epoch(uvarint) seq(uvarint) queueId(uvarint) offset(uvarint)
//	expiresMs(uvarint) group(str) consumerId(str) topic(str) mac(16)
//	str = uvarint length, bytes
//
// The lease table, not the embedded expiry, decides whether a handle is
// still live: extend moves the deadline without changing the handle.
type receipt struct {
	Epoch      uint64
	Seq        uint64
	Group      string
	ConsumerID string
	Queue      core.MessageQueue
	Offset     int64
	Expires    time.Time // deadline of the lease when it was handed out (ms)
}

const (
	handleVersion = 1
	handleMACSize = policy.MACSize
	maxHandleLen  = policy.MaxHandleLen
)

// handleCodec signs and verifies receipt handles with one key: the seal
// (HMAC construction, encoding, the checks before parsing) is
// policy.Sealer's, shared with every backend; the payload is this
// gateway's receipt.
type handleCodec struct {
	s *policy.Sealer
}

// newHandleCodec panics on a key shorter than policy.KeySize: callers check
// the key first (New, LoadOrCreateKey).
func newHandleCodec(key []byte, previous ...[]byte) *handleCodec {
	s, err := policy.NewSealer(key, previous...)
	if err != nil {
		panic("gateway: " + err.Error())
	}
	return &handleCodec{s: s}
}

// encode returns the signed, URL-safe handle of r.
func (c *handleCodec) encode(r receipt) string {
	// Seal copies the payload, so it is built on the stack (append moves
	// an unusually long one to the heap).
	var stack [256]byte
	b := append(stack[:0], handleVersion)
	b = binary.AppendUvarint(b, r.Epoch)
	b = binary.AppendUvarint(b, r.Seq)
	b = binary.AppendUvarint(b, uint64(r.Queue.QueueID))
	b = binary.AppendUvarint(b, uint64(r.Offset))
	b = binary.AppendUvarint(b, uint64(r.Expires.UnixMilli()))
	for _, s := range [...]string{r.Group, r.ConsumerID, r.Queue.Topic} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return c.s.Seal(b)
}

// receiptFields is a parsed payload whose strings are left in place as
// spans of it, so checking a handle against its lease (receiptRef.is)
// copies no string out: an ack of one handle used to make three.
type receiptFields struct {
	epoch, seq, queueID, offset, expiresMs uint64
	group, consumerID, topic               span
}

// span is the bytes p[off:off+n] of a payload.
type span struct{ off, n int }

func (s span) in(p []byte) []byte { return p[s.off : s.off+s.n] }

// parseFields parses an authenticated payload strictly (every field
// present, in range, nothing after the last one); ok is false when p is
// not a well-formed receipt.
func parseFields(p []byte) (f receiptFields, ok bool) {
	if len(p) == 0 || p[0] != handleVersion {
		return f, false
	}
	at := 1
	for _, v := range [...]*uint64{&f.epoch, &f.seq, &f.queueID, &f.offset, &f.expiresMs} {
		x, n := uvarint(p[at:])
		if n <= 0 {
			return f, false
		}
		*v, at = x, at+n
	}
	if f.queueID > core.MaxQueues || f.offset > 1<<62 || f.expiresMs > 1<<50 {
		return f, false
	}
	for _, s := range [...]*span{&f.group, &f.consumerID, &f.topic} {
		l, n := uvarint(p[at:])
		if n <= 0 || l > uint64(len(p)-at-n) {
			return f, false
		}
		*s, at = span{at + n, int(l)}, at+n+int(l)
	}
	if at != len(p) || f.group.n == 0 || f.topic.n == 0 {
		return f, false
	}
	return f, true
}

// receiptRef is a handle's fields and where its payload sits in a buffer
// shared by the handles of one request (offsets, not slices: the refs
// hold no pointers, so a request's buffer can live on the stack). Its MAC
// follows the payload there.
type receiptRef struct {
	receiptFields
	at, n int // payload = buf[at:at+n], its MAC the handleMACSize bytes after
}

// is reports whether the handle names exactly receipt r (what a whole
// decode would return, compared field by field without copying a string).
func (rf *receiptRef) is(buf []byte, r *receipt) bool {
	p := buf[rf.at : rf.at+rf.n]
	return rf.epoch == r.Epoch && rf.seq == r.Seq &&
		string(rf.group.in(p)) == r.Group && string(rf.consumerID.in(p)) == r.ConsumerID &&
		string(rf.topic.in(p)) == r.Queue.Topic && int(rf.queueID) == r.Queue.QueueID &&
		int64(rf.offset) == r.Offset && int64(rf.expiresMs) == r.Expires.UnixMilli()
}

// inGroup reports whether the handle's group is g.
func (rf *receiptRef) inGroup(buf []byte, g string) bool {
	return string(rf.group.in(buf[rf.at:rf.at+rf.n])) == g
}

// decodeTo verifies h and parses it in place, its payload appended to
// buf; ok is false for a handle that does not verify or parse. A caller
// that gives buf room for every handle of a request (a stack array for
// a few) verifies them without allocating.
func (c *handleCodec) decodeTo(buf []byte, h string) (ref receiptRef, out []byte, ok bool) {
	ref, out, ok = c.peekTo(buf, h)
	if !ok || !c.verifies(out, &ref) {
		return receiptRef{}, buf, false
	}
	return ref, out, true
}

// peekTo is decodeTo without the MAC check: what h would name, if it is
// authentic. The ack path looks up the lease that names and takes h as
// authentic when it is the very string that lease was issued with (it
// was sealed here), which spares the MAC of every live handle; any other
// handle goes through verifies before it counts.
func (c *handleCodec) peekTo(buf []byte, h string) (ref receiptRef, out []byte, ok bool) {
	if len(h) > maxHandleLen {
		return ref, buf, false
	}
	at := len(buf)
	buf = slices.Grow(buf, base64.RawURLEncoding.DecodedLen(len(h)))
	payload, sum, err := policy.Decode(buf[at:at], h) // decodes into buf's room
	if err != nil {
		return ref, buf[:at], false
	}
	f, ok := parseFields(payload)
	if !ok {
		return ref, buf[:at], false
	}
	return receiptRef{receiptFields: f, at: at, n: len(payload)}, buf[:at+len(payload)+len(sum)], true
}

// verifies reports whether the MAC of the handle ref was peeked from is
// right.
func (c *handleCodec) verifies(buf []byte, ref *receiptRef) bool {
	end := ref.at + ref.n
	return c.s.Verifies(buf[ref.at:end], buf[end:end+handleMACSize])
}

// decodedLen is the room decodeTo needs for every handle of hs (each
// counted up to maxHandleLen, the most decodeTo decodes).
func decodedLen(hs []string) int {
	n := 0
	for _, h := range hs {
		n += base64.RawURLEncoding.DecodedLen(min(len(h), maxHandleLen))
	}
	return n
}

// uvarint is binary.Uvarint refusing non-minimal encodings, so that one
// receipt has exactly one handle.
func uvarint(p []byte) (uint64, int) {
	v, n := binary.Uvarint(p)
	if n <= 0 || n != uvarintLen(v) {
		return 0, -1
	}
	return v, n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
