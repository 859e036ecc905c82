// Package jetstream is mqgate's distributed backend: the same HTTP API
// (core.Backend, the one seam; Open is its constructor) over a NATS JetStream
// cluster, served by any number of stateless gateway instances. The
// embedded bbolt engine stays the default; docs/jetstream.md has the full
// mapping, the operations guide and what differs from embedded.
//
// # Mapping
//
//   - topic T → stream MQ_T over mq.T.>; queue q → subject mq.T.q, so a
//     sharding key (FNV-1a mod queues, as embedded) stays on one subject,
//     in order. Queue count and retention are stream metadata.
//   - publish → one atomic batch (Nats-Batch-*), all or nothing. Each
//     message is followed in its batch by index entries mq.T.i.<id> and
//     mq.T.k.<key hash> (payload: how far back the message is), which
//     lookups by id and key read. A message with an idempotency key is
//     also followed by a dedup entry mq.T.d.<hash of topic and key> with
//     that hash as Nats-Msg-Id: the stream's duplicate window makes
//     JetStream refuse a repeat atomically (dedup.go).
//   - delay level / deliverAt → a schedule message on mq.T.s.<id>
//     (Nats-Schedule "@at", Nats-Schedule-Target mq.T.q; nats-server
//     ≥ 2.12): stored in the queue when due, never before.
//   - group → config in KV bucket MQGATE_GROUPS; per subscribed topic one
//     durable pull consumer (CONCURRENTLY, filter mq.T.* + mq.T.r.<group>)
//     or one per queue with MaxAckPending 1 (ORDERLY); per consumerId for
//     BROADCASTING.
//   - lease → the message stays pending on its consumer; a NAK with delay
//     = invisibleSeconds sets when JetStream redelivers it. A receipt
//     handle (policy.Sealer, the key shared by all instances)
//     carries the JetStream ack subject, the delivery count and the
//     deadline, so any instance settles it; nack and extend write an
//     override (KV bucket MQGATE_LEASES) so every instance answers the
//     same ok / expired for it.
//   - ORDERLY order through a stale consumer leader → before an ORDERLY
//     message is handed out, its sequence is written, compare-and-set
//     and so through a quorum, as its queue consumer's claim in
//     MQGATE_ORDER_CLAIMS; a delivery behind the claim is stale, acked and
//     not handed out (orderclaim.go).
//   - retry → NAK with the level's delay (3 + reconsumeTimes for level
//     0) on the same consumer; reconsumeTimes = delivery count - 1. The
//     (maxReconsumeTimes+1)-th failure, or level -1 → a copy in stream
//     MQD_<group> (deduplicated by delivery), then +TERM. Redrive →
//     publish to mq.T.r.<group> (only that group's consumers match it),
//     delete from the DLQ.
//   - offsets → consumer info (ack floor, pending), one row per queue
//     (CONCURRENTLY: each queue's lag counted by a batched direct get,
//     offsets.go); reset → the consumer recreated from the sequence of
//     the position.
//   - blocked keys (ORDERLY) → a queue's head is the one message its
//     consumer has out; failing heads, parks and skips are keys of the KV
//     bucket MQGATE_ORDERLY (blocked.go), read by ORDERLY leases. Per-key
//     lag → a batched direct get per queue past its ack floor (keylag.go).
//   - topic growth → a fence in the stream's metadata; ORDERLY leases of
//     a moved key wait for its other queue (fence.go). An offsets reset
//     is counted in the group's rules (MQGATE_ORDERLY), which re-arms
//     the fences on every instance.
//   - redrive / purge by filter → a job record in KV bucket MQGATE_JOBS
//     (progress, owner, lease), run by its owner and taken over by
//     another instance when the lease ends unrenewed (jobs.go).
//
// # Goroutines
//
// Receives run on the caller's goroutine. A receive that parks starts at
// most one waiting pull per consumer per instance; each runs on a
// goroutine owned by the Backend until its batch is full, its expiry
// (≤ 30 s) passes or Close; what it brings after its receive answered is
// stashed for the next receive on this instance. A stashed message older
// than half its ack wait is NAKed (redelivered at once) instead of leased.
// One goroutine per instance follows MQGATE_JOBS (superviseJobs) and one
// runs each job this instance owns; Close stops them all and lets the
// jobs go.
package jetstream
