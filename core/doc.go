// Package core holds mqgate's domain: the types every layer speaks (topics,
// messages, consumer groups, message queues), the filter grammar and the
// error codes that the HTTP layer maps to statuses.
//
// The limits of a request (body size, batch size, tags, keys, properties,
// deduplicationId, delay; maxMessages, wait, lease, handles, reason) are
// defined once, in limits.go, and checked once per backend by
// ValidatePut, ReceiveRequest.Validate, ValidateHandles, ValidateNack and
// ValidateLease (validate.go); core/limitstest is the suite every backend
// runs against them.
//
// It imports nothing of the project but its leaf core/sqlfilter (the SQL92
// filter grammar, standard library only), and nothing of HTTP or storage. Its
// sub-packages hold the machinery:
//
//   - core/store:    the bbolt file (commit log, consume queues, indexes,
//     config), its encoding and the group-commit writer;
//   - core/engine:   the embedded "broker": topics, put, get, long polling,
//     groups, offsets, queue locks, client registry, send back, schedule;
//   - core/consumer: the push consumer (rebalance, pull service,
//     ProcessQueue, concurrent and orderly consume services, offset store).
//
// Dependencies point down: consumer → engine → store → core.
package core
