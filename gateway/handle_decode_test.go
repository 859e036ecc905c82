package gateway

import (
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

var errBadHandle = policy.ErrBadHandle

// The whole-receipt decoder: the server checks handles in place
// (decodeTo, receiptRef.is); tests decode them whole to compare.

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
	f, ok := parseFields(p)
	if !ok {
		return receipt{}, errBadHandle
	}
	return f.receipt(p), nil
}

// receipt copies f's fields out of p.
func (f *receiptFields) receipt(p []byte) receipt {
	return receipt{
		Epoch: f.epoch, Seq: f.seq,
		Group: string(f.group.in(p)), ConsumerID: string(f.consumerID.in(p)),
		Queue:   core.MessageQueue{Topic: string(f.topic.in(p)), QueueID: int(f.queueID)},
		Offset:  int64(f.offset),
		Expires: time.UnixMilli(int64(f.expiresMs)).UTC(),
	}
}
