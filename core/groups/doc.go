// Package groups keeps mqgate's consumer groups: what RocketMQ's broker
// holds for them (SubscriptionGroupManager, ConsumerOffsetManager,
// ConsumerManager and RebalanceLockManager), over the engine's bbolt file.
//
// It owns:
//   - group configs, validated and defaulted, in the bucket "groups.config";
//   - committed consumer positions in "groups.offsets": one nested bucket
//     per group, keyed by (consumerID, topic, queueID); consumerID is "" for
//     CLUSTERING groups (RemoteBrokerOffsetStore) and the client id for
//     BROADCASTING ones (LocalFileOffsetStore, kept here instead of a
//     file). A value is a core.Progress (progress.go): the offset, the
//     finished ranges above it, the reset epoch and the topic incarnation.
//     Writes merge (offsets only move forward, finished ranges accumulate)
//     and are dropped when the group incarnation, the epoch or the topic
//     incarnation says they are stale (offsets.go), so nothing of a deleted
//     group, topic or a superseded reset is written back;
//   - the start decisions in "groups.starts" (starts.go): which topics a
//     consumer's start positions were decided for, so a queue without a
//     position is known to have appeared later;
//   - the parked ordering keys of ORDERLY groups in "groups.parks"
//     (parks.go): the gateway's park rules and the ids they dead-lettered,
//     dropped with the group, and the migration of the JSON file earlier
//     versions kept them in;
//   - SettleHook: the settlement of a message sent back, run in the
//     engine's transaction that stores the copy;
//   - offset resets (first / last / timestamp), which it announces to the
//     running consumers so their in-memory offsets cannot overwrite them;
//   - in memory: the client registry (heartbeats, expiry by one timer
//     re-armed to the earliest deadline), the orderly queue locks (expire
//     after LockTTL unless renewed) and the watchers told when a group's
//     config or live clients change (notifyConsumerIdsChanged).
//
// It imports core, core/store (its typed transactions and the four
// buckets above, registered with store.Register) and internal/watch only:
// never bbolt, never core/engine (the engine is reached through the small
// OffsetSearcher interface and Options.Commit), never core/consumer,
// never HTTP.
//
// Invariants and lock order: Registry.mu guards the in-memory maps and
// serialises offset resets and config writes; it is taken before any bbolt
// transaction and never while a watcher's lock is held. Consumer position
// writes (CommitProgress) hold no registry lock: the epoch check inside
// their transaction is what orders them after a reset. A watcher's own
// mutex is a leaf. Watch channels coalesce: a slow reader sees each changed
// group name at least once after the change, never a backlog.
package groups
