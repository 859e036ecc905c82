package api

import (
	"context"

	"github.com/mqgate/mqgate/gateway"
)

// Backend is the one lease-shaped interface below the HTTP layer that
// every message backend implements (issue 12):
//
//   - topics, publish (an atomic batch), lookup by id and key, browse,
//     DLQ list and redrive: Engine;
//   - receive (a lease per message, a signed receipt handle) and settle
//     (ack, nack with a delay level, extend), group status:
//     gateway.Service;
//   - group configs, offsets and their reset: gateway.Groups;
//   - Drain (parked receives answer now, new ones are refused) and Close.
//
// The rules that must not differ between backends (the delay-level table,
// the retry / DLQ policy, receipt-handle sealing and the ok / expired /
// invalid answers) are not restated by each implementation: they live in
// core/policy, which both call.
//
// The embedded engine implements it as gateway.EmbeddedBackend (the bbolt
// engine, the push-consumer gateway and the group admin, unchanged);
// backend/jetstream.Backend implements it natively over JetStream.
// Options.Backend wires one in place of Engine, Consume and Groups.
type Backend interface {
	Engine
	gateway.Service
	gateway.Groups
	// Drain answers every parked receive at once and refuses new ones;
	// settling keeps working.
	Drain()
	// Close drains and releases the backend; leases still held are not
	// lost (their messages are delivered again).
	Close(ctx context.Context) error
}
