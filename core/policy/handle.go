package policy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"sync"
	"unsafe"
)

// HandleStatus is the answer for one receipt handle in ack / nack / extend. The
// rules are the same on every backend:
//
//   - HandleInvalid: the handle does not verify (malformed, forged, signed
//     with another key) or names another group. Nothing happens.
//   - HandleExpired: it verifies, but its lease ended (deadline passed, nacked,
//     or the message was delivered again since): a handle from an earlier
//     delivery never finishes a later one. Nothing happens.
//   - HandleOK: the lease was live and the operation applied. A repeated ack of
//     the same delivery answers HandleOK again and has no second effect.
type HandleStatus string

const (
	HandleOK      HandleStatus = "ok"
	HandleExpired HandleStatus = "expired"
	HandleInvalid HandleStatus = "invalid"
)

const (
	// KeySize is the least length of a handle key.
	KeySize = 32
	// MACSize is the length of the truncated HMAC-SHA256 every handle ends with.
	MACSize = 16
	// MaxHandleLen bounds what Open looks at; real handles are far shorter.
	MaxHandleLen = 1024
)

// ErrBadHandle is Open's one error: callers answer HandleInvalid without saying why.
var ErrBadHandle = errors.New("malformed or forged receipt handle")

// Sealer signs and verifies receipt handles: payload, then its truncated
// HMAC-SHA256 under the key, base64url without padding. A payload starts
// with its backend's version byte (1: embedded, 2: JetStream), so a
// handle of one backend never parses as the other's. Every instance in
// front of one cluster holds the same key, so any of them verifies a
// handle another issued. Previous keys (a key rotation in progress) still
// verify handles but never sign one. A Sealer is safe for concurrent use.
type Sealer struct {
	key []byte
	// previous verify handles signed before a rotation.
	previous []*Sealer
	// macs recycles keyed HMAC states (*macState): hmac.New hashes the
	// padded key twice and allocates two SHA-256 states, which cost more
	// than signing a handle; Reset on a used state restores the keyed
	// state from a saved copy.
	macs sync.Pool
}

// macState is a pooled keyed HMAC with room for its sum: Sum through the
// hash.Hash interface makes a stack buffer escape, one allocation per
// handle signed or verified.
type macState struct {
	h   hash.Hash
	sum [sha256.Size]byte
	// in is the payload copied: what a hash.Hash's Write is given
	// escapes, and callers' payloads live in their stack buffers.
	in []byte
}

// strictB64 is the one spelling of a handle. Strict() copies the encoding
// each call, so it is made once.
var strictB64 = base64.RawURLEncoding.Strict()

// NewSealer returns a sealer that signs with key and verifies with key
// and each of previous (every key at least KeySize bytes).
func NewSealer(key []byte, previous ...[]byte) (*Sealer, error) {
	s, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	for i, k := range previous {
		p, err := newSealer(k)
		if err != nil {
			return nil, fmt.Errorf("previous key %d: %w", i+1, err)
		}
		s.previous = append(s.previous, p)
	}
	return s, nil
}

func newSealer(key []byte) (*Sealer, error) {
	if len(key) < KeySize {
		return nil, fmt.Errorf("handle key must be at least %d bytes", KeySize)
	}
	s := &Sealer{key: append([]byte(nil), key...)}
	s.macs.New = func() any { return &macState{h: hmac.New(sha256.New, s.key)} }
	return s, nil
}

// appendMAC appends the truncated HMAC of payload to dst.
func (s *Sealer) appendMAC(dst, payload []byte) []byte {
	m := s.macs.Get().(*macState)
	m.h.Reset()
	m.in = append(m.in[:0], payload...)
	m.h.Write(m.in)
	dst = append(dst, m.h.Sum(m.sum[:0])[:MACSize]...)
	s.macs.Put(m)
	return dst
}

// Seal returns the handle of payload (its first byte is the version).
func (s *Sealer) Seal(payload []byte) string {
	// A stack buffer fits every real payload; append moves a larger one
	// to the heap.
	var stack [256]byte
	b := append(stack[:0], payload...)
	b = s.appendMAC(b, payload)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Open verifies h and returns its payload (version byte first). Nothing
// unauthenticated is returned: callers parse only what verified. A handle
// has exactly one spelling (base64url without padding, strict).
func (s *Sealer) Open(h string) ([]byte, error) {
	return s.OpenTo(nil, h)
}

// OpenTo is Open decoding into dst when it has room (the payload then
// aliases dst): a caller with a stack buffer verifies a handle without
// allocating, which an ack of one handle per request notices.
func (s *Sealer) OpenTo(dst []byte, h string) ([]byte, error) {
	payload, sum, err := Decode(dst, h)
	if err != nil || !s.Verifies(payload, sum) {
		return nil, ErrBadHandle
	}
	return payload, nil
}

// Decode splits h into its payload and MAC without checking the MAC,
// decoding into dst when it has room (both then alias dst); only the one
// spelling of a handle decodes. What it returns is not authenticated: a
// caller may look at it only to find what h would name, and must then
// either check the MAC (Verifies) or find h to be, byte for byte, a
// handle it sealed itself.
func Decode(dst []byte, h string) (payload, sum []byte, err error) {
	if len(h) == 0 || len(h) > MaxHandleLen {
		return nil, nil, ErrBadHandle
	}
	// The decoder skips CR and LF and tolerates stray trailing bits.
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, nil, ErrBadHandle
		}
	}
	n := strictB64.DecodedLen(len(h))
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	// The decoder only reads its source, so h's bytes are lent to it
	// rather than copied into a []byte.
	k, err := strictB64.Decode(dst[:n], unsafe.Slice(unsafe.StringData(h), len(h)))
	raw := dst[:k]
	if err != nil || len(raw) < 1+MACSize {
		return nil, nil, ErrBadHandle
	}
	return raw[:len(raw)-MACSize], raw[len(raw)-MACSize:], nil
}

// Verifies reports whether sum is payload's MAC under the key or a
// previous one.
func (s *Sealer) Verifies(payload, sum []byte) bool {
	var want [MACSize]byte
	if hmac.Equal(sum, s.appendMAC(want[:0], payload)) {
		return true
	}
	for _, p := range s.previous {
		if hmac.Equal(sum, p.appendMAC(want[:0], payload)) {
			return true
		}
	}
	return false
}
