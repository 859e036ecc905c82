package gateway

import (
	"slices"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// suspender is the optional part of PushClient that reports failing
// ORDERLY heads (*consumer.PushConsumer implements it).
type suspender interface {
	Suspensions() []consumer.Suspension
}

// Diagnose explains why a receive of group (consumerID for BROADCASTING)
// would come back empty now. Unknown group: ENotFound. It never starts a
// client. Cost: one pass over the service's live leases and the client's
// orderly queues — only empty receives pay it.
func (e *Embedded) Diagnose(group, consumerID string) (core.Diagnosis, error) {
	held, earliest, err := e.held(group, consumerID)
	if err != nil {
		return core.Diagnosis{}, err
	}
	if e.paused(group) {
		return core.Diagnosis{Reason: core.EmptyPaused}, nil
	}
	held = slices.DeleteFunc(held, func(h core.HeldQueue) bool { return h.Buffered })
	if len(held) > 0 {
		d := core.Diagnosis{Reason: core.EmptyKeysBlocked, Blocked: held}
		for _, h := range held {
			if !h.Until.IsZero() && (d.NextVisibleAt.IsZero() || h.Until.Before(d.NextVisibleAt)) {
				d.NextVisibleAt = h.Until
			}
		}
		return d, nil
	}
	if !earliest.IsZero() {
		return core.Diagnosis{Reason: core.EmptyNotVisibleYet, NextVisibleAt: earliest}, nil
	}
	return core.Diagnosis{Reason: core.EmptyNoMessages}, nil
}

// HeldQueues lists group's ORDERLY queues held back by their head, by
// topic and queue id (consumerID for BROADCASTING).
func (e *Embedded) HeldQueues(group, consumerID string) ([]core.HeldQueue, error) {
	held, _, err := e.held(group, consumerID)
	return held, err
}

// held returns the held ORDERLY queues of the client and the earliest
// deadline of any of its leases (zero: none).
func (e *Embedded) held(group, consumerID string) ([]core.HeldQueue, time.Time, error) {
	if err := e.exists(group); err != nil {
		return nil, time.Time{}, err
	}
	e.mu.Lock()
	rt := e.groups[group]
	var c *clientRT
	orderly := false
	if rt != nil {
		if rt.cfg.MessageModel != core.Broadcasting {
			consumerID = ""
		}
		c = rt.clients[consumerID]
		orderly = rt.cfg.ConsumeMode == core.Orderly
	}
	e.mu.Unlock()
	if c == nil {
		return nil, time.Time{}, nil
	}

	byQueue := map[core.MessageQueue]*core.HeldQueue{}
	var earliest time.Time
	t := e.leases
	t.mu.Lock()
	c.box.mu.Lock()
	for _, l := range t.h {
		if l.box != c.box || l.dl == nil {
			continue
		}
		if earliest.IsZero() || l.deadline.Before(earliest) {
			earliest = l.deadline
		}
		if !orderly || !l.dl.orderly {
			continue
		}
		m := l.dl.msgs[l.i]
		h := byQueue[l.dl.mq]
		if h == nil || m.QueueOffset < h.Head.QueueOffset {
			byQueue[l.dl.mq] = &core.HeldQueue{Queue: l.dl.mq, Head: *m, Until: l.deadline, InFlight: true}
		}
	}
	if orderly {
		// A failed head back from its suspension, waiting for a receive:
		// takeable, but the queue is still blocked on it.
		for _, q := range c.box.order {
			if byQueue[q.mq] == nil && len(q.items) > 0 && q.items[0].dl.orderly {
				if m := q.items[0].msg(); m.ReconsumeTimes > 0 {
					byQueue[q.mq] = &core.HeldQueue{Queue: q.mq, Head: *m, Buffered: true}
				}
			}
		}
	}
	c.box.mu.Unlock()
	t.mu.Unlock()

	if s, ok := c.pc.(suspender); ok && orderly {
		for _, sp := range s.Suspensions() {
			h := byQueue[sp.Queue]
			switch {
			case h == nil:
				// Not out: suspended, or just dispatched and not yet
				// received (then its suspension is over and it is
				// takeable: leave it out).
				if sp.Until.After(time.Now()) {
					byQueue[sp.Queue] = &core.HeldQueue{Queue: sp.Queue, Head: sp.Head, Since: sp.Since, Until: sp.Until}
				}
			case h.Head.QueueOffset == sp.Head.QueueOffset:
				h.Since = sp.Since // out again after failing
			}
		}
	}
	out := make([]core.HeldQueue, 0, len(byQueue))
	for _, h := range byQueue {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b core.HeldQueue) int {
		if a.Queue.Less(b.Queue) {
			return -1
		}
		if b.Queue.Less(a.Queue) {
			return 1
		}
		return 0
	})
	return out, earliest, nil
}
