package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
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
	handleMACSize = 16
	// maxHandleLen bounds what the decoder looks at; real handles are far
	// shorter (names are at most 127 bytes each).
	maxHandleLen = 1024
)

var errBadHandle = errors.New("malformed or forged receipt handle")

// handleCodec signs and verifies receipt handles with one key.
type handleCodec struct {
	key []byte
	// macs recycles keyed HMAC states: hmac.New hashes the padded key
	// twice and allocates two SHA-256 states, which cost more than
	// signing a handle; Reset on a used state restores the keyed state
	// from a saved copy.
	macs sync.Pool
}

func newHandleCodec(key []byte) *handleCodec {
	c := &handleCodec{key: append([]byte(nil), key...)}
	c.macs.New = func() any { return hmac.New(sha256.New, c.key) }
	return c
}

// mac appends the truncated MAC of payload to dst.
func (c *handleCodec) mac(dst, payload []byte) []byte {
	m := c.macs.Get().(hash.Hash)
	m.Reset()
	m.Write(payload)
	var sum [sha256.Size]byte
	out := append(dst, m.Sum(sum[:0])[:handleMACSize]...)
	c.macs.Put(m)
	return out
}

// encode returns the signed, URL-safe handle of r.
func (c *handleCodec) encode(r receipt) string {
	b := make([]byte, 0, 64+len(r.Group)+len(r.ConsumerID)+len(r.Queue.Topic))
	b = append(b, handleVersion)
	b = binary.AppendUvarint(b, r.Epoch)
	b = binary.AppendUvarint(b, r.Seq)
	b = binary.AppendUvarint(b, uint64(r.Queue.QueueID))
	b = binary.AppendUvarint(b, uint64(r.Offset))
	b = binary.AppendUvarint(b, uint64(r.Expires.UnixMilli()))
	for _, s := range []string{r.Group, r.ConsumerID, r.Queue.Topic} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = c.mac(b, b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decode verifies and parses a handle. Any failure is errBadHandle: the
// caller answers `invalid` without saying why.
func (c *handleCodec) decode(h string) (receipt, error) {
	if len(h) == 0 || len(h) > maxHandleLen {
		return receipt{}, errBadHandle
	}
	// The decoder skips CR and LF and tolerates stray trailing bits; a
	// handle has exactly one spelling.
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return receipt{}, errBadHandle
		}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(h)
	if err != nil || len(raw) < 1+handleMACSize {
		return receipt{}, errBadHandle
	}
	payload, sum := raw[:len(raw)-handleMACSize], raw[len(raw)-handleMACSize:]
	// Verify before parsing: nothing unauthenticated reaches the parser.
	var want [handleMACSize]byte
	if !hmac.Equal(sum, c.mac(want[:0], payload)) {
		return receipt{}, errBadHandle
	}
	return parseReceipt(payload)
}

// parseReceipt parses an authenticated payload strictly: every field
// present, in range, and nothing after the last one.
func parseReceipt(p []byte) (receipt, error) {
	var r receipt
	if len(p) == 0 || p[0] != handleVersion {
		return r, errBadHandle
	}
	p = p[1:]
	var nums [5]uint64
	for i := range nums {
		v, n := uvarint(p)
		if n <= 0 {
			return r, errBadHandle
		}
		nums[i], p = v, p[n:]
	}
	if nums[2] > core.MaxQueues || nums[3] > 1<<62 || nums[4] > 1<<50 {
		return r, errBadHandle
	}
	var strs [3]string
	for i := range strs {
		l, n := uvarint(p)
		if n <= 0 || l > uint64(len(p)-n) {
			return r, errBadHandle
		}
		strs[i], p = string(p[n:n+int(l)]), p[n+int(l):]
	}
	if len(p) != 0 || strs[0] == "" || strs[2] == "" {
		return r, errBadHandle
	}
	r.Epoch, r.Seq = nums[0], nums[1]
	r.Queue = core.MessageQueue{Topic: strs[2], QueueID: int(nums[2])}
	r.Offset = int64(nums[3])
	r.Expires = time.UnixMilli(int64(nums[4])).UTC()
	r.Group, r.ConsumerID = strs[0], strs[1]
	return r, nil
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
