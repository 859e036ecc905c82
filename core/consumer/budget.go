package consumer

import "sync"

// DefaultCacheBudget is the suggested process-wide cache budget (SPEC §5).
const DefaultCacheBudget = 256 << 20

// CacheBudget caps the message bytes cached by every ProcessQueue of every
// client that shares it (one gateway hosts many groups; RocketMQ's
// per-queue limits alone would let memory grow with the number of groups
// and queues). Share one CacheBudget through Options.CacheBudget.
//
// A queue may pull while it caches less than its fair share: the limit
// divided by the number of queues under the budget. A newly owned queue
// therefore always gets room, whatever the other groups hold, and the
// total stays within the limit plus one pull batch per queue. (Letting a
// busy queue borrow idle queues' room would let a stuck group starve
// groups that start later; per-queue thresholds already bound a queue.)
type CacheBudget struct {
	limit int64

	mu     sync.Mutex // leaf
	used   int64
	queues int
	space  chan struct{} // closed when bytes are released
}

// NewCacheBudget returns a budget of limit bytes (<= 0: DefaultCacheBudget).
func NewCacheBudget(limit int64) *CacheBudget {
	if limit <= 0 {
		limit = DefaultCacheBudget
	}
	return &CacheBudget{limit: limit, space: make(chan struct{})}
}

// Used returns the bytes cached under the budget.
func (b *CacheBudget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *CacheBudget) register(delta int) {
	b.mu.Lock()
	b.queues += delta
	b.mu.Unlock()
}

func (b *CacheBudget) add(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used += n
	if n < 0 {
		close(b.space)
		b.space = make(chan struct{})
	}
	b.mu.Unlock()
}

// allow reports whether a queue caching queueBytes may pull; if not, the
// returned channel is closed when bytes are released.
func (b *CacheBudget) allow(queueBytes int64) (bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fair := b.limit / int64(max(b.queues, 1))
	if queueBytes < fair {
		return true, nil
	}
	return false, b.space
}
