// Package groups keeps mqgate's consumer groups: what RocketMQ's broker
// holds for them (SubscriptionGroupManager, ConsumerOffsetManager,
// ConsumerManager and RebalanceLockManager), over the engine's bbolt file.
//
// It owns:
//   - group configs, validated and defaulted, in the bucket "groups.config";
//   - committed consumer offsets in "groups.offsets": one nested bucket per
//     group, keyed by (consumerID, topic, queueID); consumerID is "" for
//     CLUSTERING groups (RemoteBrokerOffsetStore) and the client id for
//     BROADCASTING ones (LocalFileOffsetStore, kept here instead of a file);
//   - offset resets (first / last / timestamp), which it announces to the
//     running consumers so their in-memory offsets cannot overwrite them;
//   - in memory: the client registry (heartbeats, expiry by one timer
//     re-armed to the earliest deadline), the orderly queue locks (expire
//     after LockTTL unless renewed) and the watchers told when a group's
//     config or live clients change (notifyConsumerIdsChanged).
//
// It imports core and bbolt only: never core/engine (the engine is reached
// through the small OffsetSearcher interface), never core/consumer, never
// HTTP.
//
// Invariants and lock order: Registry.mu guards the in-memory maps and
// serialises offset writes with offset resets; it is taken before any bbolt
// transaction and never while a watcher's lock is held. A watcher's own
// mutex is a leaf. Watch channels coalesce: a slow reader sees each changed
// group name at least once after the change, never a backlog.
package groups
