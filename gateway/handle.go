package gateway

import (
	"encoding/binary"
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

var errBadHandle = policy.ErrBadHandle

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
	return c.s.Seal(b)
}

// decode verifies and parses a handle. Any failure is errBadHandle: the
// caller answers `invalid` without saying why.
func (c *handleCodec) decode(h string) (receipt, error) {
	// Verify before parsing: nothing unauthenticated reaches the parser.
	payload, err := c.s.Open(h)
	if err != nil {
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
