package consumer

import (
	"context"
	"sync"

	"github.com/mqgate/mqgate/core"
)

// DropListener is a Listener that voids what it holds of a dropped
// ProcessQueue (the HTTP gateway: buffered messages are purged, their
// receipt handles answer expired). The consumer tells it, after the drop,
// with no lock held; it must not block.
//
// For such a listener the consumer does not wait for the answers of an
// ORDERLY batch still out when its queue is dropped: the batch is released
// at once (the acknowledged prefix is committed, the rest counts as not
// consumed — no failure, no send-back) and the queue's lock is handed on.
// Other listeners (the webhook pusher) keep the lock until the batch is
// answered, so two clients never consume one orderly queue at once.
type DropListener interface {
	Listener
	// QueueDropped says that a ProcessQueue of mq was dropped: every
	// Delivery of it now reports Dropped. Deliveries of a ProcessQueue of
	// the same queue made afterwards (an offset reset re-creates it at
	// once) do not.
	QueueDropped(mq core.MessageQueue)
}

// revokeLocked queues pr for notifyDropped (c.mu held, pr just dropped).
func (c *PushConsumer) revokeLocked(pr *pullRequest) {
	if _, ok := c.opts.Listener.(DropListener); ok {
		c.revoked = append(c.revoked, pr)
	}
}

// revokedLocked reports whether mq was dropped keeping late answers and
// the DropListener was not told yet (c.mu held).
func (c *PushConsumer) revokedLocked(mq core.MessageQueue) bool {
	for _, pr := range c.revoked {
		if pr.mq != mq {
			continue
		}
		// A drop for an offset reset keeps no late answer (settleLate):
		// the queue is taken on again at once, from the reset.
		pr.mu.Lock()
		noCommit := pr.noCommit
		pr.mu.Unlock()
		if !noCommit {
			return true
		}
	}
	return false
}

// notifyDropped tells a DropListener about the queues dropped since the
// last call and releases their orderly batches still out. It runs on the
// service goroutine after a rebalance, with no lock held.
func (c *PushConsumer) notifyDropped() {
	c.mu.Lock()
	prs := c.revoked
	c.revoked = nil
	c.mu.Unlock()
	if len(prs) == 0 {
		return
	}
	dl := c.opts.Listener.(DropListener)
	for _, pr := range prs {
		dl.QueueDropped(pr.mq)
	}
	// Queues dropped and still wanted were left for the next pass.
	signal(c.kick)
	for _, pr := range prs {
		if !pr.orderly {
			continue // concurrently: answers of a dropped queue are ignored
		}
		pr.mu.Lock()
		st := pr.current
		draining := pr.draining
		pr.mu.Unlock()
		if st != nil && draining {
			st.release() // the draining path commits, unlocks and rebalances
		}
	}
}

// rebalanceCount numbers rebalances so that RebalanceWait can wait for one
// that started after it was called. Rebalances run one at a time (Start,
// then the service goroutine).
type rebalanceCount struct {
	mu       sync.Mutex
	started  uint64
	finished uint64        // the number of the last finished one
	changed  chan struct{} // closed when finished moves; replaced then
}

func (c *PushConsumer) rebalanceBegin() uint64 {
	c.rb.mu.Lock()
	defer c.rb.mu.Unlock()
	c.rb.started++
	return c.rb.started
}

// rebalanceEnd tells the listener about dropped queues, then records
// rebalance n as finished.
func (c *PushConsumer) rebalanceEnd(n uint64) {
	c.notifyDropped()
	c.rb.mu.Lock()
	c.rb.finished = n
	if c.rb.changed != nil {
		close(c.rb.changed)
		c.rb.changed = nil
	}
	c.rb.mu.Unlock()
}

// RebalanceWait asks for a rebalance now and waits until one that started
// after the call has finished — its drops done and a DropListener told —
// or ctx ends, or the client shuts down. The gateway calls it after an
// offset reset so that the reset's answer comes after the old
// ProcessQueues are gone.
func (c *PushConsumer) RebalanceWait(ctx context.Context) error {
	c.rb.mu.Lock()
	target := c.rb.started
	c.rb.mu.Unlock()
	signal(c.kick)
	for {
		c.rb.mu.Lock()
		if c.rb.finished > target {
			c.rb.mu.Unlock()
			return nil
		}
		if c.rb.changed == nil {
			c.rb.changed = make(chan struct{})
		}
		ch := c.rb.changed
		c.rb.mu.Unlock()
		select {
		case <-ch:
		case <-c.done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
