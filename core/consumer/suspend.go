package consumer

import (
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Suspension is an orderly queue whose head message failed: the consume
// service sends the batch round again after SuspendTime
// (SUSPEND_CURRENT_QUEUE_A_MOMENT), so nothing behind the head is consumed
// until it succeeds or goes to the DLQ. Diagnostics read it (why a receive
// is empty, which ordering keys are blocked).
type Suspension struct {
	Queue core.MessageQueue
	// Head is the failed message (a copy, with its reconsumeTimes already
	// raised for the next attempt).
	Head core.Message
	// Since is when the head first failed in a row; Until is when the
	// suspension ends (the past once the batch is out again).
	Since, Until time.Time
}

// failingHead tracks a queue's failing head between orderly results. It
// is written by processOrderlyResult and read by Suspensions.
type failingHead struct {
	mu    sync.Mutex
	head  *core.Message // nil: the head is not failing
	since time.Time
	until time.Time
}

// note records one orderly result: head failed and the queue is suspended
// until until, or (head nil) the head succeeded or left the queue.
func (f *failingHead) note(head *core.Message, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if head == nil {
		f.head = nil
		return
	}
	if f.head == nil || f.head.QueueOffset != head.QueueOffset {
		f.since = time.Now()
	}
	f.head, f.until = head, until
}

func (f *failingHead) get() (core.Message, time.Time, time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.head == nil {
		return core.Message{}, time.Time{}, time.Time{}, false
	}
	return *f.head, f.since, f.until, true
}

// Suspensions lists the client's orderly queues whose head message is
// failing (consumed again after a suspension), in no particular order.
func (c *PushConsumer) Suspensions() []Suspension {
	c.mu.Lock()
	prs := make([]*pullRequest, 0, len(c.table))
	for _, pr := range c.table {
		if pr.orderly {
			prs = append(prs, pr)
		}
	}
	c.mu.Unlock()
	var out []Suspension
	for _, pr := range prs {
		if pr.pq.Dropped() {
			continue
		}
		if h, since, until, ok := pr.failing.get(); ok {
			out = append(out, Suspension{Queue: pr.mq, Head: h, Since: since, Until: until})
		}
	}
	return out
}
