package groups

import (
	"slices"
	"time"
)

// Heartbeat registers or refreshes a live client of a group (RocketMQ
// ConsumerManager.registerConsumer). A new client notifies the group's
// watchers so that every client rebalances at once.
func (r *Registry) Heartbeat(group, clientID string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	cs := r.clients[group]
	if cs == nil {
		cs = map[string]time.Time{}
		r.clients[group] = cs
	}
	_, known := cs[clientID]
	cs[clientID] = now.Add(r.opts.ClientTimeout)
	if !known {
		r.notifyLocked(group)
		// A new deadline can only be the earliest when the client is new:
		// a refresh moves a deadline later, which the timer tolerates
		// (it fires, finds nothing expired and re-arms).
		r.kickLocked()
	}
}

// Unregister removes a client at once (clean shutdown) and frees its queue
// locks (RocketMQ unregisterConsumer + unlockBatchMQ).
func (r *Registry) Unregister(group, clientID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeClientLocked(group, clientID)
}

func (r *Registry) removeClientLocked(group, clientID string) {
	cs := r.clients[group]
	if _, ok := cs[clientID]; !ok {
		return
	}
	delete(cs, clientID)
	if len(cs) == 0 {
		delete(r.clients, group)
	}
	for mq, l := range r.locks[group] {
		if l.clientID == clientID {
			delete(r.locks[group], mq)
		}
	}
	r.notifyLocked(group)
}

// Clients returns the sorted live client ids of a group.
func (r *Registry) Clients(group string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	ids := make([]string, 0, len(r.clients[group]))
	for id, exp := range r.clients[group] {
		if now.Before(exp) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (r *Registry) kickLocked() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// expireLoop removes silent clients (RocketMQ ClientHousekeepingService,
// which scans every 10 s; here one timer is re-armed to the earliest
// deadline, so nothing runs while every client is fresh).
func (r *Registry) expireLoop() {
	defer close(r.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		r.mu.Lock()
		next := r.expireLocked(time.Now())
		r.mu.Unlock()
		wait := time.Hour
		if !next.IsZero() {
			wait = time.Until(next)
		}
		t.Reset(wait)
		select {
		case <-r.stop:
			return
		case <-r.kick:
		case <-t.C:
		}
	}
}

// expireLocked removes expired clients and returns the earliest remaining
// deadline (zero if none).
func (r *Registry) expireLocked(now time.Time) time.Time {
	var next time.Time
	for group, cs := range r.clients {
		for id, exp := range cs {
			if !now.Before(exp) {
				r.log.Info().Str("group", group).Str("client", id).Msg("consumer client expired")
				r.removeClientLocked(group, id)
				continue
			}
			if next.IsZero() || exp.Before(next) {
				next = exp
			}
		}
	}
	return next
}
