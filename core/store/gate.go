package store

import (
	"sync"
	"sync/atomic"
)

// gateTable hides from readers what the writer committed to bbolt but the
// log-ahead has not yet synced. The writer commits group N+1 while the
// syncer is still syncing group N's record (writer.go), so for that
// moment bbolt holds appends a power cut could take back; a queue's max
// offset as View reads it stops at what is durable, so no consumer is
// handed such a message.
type gateTable struct {
	n  atomic.Int32 // len(m): readers skip the lock when nothing is pending
	mu sync.RWMutex
	m  map[qref]*gate
}

// commitLogGate is the gate of the commit log itself (no topic has uid
// 0): look-ups by message id or key, which reach records without a
// queue, stop at its durable end.
var commitLogGate = qref{uid: 0, qid: -1}

// gate is one queue's durable max while appends to it are pending.
type gate struct {
	durable int64
	pending int // groups appending to it committed but not yet synced
}

// qmark is how a group moved a queue's max.
type qmark struct {
	ref      qref
	from, to int64
}

// hold closes the gates of a group's queues before bbolt commits it.
func (g *gateTable) hold(marks []qmark) {
	if len(marks) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[qref]*gate{}
	}
	for _, m := range marks {
		if e := g.m[m.ref]; e != nil {
			e.pending++
		} else {
			g.m[m.ref] = &gate{durable: m.from, pending: 1}
		}
	}
	g.n.Store(int32(len(g.m)))
}

// release opens them once the group is durable (durable false: the group
// did not commit, the queue stays where it was).
func (g *gateTable) release(marks []qmark, durable bool) {
	if len(marks) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range marks {
		e := g.m[m.ref]
		if e == nil {
			continue
		}
		if durable {
			e.durable = m.to
		}
		if e.pending--; e.pending == 0 {
			delete(g.m, m.ref)
		}
	}
	g.n.Store(int32(len(g.m)))
}

// clamp returns max, or the queue's durable max while appends are pending.
func (g *gateTable) clamp(ref qref, max int64) int64 {
	if g == nil || g.n.Load() == 0 {
		return max
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if e := g.m[ref]; e != nil && e.durable < max {
		return e.durable
	}
	return max
}
