package groups

import (
	"time"

	"github.com/mqgate/mqgate/core"
)

// lockEntry is one orderly queue lock (RocketMQ LockEntry).
type lockEntry struct {
	clientID string
	expires  time.Time
}

// LockQueue takes or renews the orderly lock of mq for clientID; false if
// another live client holds an unexpired lock (RocketMQ lockBatchMQ). A
// lock whose holder is no longer a live client is free.
func (r *Registry) LockQueue(group, clientID string, mq core.MessageQueue, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	ls := r.locks[group]
	if ls == nil {
		ls = map[core.MessageQueue]lockEntry{}
		r.locks[group] = ls
	}
	if l, ok := ls[mq]; ok && l.clientID != clientID && now.Before(l.expires) {
		if _, live := r.clients[group][l.clientID]; live {
			return false
		}
	}
	ls[mq] = lockEntry{clientID: clientID, expires: now.Add(r.opts.LockTTL)}
	return true
}

// UnlockQueue releases a lock held by clientID (RocketMQ unlockBatchMQ)
// and tells the group's watchers, so a client waiting for the queue
// rebalances at once instead of at its next periodic rebalance.
func (r *Registry) UnlockQueue(group, clientID string, mq core.MessageQueue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.locks[group][mq]; ok && l.clientID == clientID {
		delete(r.locks[group], mq)
		r.notifyLocked(group)
	}
}

// LockHolder returns the client holding an unexpired lock on mq, if any.
func (r *Registry) LockHolder(group string, mq core.MessageQueue, now time.Time) (clientID string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.locks[group][mq]
	if !ok || !now.Before(l.expires) {
		return "", false
	}
	return l.clientID, true
}
