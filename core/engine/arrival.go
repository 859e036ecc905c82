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
// Parked waiters (AfterArrival) hold not even a goroutine: a function is
// kept per queue and started when the queue moves.
type arrivals struct {
	mu     sync.Mutex
	queues map[core.MessageQueue]*queueWait
	closed bool
}

type queueWait struct {
	max    int64
	gen    chan struct{}            // nil until someone waits
	parked map[*parkedWait]struct{} // AfterArrival waiters; nil when none
}

// parkedWait is one AfterArrival waiter.
type parkedWait struct {
	fn func()
	w  *queueWait // nil once started or stopped (arrivals.mu)
}

// wakeLocked takes w's parked waiters, to be started once arrivals.mu is
// released (startParked).
func (w *queueWait) wakeLocked(out []func()) []func() {
	for p := range w.parked {
		p.w = nil
		out = append(out, p.fn)
	}
	w.parked = nil
	return out
}

// startParked starts woken parked waiters, each on a goroutine of its own:
// the writer calls advance on its commit path, which must not wait for
// them.
func startParked(fns []func()) {
	for _, fn := range fns {
		go fn()
	}
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
	var woken []func()
	defer func() { startParked(woken) }() // after the unlock below
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
		woken = w.wakeLocked(woken)
	}
}

// drop wakes and forgets every queue of a deleted topic.
func (a *arrivals) drop(topic string) {
	var woken []func()
	defer func() { startParked(woken) }()
	a.mu.Lock()
	defer a.mu.Unlock()
	for mq, w := range a.queues {
		if mq.Topic == topic {
			if w.gen != nil {
				close(w.gen)
			}
			woken = w.wakeLocked(woken)
			delete(a.queues, mq)
		}
	}
}

func (a *arrivals) closeAll() {
	var woken []func()
	defer func() { startParked(woken) }()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for _, w := range a.queues {
		if w.gen != nil {
			close(w.gen)
			w.gen = nil
		}
		woken = w.wakeLocked(woken)
	}
}

// queueLocked is the wait entry of mq; nil when the caller should not
// wait (closed, or an unknown user topic: re-read and see ENotFound).
func (a *arrivals) queueLocked(mq core.MessageQueue) *queueWait {
	if a.closed {
		return nil
	}
	w := a.queues[mq]
	if w == nil {
		if !core.IsSystemTopic(mq.Topic) {
			return nil
		}
		// A system topic (%RETRY%g) is created by its first put; wait for it.
		w = &queueWait{}
		a.queues[mq] = w
	}
	return w
}

// park keeps fn for (mq, offset); see Engine.AfterArrival.
func (a *arrivals) park(mq core.MessageQueue, offset int64, fn func()) (stop func() bool, parked bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.queueLocked(mq)
	if w == nil || w.max != offset {
		return nil, false
	}
	p := &parkedWait{fn: fn, w: w}
	if w.parked == nil {
		w.parked = map[*parkedWait]struct{}{}
	}
	w.parked[p] = struct{}{}
	return func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		if p.w == nil {
			return false
		}
		delete(p.w.parked, p)
		p.w = nil
		return true
	}, true
}

// wait returns the channel for (mq, offset). known reports whether the
// queue may exist later: unknown user-topic queues get a closed channel so
// the caller re-reads and sees ENotFound.
func (a *arrivals) wait(mq core.MessageQueue, offset int64) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.queueLocked(mq)
	if w == nil {
		return closedChan
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

// AfterArrival is Arrival for a waiter that keeps no goroutine: fn runs,
// once and on a goroutine of its own, when the queue's max offset exceeds
// offset (or the topic is deleted, or the engine closes; early wake-ups
// as with Arrival). parked is false, and fn never runs, unless offset is
// the queue's max offset: when it holds more (read them), when offset is
// beyond it (a read corrects it: OFFSET_ILLEGAL), when the engine is
// closed, or when mq is not a queue of a known topic. stop cancels a
// parked fn and reports whether it did so before fn was started.
func (e *Engine) AfterArrival(mq core.MessageQueue, offset int64, fn func()) (stop func() bool, parked bool) {
	return e.arrivals.park(mq, offset, fn)
}

// ensure adds a queue of a new or grown topic (max offset 0).
func (a *arrivals) ensure(mq core.MessageQueue) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.queues[mq] == nil {
		a.queues[mq] = &queueWait{}
	}
}
