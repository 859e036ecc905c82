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
//     the rest of its share at once, even above the limit (up to twice
//     it). So a newly owned queue gets room whatever the others hold, and
//     a group that holds its messages forever (nobody answers them) cannot
//     starve groups that start later.
//   - Borrowing: beyond its fair share a queue may use room nobody else is
//     using, strictly: a request is granted only when the total plus it
//     stays within the limit.
//
// Requests that cannot be granted at once wait in one FIFO (a larger
// request at the head is not overtaken, so it is not starved); a release
// grants the waiters at the head that now fit and wakes only them.
//
// The bound: the total never exceeds twice the limit. Borrowing never
// takes it over the limit, so it exceeds the limit only when queues claim
// their fair shares while others still hold what they borrowed (or shares
// granted before more queues joined); no queue borrows while it is over,
// so the excess shrinks as those queues consume. A client's newly owned
// queues join the budget before any of them pulls, so one client's queues
// see their real share from the start. Exception: a single message larger
// than any reservation its queue can get is still taken, alone (progress).
type CacheBudget struct {
	limit int64

	mu       sync.Mutex // leaf
	used     int64      // cached bytes plus reservations
	queues   int
	entitled []*budgetWaiter // entitled requests over twice the limit, FIFO; served first
	waiters  []*budgetWaiter // borrowing requests, FIFO
	peak     int64           // the highest used (tests)
}

// budgetWaiter is one request waiting for room.
type budgetWaiter struct {
	need    int64
	cap     int64         // granted when used+need <= cap (limit; entitled: 2×limit)
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

// grantLocked grants the waiters at the heads of the FIFOs that fit now:
// entitled ones first, borrowers only when no entitled one waits.
func (b *CacheBudget) grantLocked() {
	b.entitled = b.grantHeadLocked(b.entitled)
	if len(b.entitled) == 0 {
		b.waiters = b.grantHeadLocked(b.waiters)
	}
}

func (b *CacheBudget) grantHeadLocked(q []*budgetWaiter) []*budgetWaiter {
	for len(q) > 0 && b.used+q[0].need <= q[0].cap {
		w := q[0]
		q[0] = nil
		q = q[1:]
		b.used += w.need
		b.peak = max(b.peak, b.used)
		w.granted = true
		close(w.ready)
	}
	if len(q) == 0 {
		return nil
	}
	return q
}

// reserve asks room for a pull of up to want bytes by a queue caching
// held bytes. It returns the bytes granted (the caller releases what its
// pull did not use, with release or by caching it), or ok false if a
// cancel channel closed first.
func (b *CacheBudget) reserve(held, want int64, cancel1, cancel2 <-chan struct{}) (granted int64, ok bool) {
	want = max(want, 1)
	b.mu.Lock()
	fair := b.limit / int64(max(b.queues, 1))
	entitled := held < fair
	n, limit, q := min(want, b.limit), b.limit, &b.waiters // borrowing
	if entitled {
		n, limit, q = min(want, fair-held), 2*b.limit, &b.entitled
	}
	// Borrowers queue behind anyone waiting; entitled requests pass
	// waiting borrowers (their class is served first).
	if len(*q) == 0 && (entitled || len(b.entitled) == 0) && b.used+n <= limit {
		b.used += n
		b.peak = max(b.peak, b.used)
		b.mu.Unlock()
		return n, true
	}
	w := &budgetWaiter{need: n, cap: limit, ready: make(chan struct{})}
	*q = append(*q, w)
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
	for _, q := range []*[]*budgetWaiter{&b.entitled, &b.waiters} {
		for i, x := range *q {
			if x == w {
				*q = append((*q)[:i], (*q)[i+1:]...)
				break
			}
		}
	}
	b.grantLocked() // the head may have left: the next may fit
	return 0, false
}

// release returns n reserved bytes.
func (b *CacheBudget) release(n int64) { b.add(-n) }

// waiting is the number of requests waiting (tests).
func (b *CacheBudget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entitled) + len(b.waiters)
}
