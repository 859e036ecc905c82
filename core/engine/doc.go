// Package engine is mqgate's embedded broker over one bbolt file: topics,
// publishing (queue selection, ids, validation), reading queues (RocketMQ
// getMessage with tag filtering and its statuses), lookups by id and key,
// offset search by time, long-polling wake-ups (Arrival), the retention
// cleaner and topic deletion; the schedule service (delay levels on
// SCHEDULE_TOPIC_XXXX, timer messages in a time index: schedule*.go,
// timer.go), sendMessageBack to %RETRY%g / %DLQ%g (sendback.go; many
// copies of one group per transaction with SendMessagesBack) and DLQ
// listing and redrive (dlq.go). All writes go through the unexported
// primitive commit(ctx, []putOp, hook), which targets an explicit (topic,
// queue), accepts system topics (creating %RETRY%g / %DLQ%g on first use)
// and runs an optional hook in the same transaction: the schedule service
// advances its offset (or deletes its timer entry) there, so a due message
// is moved exactly once across crashes.
//
// It imports core, core/store and internal/watch; never HTTP, the gateway or
// the consumer, and never bbolt: it reads and writes through store.ReadTx
// and store.Tx, and keeps its own buckets (dedup.records, dedup.expiry,
// sched.offsets, sched.timers, sched.timertopics, sched.timerids,
// sched.sweep, dlq.redriven, jobs) under the store.BucketName each got from
// store.Register (dedup.go, schedule.go, jobs.go).
//
// # Topic changes and growth
//
// WatchTopics (topicwatch.go) announces a topic's name after a create, a
// change of its queue count or a delete has committed, to every watcher;
// consumers rebalance on it instead of waiting for their periodic
// rebalance. Each watcher coalesces pending names and feeds them from a
// goroutine of its own (stopped by its cancel or Close), so announcing
// never blocks the engine and a slow reader sees each changed name at
// least once, never a backlog.
//
// Growing a topic from N to M queues moves sharding keys (FNV-1a mod the
// count). store.Tx.PutTopic appends a layout to the topic record: N and each
// old queue's max offset at that commit (the fence; core.TopicLayout,
// exposed as Topic.Layouts, with GetResult.Layouts and TopicUID as the
// snapshot a read was made in). The fence is exact because a publish holds
// its topic's layout lock for reading from choosing its queues to its
// commit, and the growth holds it for writing: every publish answered
// before the growth is below the fence, every publish that chose with M
// above it. ORDERLY consumers gate on the fences (core/consumer/fence.go).
// A publish abandoned by its context (not answered 2xx) may still commit
// after the growth, above the fence; no order is promised for it. The
// schedule service's puts (delayed and timer messages, retries) do not
// take the lock: they carry no per-key order.
//
// # Goroutines
//
// The engine owns: the store's group-commit writer, the retention cleaner
// (one timer, re-armed after each pass: moves expired queue heads, then
// drops whole store segments nothing visible is left in), the trash loop
// (trash.go: drops deleted topics' segments in the background; a pass at open, then woken by each
// deletion, a retry timer only after a failure), one task per delay level
// (DeliverDelayedMessageTimerTask) and one timer-index task. Each schedule
// task sleeps on one timer armed for its earliest due message, or until a
// put of an earlier one wakes it (dueLoop.armed/offer, schedule_wake.go); it
// never polls.
// The cleaner and the tasks stop on Close's signal before the store closes. Close stops the cleaner,
// lets the writer commit what is queued (later puts get core.ErrClosed),
// wakes every Arrival waiter and closes the file. Nothing polls: waiters
// block on per-queue generation channels closed by the writer's commit
// callback.
//
// # Idempotent publish (dedup.go)
//
// A PutMessage with a DedupID (Idempotency-Key, deduplicationId) leaves a
// record in the engine's bucket dedup.records (topic, 0x00, id → original
// result, request hash, topic incarnation, expiry) and an entry in
// dedup.expiry (expiry, topic, 0x00, id), both written by a hook in the
// message's own transaction after a check of the same key in that
// transaction: two racing publishes of one key never both store (the
// loser's request fails with errDedupRace, stores nothing, and Put looks
// again). The result's queue and offset are read back inside the
// transaction with store.ReadTx.PositionOfID. Put answers a repeat from a
// read transaction first, so plain retries never reach the writer. A record
// expires after Options.DedupWindow (exact at lookup); the retention
// cleaner's pass sweeps the expiry index in chunks. Records of a deleted
// topic's incarnation are ignored and overwritten.
//
// # Incarnations (SPEC §8.9)
//
// A topic's incarnation is its store UID (core.Topic.UID); deleting a topic
// moves the UID to the trash and a topic created again under the name gets
// a larger one. Nothing of an old incarnation reaches a new one:
//
//   - Put writes with store.Op.ExpectUID = the UID it resolved, so a publish
//     racing with the delete fails (ENotFound) instead of landing in a
//     re-created topic.
//   - Every message parked for later (schedule queue, timer index) carries
//     REAL_TOPIC_UID; the move when due expects it, and a message whose
//     topic is absent or has another UID is dropped and counted. The check
//     runs in the move's transaction, so it is exact and O(1): it alone
//     makes deletion correct. To bound disk, the trash loop also removes a
//     deleted topic's timer entries eagerly (sched.timertopics indexes them
//     by topic UID, so no scan of the time index). Delay-level messages
//     are not removed at deletion: a level's schedule queue is append-only
//     and shared (units cannot leave its middle), so they are passed over
//     when due and trimmed with the delivered head, at most the longest
//     level later.
//   - A retry copy carries the UID of %RETRY%<group>, which
//     SendMessageBackSettled creates (one queue) before the copy if absent.
//     Deleting the group removes %RETRY%<group> (DeleteSystemTopic), so its
//     pending retries are dropped when due; a new group of the name gets a
//     new %RETRY% UID on its first send-back. The copy's transaction checks
//     the UID it stamped, and a settle hook answering core.ErrGroupGone (the
//     registry's check that the group incarnation still exists) makes the
//     send-back write nothing and succeed: a late send-back of a deleted
//     group's client creates no %DLQ% topic and parks no retry. (It may
//     leave an empty %RETRY% topic, which a group of the name would reuse.)
//   - Lookups by id and key show only messages of the current incarnation
//     (a deleted topic's messages stay in their segments, and indexed,
//     until those segments are dropped; a look-up confirms the unit is
//     still inside its current queue's range).
//
// Retries and timers parked before REAL_TOPIC_UID existed have none and go
// to whichever topic has the name when due.
//
// # Invariants
//
//   - Queue offsets are contiguous per queue and never reused; a put is
//     answered only after its transaction committed with fsync.
//   - The arrival table's max offset of a queue is updated, and its waiters
//     woken, after the commit and before the publisher is answered.
//   - storedAt never decreases along a queue (SearchOffset relies on it).
//   - Lock order: adminMu → topicEntry.layout → topicsMu → arrivals.mu,
//     topicWatchers.mu; only topicEntry.layout (read side, by Put) is held
//     while waiting on the writer.
//
// # Caveats
//
// A %RETRY% or %DLQ% topic exists only once a send-back (or a put) created
// it; until then Topic reports it with one queue (UID 0) and reads see an
// empty queue.
// Messages of the schedule topic are never removed by retention; each
// level task trims its queue's delivered head instead. Timer messages are
// not in the commit log (nor the id index) until they are due.
// A retry pending for a group deleted meanwhile is dropped when it comes
// due (unless parked before incarnations were recorded).
package engine
