package api

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"maps"
	"slices"

	"github.com/mqgate/mqgate/core"
)

// Idempotent publish headers (API.md "Idempotent publish").
const (
	// headerIdempotencyKey names a single publish for deduplication.
	headerIdempotencyKey = "Idempotency-Key"
	// headerReplayed marks an answer that is the original result of an
	// earlier publish with the same key.
	headerReplayed = "Idempotent-Replayed"
)

// dedupIDRule and validDedupID are core's rule of an Idempotency-Key or
// deduplicationId (1..core.MaxDedupIDLen printable ASCII characters),
// which the backends check again.
const dedupIDRule = core.DedupIDRule

func validDedupID(s string) bool { return core.ValidDedupID(s) }

// requestHash fingerprints a publish as the client sent it (not as
// converted: delaySeconds is hashed, not the deliverAt it becomes), so a
// retry of the same request hashes the same and any change of a field
// does not. Each field is tagged and length-prefixed; the
// deduplicationId itself is left out.
//
// The trace context is not part of it: a client's retry of the same
// message carries a new traceparent (a new attempt span) and is still the
// same message.
func requestHash(req *PublishRequest) [32]byte {
	h := sha256.New()
	str := func(tag byte, s string) {
		var b [9]byte
		b[0] = tag
		binary.BigEndian.PutUint64(b[1:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	num := func(tag byte, n int64) {
		var b [9]byte
		b[0] = tag
		binary.BigEndian.PutUint64(b[1:], uint64(n))
		h.Write(b[:])
	}
	if req.Body != nil {
		str('b', *req.Body)
	}
	if req.BodyBase64 != nil {
		str('B', *req.BodyBase64)
	}
	str('t', req.Tags)
	num('k', int64(len(req.Keys)))
	for _, k := range req.Keys {
		str('K', k)
	}
	num('p', int64(len(req.Properties)))
	for _, k := range slices.Sorted(maps.Keys(req.Properties)) {
		str('P', k)
		str('V', req.Properties[k])
	}
	str('s', req.ShardingKey)
	if req.DelayLevel != nil {
		num('l', int64(*req.DelayLevel))
	}
	if req.DelaySeconds != nil {
		num('d', *req.DelaySeconds)
	}
	if req.DeliverAt != nil {
		num('a', req.DeliverAt.UnixNano())
	}
	return sum(h)
}

func sum(h hash.Hash) (out [32]byte) {
	h.Sum(out[:0])
	return out
}
