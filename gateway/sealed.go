package gateway

import (
	"crypto/hmac"
	"encoding/base64"
	"fmt"
)

// HandleSealer signs and verifies the receipt handles of a backend other
// than Embedded (backend/jetstream) with the gateway's handle key and the
// same HMAC-SHA256 construction as handle.go: payload, then a truncated
// MAC, base64url without padding. Its payloads start with version byte 2,
// so a handle of one backend never parses as the other's.
//
// Every gateway instance in front of one cluster must hold the same key
// (--handle-key-file): a handle issued by one instance is then verified by
// any other.
type HandleSealer struct{ c *handleCodec }

// SealedHandleVersion is the first byte of every sealed payload.
const SealedHandleVersion = 2

// NewHandleSealer returns a sealer over key (at least 32 bytes).
func NewHandleSealer(key []byte) (*HandleSealer, error) {
	if len(key) < keySize {
		return nil, fmt.Errorf("gateway: handle key must be at least %d bytes", keySize)
	}
	return &HandleSealer{c: newHandleCodec(key)}, nil
}

// Seal returns the handle of payload (which must not start with any other
// version byte: Seal prepends SealedHandleVersion).
func (s *HandleSealer) Seal(payload []byte) string {
	b := make([]byte, 0, 1+len(payload)+handleMACSize)
	b = append(b, SealedHandleVersion)
	b = append(b, payload...)
	b = s.c.mac(b, b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Open verifies h and returns its payload (without the version byte). Any
// failure is one error: the caller answers `invalid` without saying why.
func (s *HandleSealer) Open(h string) ([]byte, error) {
	if len(h) == 0 || len(h) > maxHandleLen {
		return nil, errBadHandle
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, errBadHandle
		}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(h)
	if err != nil || len(raw) < 1+handleMACSize {
		return nil, errBadHandle
	}
	payload, sum := raw[:len(raw)-handleMACSize], raw[len(raw)-handleMACSize:]
	var want [handleMACSize]byte
	if !hmac.Equal(sum, s.c.mac(want[:0], payload)) || payload[0] != SealedHandleVersion {
		return nil, errBadHandle
	}
	return payload[1:], nil
}
