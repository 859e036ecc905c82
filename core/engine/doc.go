// Package engine is mqgate's embedded broker over one bbolt file: topics,
// publishing (queue selection, ids, validation), reading queues (RocketMQ
// getMessage with tag filtering and its statuses), lookups by id and key,
// offset search by time, long-polling wake-ups (Arrival), the retention
// cleaner and topic deletion. Later issues add the schedule service, delay
// levels and sendMessageBack here, on the unexported write primitive
// commit(ctx, []putOp, hook), which targets an explicit (topic, queue),
// accepts system topics (creating %RETRY%g / %DLQ%g on first use) and runs
// an optional hook in the same transaction.
//
// It imports core and core/store; never HTTP, the gateway or the consumer.
//
// # Goroutines
//
// The engine owns two: the store's group-commit writer and the retention
// cleaner (one timer, re-armed after each pass). Close stops the cleaner,
// lets the writer commit what is queued (later puts get core.ErrClosed),
// wakes every Arrival waiter and closes the file. Nothing polls: waiters
// block on per-queue generation channels closed by the writer's commit
// callback.
//
// # Invariants
//
//   - Queue offsets are contiguous per queue and never reused; a put is
//     answered only after its transaction committed with fsync.
//   - The arrival table's max offset of a queue is updated, and its waiters
//     woken, after the commit and before the publisher is answered.
//   - storedAt never decreases along a queue (SearchOffset relies on it).
//   - Lock order: adminMu → topicsMu → arrivals.mu; none is held while
//     waiting on the writer.
//
// # Caveats
//
// A %RETRY% or %DLQ% topic exists only once something was put to it; until
// then Topic reports it with one queue and reads see an empty queue.
// Messages of the schedule topic are never removed by retention.
package engine
