// Package core holds mqgate's domain: the types every layer speaks (topics,
// messages, consumer groups, message queues, leases and their answers), the
// filter grammar, the error codes that the HTTP layer maps to statuses, and
// the one seam between the HTTP layer and a message backend: Backend
// (backend.go), composed of TopicService, DeadLetterService,
// ConsumeService, GroupService and OperatorService.
//
// The limits of a request (body size, batch size, tags, keys, properties,
// deduplicationId, delay; maxMessages, wait, lease, handles, reason) are
// defined once, in limits.go, and checked once per backend by
// ValidatePut, ReceiveRequest.Validate, ValidateHandles, ValidateNack and
// ValidateLease (validate.go); core/limitstest is the suite every backend
// runs against them.
//
// It imports nothing of the project but its leaves core/sqlfilter (the
// SQL92 filter grammar) and core/policy (the rules both backends share,
// whose HandleStatus the seam names), both standard library only, and
// nothing of HTTP or storage.
//
// # Package layout
//
// Dependencies point down; nothing below imports what is above it.
//
//	cmd/mqgate, cmd/mqbench   flags, http.Server, metrics wiring; build a
//	                          backend with embedded.Open or jetstream.Open
//	api                       HTTP/REST and WebSocket handlers over one
//	                          core.Backend (Options.Backend); never asks
//	                          which backend it has (no type assertions,
//	                          api/seam_test.go checks)
//	backend/embedded          the default backend: engine + groups registry
//	                          + gateway + admin, opened and closed in order
//	backend/jetstream         the scale-out backend over NATS JetStream;
//	                          what it cannot offer answers Unsupported
//	gateway                   the embedded backend's leases over the push
//	                          consumer (receipt handles, inboxes, blocked
//	                          keys, timelines, group admin)
//	gateway/webhook           the webhook pusher, used by both backends
//	                          (Pusher.Consume for the push consumer,
//	                          Pusher.Deliver for a backend that leases)
//	core/consumer             the push consumer (rebalance, pull service,
//	                          ProcessQueue, concurrent and orderly consume)
//	core/groups               consumer-group configs and offsets in the store
//	core/engine               the embedded broker: topics, put, get, long
//	                          polling, send back, schedule, DLQ, jobs
//	core/store                the bbolt file, its log-ahead and group commit
//	core/policy               the rules both backends share: delay levels,
//	                          retry and DLQ policy, receipt-handle sealing
//	core                      this package: the domain and the seam
//
// Within the embedded backend: gateway → core/consumer → core/engine and
// core/groups → core/store → core.
//
// # Lock order
//
// Each package documents its own order (gateway/doc.go, core/consumer,
// core/engine, core/groups). Across packages, a lock is only ever taken
// after those of the packages above it, never the other way:
//
//	gateway:   Embedded.mu → leaseTable.answering → leaseTable.mu → inbox.mu;
//	           Timeline.mu and the blocked-key rules' mu are leaves
//	consumer:  PushConsumer.mu → pullRequest.parkMu → the engine's arrival
//	           lock; PushConsumer.mu → pullRequest.mu → the ProcessQueue,
//	           offset store and send-back queue locks (leaves)
//	groups:    Registry.mu (taken with PushConsumer.mu held, by the
//	           Coordinator) → any store transaction
//	engine:    adminMu → topicEntry.layout → topicsMu → arrivals.mu,
//	           topicWatchers.mu
//	store:     Store.wmu (the write transactions and the log-ahead), last
//
// The gateway calls into the consumer with Embedded.mu held only for
// PushClient.SetPrefetch, which takes only the consumer's own locks and
// never calls back; the consumer calls its Listener (the gateway, a
// pusher) with none of its locks held. backend/jetstream holds Backend.mu
// only around its own maps, never across a JetStream request.
package core
