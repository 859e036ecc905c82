package consumer

import "sync"

// DefaultCacheBudget is the suggested process-wide cache budget (SPEC §5).
const DefaultCacheBudget = 256 << 20

// CacheBudget caps the message bytes cached by every ProcessQueue of every
// client that shares it (one gateway hosts many groups; RocketMQ's
// per-queue limits alone would let memory grow with the number of groups
// and queues). Share one CacheBudget through Options.CacheBudget.
//
// It is a counting semaphore over bytes. Before each pull a queue
// reserves room for the batch (its size estimated from the queue's recent
// messages); the pull keeps only the messages that fit the reservation and
// returns the rest of it, so what a queue caches never exceeds what it
// reserved. Requests are served in two classes:
//
//   - Entitled: a queue caching less than its fair share (the limit
//     divided by the number of queues under the budget) is granted up to
//     the rest of its share at once, whatever the others hold. So a newly
//     owned queue always gets room, and a group that holds its messages
//     forever (nobody answers them) cannot starve groups that start later.
//   - Borrowing: beyond its fair share a queue may use room nobody else is
//     using, strictly: a request is granted only when the total plus it
//     stays within the limit, in FIFO order (a larger request at the head
//     is not overtaken, so it is not starved). A release grants the
//     waiters at the head that now fit and wakes only them.
//
// The bound: borrowing never takes the total over the limit, so the total
// exceeds it only when entitled queues claim their shares while borrowers
// still hold what they borrowed — by at most what was borrowed, and no
// queue borrows again until the total is back under the limit. Absolute
// worst case: twice the limit. A queue caches at most its fair share plus
// what it borrowed, except that a single message larger than any
// reservation it could get is still taken, alone (progress).
type CacheBudget struct {
	limit int64

	mu      sync.Mutex // leaf
	used    int64      // cached bytes plus reservations
	queues  int
	waiters []*budgetWaiter // borrowing requests, FIFO
	peak    int64           // the highest used (tests)
}

// budgetWaiter is one borrowing request waiting for room.
type budgetWaiter struct {
	need    int64
	ready   chan struct{} // closed when granted
	granted bool
}

// NewCacheBudget returns a budget of limit bytes (<= 0: DefaultCacheBudget).
func NewCacheBudget(limit int64) *CacheBudget {
	if limit <= 0 {
		limit = DefaultCacheBudget
	}
	return &CacheBudget{limit: limit}
}

// Used returns the bytes cached (and reserved by pulls in flight) under
// the budget.
func (b *CacheBudget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Peak returns the highest Used so far.
func (b *CacheBudget) Peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

func (b *CacheBudget) register(delta int) {
	b.mu.Lock()
	b.queues += delta
	b.mu.Unlock()
}

// add changes the bytes cached (a queue's put, removal, or detach).
func (b *CacheBudget) add(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.addLocked(n)
	b.mu.Unlock()
}

func (b *CacheBudget) addLocked(n int64) {
	b.used += n
	b.peak = max(b.peak, b.used)
	if n < 0 {
		b.grantLocked()
	}
}

// grantLocked grants the waiters at the head of the FIFO that fit now.
func (b *CacheBudget) grantLocked() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].need <= b.limit {
		w := b.waiters[0]
		b.waiters[0] = nil
		b.waiters = b.waiters[1:]
		b.used += w.need
		b.peak = max(b.peak, b.used)
		w.granted = true
		close(w.ready)
	}
	if len(b.waiters) == 0 {
		b.waiters = nil
	}
}

// reserve asks room for a pull of up to want bytes by a queue caching
// held bytes. It returns the bytes granted (the caller releases what its
// pull did not use, with release or by caching it), or ok false if a
// cancel channel closed first.
func (b *CacheBudget) reserve(held, want int64, cancel1, cancel2 <-chan struct{}) (granted int64, ok bool) {
	want = max(want, 1)
	b.mu.Lock()
	if fair := b.limit / int64(max(b.queues, 1)); held < fair {
		n := min(want, fair-held) // entitled: at once
		b.used += n
		b.peak = max(b.peak, b.used)
		b.mu.Unlock()
		return n, true
	}
	n := min(want, b.limit)
	if len(b.waiters) == 0 && b.used+n <= b.limit {
		b.used += n
		b.peak = max(b.peak, b.used)
		b.mu.Unlock()
		return n, true
	}
	w := &budgetWaiter{need: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, true
	case <-cancel1:
	case <-cancel2:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.granted {
		b.addLocked(-n) // granted meanwhile: give it back
		return 0, false
	}
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	b.grantLocked() // the head may have left: the next may fit
	return 0, false
}

// release returns n reserved bytes.
func (b *CacheBudget) release(n int64) { b.add(-n) }

// waiting is the number of borrowing requests waiting (tests).
func (b *CacheBudget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}
