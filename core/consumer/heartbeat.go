package consumer

import (
	"sync"
	"time"
)

// Heartbeats sends the heartbeats of every client built with it on one
// timer, the way RocketMQ's MQClientInstance sends all of its consumers'
// heartbeats in one scheduled task: an idle process with hundreds of
// groups wakes once per interval, not once per client. Its goroutine
// runs only while some client is registered and stops with the last one.
//
// A client without Deps.Heartbeats runs its own heartbeat timer.
type Heartbeats struct {
	coord    Coordinator
	interval time.Duration

	mu      sync.Mutex
	clients map[heartbeatKey]struct{}
	stop    chan struct{} // nil while no loop runs
	done    chan struct{}
}

type heartbeatKey struct{ group, clientID string }

// NewHeartbeats returns a shared heartbeat sender; interval <= 0 means
// DefaultHeartbeatInterval.
func NewHeartbeats(coord Coordinator, interval time.Duration) *Heartbeats {
	if interval <= 0 {
		interval = DefaultHeartbeatInterval
	}
	return &Heartbeats{coord: coord, interval: interval, clients: map[heartbeatKey]struct{}{}}
}

// add registers a client (its first heartbeat is the caller's).
func (h *Heartbeats) add(group, clientID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients[heartbeatKey{group, clientID}] = struct{}{}
	if h.stop == nil {
		h.stop, h.done = make(chan struct{}), make(chan struct{})
		go h.loop(h.stop, h.done)
	}
}

// remove stops heartbeating a client; after the last one the loop ends
// before remove returns.
func (h *Heartbeats) remove(group, clientID string) {
	h.mu.Lock()
	delete(h.clients, heartbeatKey{group, clientID})
	var stop, done chan struct{}
	if len(h.clients) == 0 && h.stop != nil {
		stop, done = h.stop, h.done
		h.stop, h.done = nil, nil
	}
	h.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (h *Heartbeats) loop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(h.interval)
	defer t.Stop()
	var keys []heartbeatKey
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		keys = keys[:0]
		for k := range h.clients {
			keys = append(keys, k)
		}
		h.mu.Unlock()
		now := time.Now()
		for _, k := range keys {
			h.coord.Heartbeat(k.group, k.clientID, now)
		}
		t.Reset(h.interval)
	}
}
