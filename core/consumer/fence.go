package consumer

import (
	"math"
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Growth fences (ORDERLY only; SPEC §8 item 8).
//
// Growing a topic from N to M queues moves sharding keys: a key that hashed
// to queue 0 may hash to queue 4 afterwards. The engine records each growth
// as a core.TopicLayout: N and, per old queue q, fence[q] = its max offset
// when the growth committed. A message at (q, o) belongs to the first
// growth whose fence it is below (core.LayoutOf), or to the current layout.
//
// Rule: the pull goroutine of an ORDERLY queue reads (and so dispatches) no
// message of layout k > 0 until the group has consumed every old queue
// q' < layouts[k-1].Queues up to layouts[k-1].Fence[q'] — which, fences
// only growing, covers every earlier layout too. Its reads stop at its own
// queue's fence of the current layout (the next layout's first offset).
// CONCURRENTLY groups ignore fences.
//
// "Consumed" is this client's in-memory offset for a queue it owns, else
// the group's committed offset (consumerID: per consumer for
// BROADCASTING), raised to the queue's min offset (retention removed what
// is below). A held pull waits without polling: progress is closed when an
// orderly result, a pull's offset correction or a rebalance moves an
// offset. When the missing progress is on a queue this client does not own
// (another client's, committed every PersistInterval), it also re-checks
// every PersistInterval.

// noFence is the read bound of a queue in the current layout.
const noFence = math.MaxInt64

// offsetProgress wakes pulls held at a fence when an offset moves: a
// channel closed, and replaced lazily, on every move. The zero value is
// ready.
type offsetProgress struct {
	mu sync.Mutex // leaf
	ch chan struct{}
}

// wait returns a channel closed at the next move; take it before checking
// the condition so a move in between is not missed.
func (p *offsetProgress) wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return p.ch
}

// moved wakes every waiter.
func (p *offsetProgress) moved() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
}

// fenceGate decides whether pr may read at pr.nextOffset. bound is the
// first offset it must not read in this pass (noFence: none). When open is
// false the pull waits for wake, and for recheck when that is > 0.
func (c *PushConsumer) fenceGate(pr *pullRequest) (bound int64, open bool, wake <-chan struct{}, recheck time.Duration) {
	q := pr.mq.QueueID
	k := core.LayoutOf(pr.layouts, q, pr.nextOffset)
	bound = noFence
	if k < len(pr.layouts) {
		bound = pr.layouts[k].Fence[q]
	}
	if k == 0 {
		return bound, true, nil, 0
	}
	// Our own queue: with nothing cached, everything before nextOffset is
	// consumed or filtered out (correctTagsOffset). Record it, or a queue
	// whose old layout ends in filtered messages would never reach its
	// fence: the read that would notice is the one held here.
	if pr.pq.Empty() {
		if cur, ok := c.offsets.read(pr.mq); ok && cur < pr.nextOffset {
			c.offsets.update(pr.mq, pr.nextOffset, true)
			c.progress.moved()
		}
	}
	wake = c.progress.wait()
	prev := pr.layouts[k-1]
	for q2 := range prev.Queues {
		fence := prev.Fence[q2]
		if fence <= 0 {
			continue
		}
		mq := core.MessageQueue{Topic: pr.mq.Topic, QueueID: q2}
		done, owned := c.consumedOffset(mq, fence)
		if done >= fence {
			continue
		}
		if !owned {
			recheck = c.opts.PersistInterval
		}
		return bound, false, wake, recheck
	}
	return bound, true, nil, 0
}

// consumedOffset is how far the group has consumed mq as far as this
// client knows: its in-memory offset if it owns mq (owned), else the
// committed one; either raised to mq's min offset. It reads the store only
// while the answer is below fence.
func (c *PushConsumer) consumedOffset(mq core.MessageQueue, fence int64) (done int64, owned bool) {
	done, owned = c.offsets.read(mq)
	if done >= fence {
		return done, owned
	}
	if !owned {
		c.mu.Lock()
		cid := c.consumerID
		c.mu.Unlock()
		off, ok, err := c.deps.Coordinator.CommittedOffset(c.group, cid, mq)
		if err == nil && ok {
			done = off
		} else {
			done = 0
		}
	}
	if done < fence {
		if minOff, _, err := c.deps.Reader.QueueOffsets(mq); err == nil && minOff > done {
			done = minOff
		}
	}
	return done, owned
}

// fitFence cuts a read of pr at bound (fenceGate's): messages at or past
// it belong to a later layout, which must pass the gate first; NextOffset
// stops there so they are read again.
func fitFence(res *core.GetResult, bound int64) {
	if bound == noFence || (res.Status != core.Found && res.Status != core.NoMatchedMsg) {
		return
	}
	n := 0
	for n < len(res.Messages) && res.Messages[n].QueueOffset < bound {
		n++
	}
	res.Messages = res.Messages[:n]
	if res.NextOffset > bound {
		res.NextOffset = bound
	}
	if n == 0 {
		res.Status = core.NoMatchedMsg
	}
}

// refreshLayouts re-reads pr's topic after a read reported more growths
// than pr knows. false: the topic is gone or another incarnation (the pull
// waits for rebalance).
func (c *PushConsumer) refreshLayouts(pr *pullRequest) bool {
	t, err := c.deps.Reader.Topic(pr.mq.Topic)
	if err != nil || t.UID != pr.uid.Load() {
		return false
	}
	pr.layouts = t.Layouts
	return true
}
