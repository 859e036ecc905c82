// Package gateway turns the push consumer into HTTP consumption: it is the
// push consumer's message listener and hands dispatched messages to long-poll
// receives, tracks leases and receipt handles, and turns ack / nack / extend
// and lease expiry into consume results (SPEC §7).
//
// Embedded implements the consume and operator parts of the seam
// (core.ConsumeService, core.OperatorService) over the in-process engine's
// push consumer (core/consumer), and Admin its group part
// (core.GroupService); backend/embedded puts them together with the engine
// as one core.Backend.
//
// It imports core and its sub-packages and gateway/webhook (the pusher of
// push groups, which owns every outgoing HTTP request), never api or
// net/http.
//
// # How it fits together
//
//   - One push-consumer client per CLUSTERING group (client id = the
//     instance id) and one per BROADCASTING consumerId; each has an inbox
//     as its Listener. The registry's Watch starts, updates and stops them
//     (reconcile.go); Embedded's lifecycle is in embedded.go, its Service
//     methods (receive, ack / nack / extend, status) in receive.go.
//   - inbox: per queue, the dispatched messages not yet received, in queue
//     order; receives take one message per queue per pass (round-robin) and
//     park on a FIFO of waiters, woken by a token when messages arrive or an
//     orderly queue unblocks. A parked receive holds no message.
//   - leaseTable: every handed-out message has a lease; one goroutine with
//     one timer armed to the earliest deadline (a heap) turns expiry into
//     RECONSUME_LATER. The lease is the consume timeout of the HTTP path
//     (SPEC §8.11): its clock starts at receive, and receive clients run
//     with the consumer's cleanExpireMsg off (ConsumeTimeout < 0), so a
//     live lease is never sent back and a buffered message ages nothing.
//     A lease leaves the table when it ends; an acked one leaves a one-bit
//     tombstone (ackedSet, tombstone.go: a ring over the last 2^26 lease
//     numbers, at most 8 MiB) so a repeated ack answers ok, also after the
//     deadline. Handles of nacked, expired or voided leases answer expired.
//   - Dropped ProcessQueues (rebalance, offset reset, filter or mode change,
//     topic delete): their messages are never handed out again — a take
//     skips a delivery whose Delivery.Dropped reports true, and the inbox,
//     a consumer.DropListener, purges the queue's buffered messages and
//     voids its leases when the consumer calls QueueDropped. Their handles
//     answer expired and nothing is answered to the consumer: the queue's
//     next owner delivers them again from the committed offset (an orderly
//     batch out is released by the consumer at once). An offset reset
//     answers only after the group's local client rebalanced (reset.go),
//     so a receive after it gets nothing of the old ProcessQueues; a
//     filter or mode change applies within the client's next rebalance
//     (milliseconds after the registry's watch reports it).
//   - Push (webhook) groups: one client per group (client id = the instance
//     id) whose Listener is a webhook.Pusher instead of an inbox (push.go).
//     Receive on them answers EConflict. A group moving between pull and
//     push has its old client stopped before the new one starts; a push
//     client is shut down before its pusher closes, so nothing the pusher
//     holds is answered after the client is gone: it is delivered again
//     from the committed offset rather than nacked into the retry topic.
//   - Idle pull groups (reconcile.go expireIdle, on the run loop's one
//     timer): a client nobody received from for IdlePrefetchAfter (30 s)
//     gets consumer.SetPrefetch(IdlePrefetch) (32); the consumer trims each
//     queue to that window, the inbox (a consumer.Revoker) giving back the
//     buffered messages beyond it, which are pulled again later. An idle
//     group so caches at most 32 + one pull batch (32) = 64 messages per
//     queue plus what is leased, instead of 1000. The next receive
//     restores the default window (1000).
//   - receipt handles: HMAC-signed, naming (epoch, lease seq, group,
//     consumer, queue, offset, first deadline); see handle.go.
//
// # Invariants
//
//   - Lock order: Embedded.mu → leaseTable.answering → leaseTable.mu →
//     inbox.mu. No consumer.Delivery
//     method but Dropped and Revocable (lock-free reads) is called with any
//     of them held: the consume service may call Consume from inside Ack /
//     Nack (or Revoke). QueueDropped takes leaseTable.mu then inbox.mu,
//     Revoke only inbox.mu; the consumer calls both with none of its locks
//     held. PushClient.SetPrefetch is called with Embedded.mu held (it
//     takes only the consumer's own locks and never calls back), so an
//     idle client's lowering and a receive's restoring cannot cross.
//   - Orderly: a queue's messages leave the inbox in order, and none while an
//     earlier one of that queue is handed out and unanswered; a nack or expiry
//     answers every later unanswered message of its batch too.
//   - Every message of a delivery is answered exactly once, unless its
//     ProcessQueue is dropped first (client shutdown included): then it is
//     not answered at all, and the engine redelivers it.
//
// # Caveats
//
// Leases live in memory. After a restart, handles still verify (the key is
// kept in the data dir) but answer `expired`: their messages are delivered
// again from the last committed offset.
package gateway
