package engine

import (
	"sync"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// closedChan is returned when there is nothing to wait for.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// arrivals is the long-polling wake-up table (RocketMQ
// PullRequestHoldService + ReputMessageService's notifyMessageArriving,
// without the periodic re-check): per queue the max offset and a
// "generation" channel that is closed, and replaced lazily, whenever the
// queue's max offset moves. Waiters hold the channel; nothing ticks.
type arrivals struct {
	mu     sync.Mutex
	queues map[core.MessageQueue]*queueWait
	closed bool
}

type queueWait struct {
	max int64
	gen chan struct{} // nil until someone waits
}

func (a *arrivals) init() { a.queues = map[core.MessageQueue]*queueWait{} }

// set records a queue's max offset (on load and topic creation).
func (a *arrivals) set(mq core.MessageQueue, max int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.queues[mq]; w != nil {
		w.max = max
		return
	}
	a.queues[mq] = &queueWait{max: max}
}

// advance is the writer's OnCommit: it runs after the transaction committed
// and before the publishers are answered, so a waiter woken here reads the
// new messages.
func (a *arrivals) advance(adv []store.Advance) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ad := range adv {
		mq := core.MessageQueue{Topic: ad.Topic, QueueID: ad.QueueID}
		w := a.queues[mq]
		if w == nil {
			a.queues[mq] = &queueWait{max: ad.Max}
			continue
		}
		w.max = ad.Max
		if w.gen != nil {
			close(w.gen)
			w.gen = nil
		}
	}
}

// drop wakes and forgets every queue of a deleted topic.
func (a *arrivals) drop(topic string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for mq, w := range a.queues {
		if mq.Topic == topic {
			if w.gen != nil {
				close(w.gen)
			}
			delete(a.queues, mq)
		}
	}
}

func (a *arrivals) closeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for _, w := range a.queues {
		if w.gen != nil {
			close(w.gen)
			w.gen = nil
		}
	}
}

// wait returns the channel for (mq, offset). known reports whether the
// queue may exist later: unknown user-topic queues get a closed channel so
// the caller re-reads and sees ENotFound.
func (a *arrivals) wait(mq core.MessageQueue, offset int64) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return closedChan
	}
	w := a.queues[mq]
	if w == nil {
		if !core.IsSystemTopic(mq.Topic) {
			return closedChan
		}
		// A system topic (%RETRY%g) is created by its first put; wait for it.
		w = &queueWait{}
		a.queues[mq] = w
	}
	if w.max > offset {
		return closedChan
	}
	if w.gen == nil {
		w.gen = make(chan struct{})
	}
	return w.gen
}

// Arrival returns a channel closed once the queue's max offset exceeds
// offset (or the topic is deleted, or the engine closes). It is the
// wake-up for long polling: no timers, no polling. A channel can also close
// early (any commit to the queue wakes all waiters); callers re-read and
// wait again.
func (e *Engine) Arrival(mq core.MessageQueue, offset int64) <-chan struct{} {
	return e.arrivals.wait(mq, offset)
}

// ensure adds a queue of a new or grown topic (max offset 0).
func (a *arrivals) ensure(mq core.MessageQueue) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.queues[mq] == nil {
		a.queues[mq] = &queueWait{}
	}
}
