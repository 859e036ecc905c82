package groups

// CONTRACT SKETCH — exported surface of the group registry. The owner
// (push-consumer helper) replaces the bodies and may add to it.

import (
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

var errTODO = errors.New("not implemented yet")

// Registry keeps consumer groups in the engine's bbolt file: configs,
// committed offsets (per group/topic/queue, and per consumer for
// BROADCASTING), and in memory the client registry (heartbeats, expiry)
// and the orderly queue locks.
type Registry struct{}

// Open opens the registry over the engine's bbolt file.
func Open(db *bolt.DB) (*Registry, error) { return nil, errTODO }

// Close stops the registry's background work.
func (r *Registry) Close() error { return errTODO }

// Put creates or updates a group; created reports which. Validates config.
func (r *Registry) Put(cfg core.GroupConfig) (g core.Group, created bool, err error) {
	return core.Group{}, false, errTODO
}

// Get returns a group (ENotFound if absent).
func (r *Registry) Get(name string) (core.Group, error) { return core.Group{}, errTODO }

// List returns all groups by name.
func (r *Registry) List() ([]core.Group, error) { return nil, errTODO }

// Delete removes a group and its offsets (the engine removes its retry and
// DLQ topics).
func (r *Registry) Delete(name string) error { return errTODO }

// Watch returns a channel that receives the group's name whenever a group
// config changes or is deleted, and when its set of live clients changes;
// cancel stops the watch.
func (r *Registry) Watch() (ch <-chan string, cancel func()) { return nil, func() {} }

// CommittedOffset returns the committed offset of (group, consumer, mq); ok
// is false when none was committed. consumerID is "" for CLUSTERING.
func (r *Registry) CommittedOffset(group, consumerID string, mq core.MessageQueue) (offset int64, ok bool, err error) {
	return 0, false, errTODO
}

// CommitOffsets persists offsets of one client in one transaction.
func (r *Registry) CommitOffsets(group, consumerID string, offsets map[core.MessageQueue]int64) error {
	return errTODO
}

// SetOffset overwrites an offset (offset reset); forward-only does not apply.
func (r *Registry) SetOffset(group, consumerID string, mq core.MessageQueue, offset int64) error {
	return errTODO
}

// Heartbeat registers or refreshes a live client of a group.
func (r *Registry) Heartbeat(group, clientID string, now time.Time) {}

// Unregister removes a client at once (clean shutdown).
func (r *Registry) Unregister(group, clientID string) {}

// Clients returns the sorted live client ids of a group.
func (r *Registry) Clients(group string) []string { return nil }

// LockQueue takes or renews the orderly lock of mq for clientID; false if
// another live client holds an unexpired lock (RocketMQ lockBatchMQ).
func (r *Registry) LockQueue(group, clientID string, mq core.MessageQueue, now time.Time) bool {
	return false
}

// UnlockQueue releases a lock held by clientID.
func (r *Registry) UnlockQueue(group, clientID string, mq core.MessageQueue) {}
