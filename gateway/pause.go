package gateway

import (
	"context"

	"github.com/mqgate/mqgate/core"
)

// Paused groups (core.Group.Paused; API.md "Pause"). A paused pull group
// keeps its clients, leases and buffers: its inboxes hand nothing out, so
// receives wait out their waitSeconds and answer empty (Diagnose: PAUSED),
// while acks, nacks, extends and lease expiries of what was received
// before go on as usual; resume wakes the parked receives. A paused push
// group has its client and pusher stopped as if its push block were
// removed (requests in flight are aborted; what was not acknowledged is
// delivered again from the committed offsets on resume), and started
// again on resume. The flag lives in the group's stored config, so a
// pause survives restarts; the gateway follows it like any group change,
// and SyncGroup lets the pause action answer only once it applies here.

// syncReq asks the run loop to reconcile one group now.
type syncReq struct {
	name string
	done chan struct{}
}

// SyncGroup reconciles group with its stored config on the run loop and
// returns once that is done (the pause and resume actions answer after
// it: a receive or push after the answer sees the new state).
func (e *Embedded) SyncGroup(ctx context.Context, group string) error {
	req := syncReq{name: group, done: make(chan struct{})}
	select {
	case e.syncs <- req:
	case <-e.stop:
		return core.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-req.done:
		return nil
	case <-e.stop:
		return core.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// setPausedLocked applies a pause or resume to a running pull group and
// its clients' inboxes (e.mu held; inbox.mu is taken after it).
func (rt *groupRT) setPausedLocked(paused bool) {
	if rt.paused == paused {
		return
	}
	rt.paused = paused
	for _, c := range rt.clients {
		c.box.setPaused(paused)
	}
}

// setPaused stops (or, false, resumes) handing messages out; a resume
// wakes a parked receive if something is takeable (it wakes the next).
func (b *inbox) setPaused(paused bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.paused = paused
	if !paused && b.anyTakeableLocked() {
		b.wakeLocked()
	}
}

// paused reports whether group is paused here (a pull group's runtime
// state, else the stored flag).
func (e *Embedded) paused(group string) bool {
	e.mu.Lock()
	rt := e.groups[group]
	p := rt != nil && rt.paused
	e.mu.Unlock()
	if rt != nil {
		return p
	}
	g, err := e.opts.Groups.Get(group)
	return err == nil && g.Paused
}
