package gateway

import (
	"context"
	"reflect"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// Following the registry: each change to a group starts, updates or stops
// its push-consumer clients (pull groups here, push groups in push.go), and
// idle BROADCASTING clients are shut down after BroadcastIdleTimeout.

// run follows registry changes and expires idle BROADCASTING clients with
// one timer re-armed to the next idle deadline.
func (e *Embedded) run(changes <-chan string) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var fire <-chan time.Time
		if next := e.nextIdle(); !next.IsZero() {
			timer.Reset(time.Until(next))
			fire = timer.C
		}
		select {
		case name, ok := <-changes:
			if !ok {
				changes = nil
				break
			}
			e.reconcile(name)
		case req := <-e.syncs:
			e.reconcile(req.name)
			close(req.done)
		case <-fire:
			e.expireIdle(time.Now())
		case <-e.kick:
		case <-e.stop:
			timer.Stop()
			return
		}
		timer.Stop()
	}
}

// reconcile brings a group's clients in line with its stored config.
func (e *Embedded) reconcile(name string) {
	g, err := e.opts.Groups.Get(name)
	if err != nil && core.ErrorCode(err) != core.ENotFound {
		e.log.Error().Err(err).Str("group", name).Msg("gateway: read group")
		return
	}
	e.reconcileWith(name, g, err)
}

// reconcileWith applies g (or its absence, getErr) to both kinds of
// group. A group moving between pull and push has its old client stopped
// before the new one starts: both would use the instance id as client id.
func (e *Embedded) reconcileWith(name string, g core.Group, getErr error) {
	// The timeline follows the group, once its old clients are stopped
	// (they record nothing after): forgotten when it is gone, started
	// afresh for a new incarnation.
	if getErr != nil {
		defer e.opts.Timeline.Forget(name)
	} else {
		defer e.opts.Timeline.Bind(name, g.Incarnation)
	}
	// So do its skip and park rules (the registry dropped the stored parks
	// with the group).
	e.mu.Lock()
	prev, seen := e.incarnations[name]
	if getErr != nil {
		delete(e.incarnations, name)
	} else {
		e.incarnations[name] = g.Incarnation
	}
	e.mu.Unlock()
	if seen && (getErr != nil || prev != g.Incarnation) {
		defer e.parks.forget(name)
	}
	// A paused push group runs no client and no pusher (pause.go).
	push := getErr == nil && g.Push != nil && !g.Paused
	if !push {
		e.stopPush(name)
	}
	e.reconcilePull(name, g, getErr)
	if push {
		e.reconcilePush(name, g)
	}
}

// reconcilePull starts, updates or stops a pull group's clients; a push
// group counts as gone here.
func (e *Embedded) reconcilePull(name string, g core.Group, getErr error) {
	var stopping []*clientRT
	var updates []PushClient
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	rt := e.groups[name]
	if rt != nil && getErr == nil {
		rt.setPausedLocked(g.Paused) // before any client below is made
	}
	switch {
	case getErr != nil || g.Push != nil:
		// Deleted, or a webhook group (reconcilePush runs it): stop the
		// pull clients; their inboxes' unanswered deliveries are abandoned
		// by Shutdown and delivered again from the committed offset.
		if rt != nil {
			stopping = rt.detachAll()
			delete(e.groups, name)
		}
	case rt == nil:
		rt = &groupRT{cfg: g.GroupConfig, clients: map[string]*clientRT{}, paused: g.Paused}
		e.groups[name] = rt
		if rt.cfg.MessageModel != core.Broadcasting {
			if _, err := e.clientLocked(rt, ""); err != nil {
				e.log.Error().Err(err).Str("group", name).Msg("gateway: start client")
			}
		}
	case !reflect.DeepEqual(rt.cfg, g.GroupConfig):
		old := rt.cfg
		rt.cfg = g.GroupConfig
		if old.MessageModel != rt.cfg.MessageModel || old.ConsumeMode != rt.cfg.ConsumeMode || old.Incarnation != rt.cfg.Incarnation {
			// What the inboxes hold was dispatched under the old mode, or
			// for a deleted namesake of the group: start over with fresh
			// clients (offsets are kept; a new incarnation has its own).
			stopping = rt.detachAll()
			if rt.cfg.MessageModel != core.Broadcasting {
				if _, err := e.clientLocked(rt, ""); err != nil {
					e.log.Error().Err(err).Str("group", name).Msg("gateway: start client")
				}
			}
		} else {
			for _, c := range rt.clients {
				updates = append(updates, c.pc)
			}
		}
	}
	cfg := g.GroupConfig
	e.mu.Unlock()
	for _, pc := range updates {
		pc.UpdateConfig(cfg)
	}
	for _, c := range stopping {
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.ClientShutdownTimeout)
		if err := e.stopClient(ctx, c); err != nil {
			e.log.Error().Err(err).Str("group", name).Msg("gateway: stop client")
		}
		cancel()
	}
}

func (rt *groupRT) detachAll() []*clientRT {
	var out []*clientRT
	for id, c := range rt.clients {
		out = append(out, c)
		delete(rt.clients, id)
	}
	return out
}

// groupLocked returns the running group, starting it if the registry has
// it and the watch has not caught up yet.
func (e *Embedded) groupLocked(name string) (*groupRT, error) {
	if rt := e.groups[name]; rt != nil {
		return rt, nil
	}
	g, err := e.opts.Groups.Get(name)
	if err != nil {
		return nil, err
	}
	if g.Push != nil || e.pushes[name] != nil {
		return nil, core.Errorf(core.EConflict, "group %q is a push (webhook) group: it cannot be received from", name)
	}
	rt := &groupRT{cfg: g.GroupConfig, clients: map[string]*clientRT{}, paused: g.Paused}
	e.groups[name] = rt
	return rt, nil
}

// clientLocked returns the group's client for consumerID, creating and
// starting it if needed.
func (e *Embedded) clientLocked(rt *groupRT, consumerID string) (*clientRT, error) {
	if c := rt.clients[consumerID]; c != nil {
		return c, nil
	}
	clientID := e.opts.InstanceID
	if consumerID != "" {
		clientID = consumerID
	}
	box := newInbox(rt.cfg.Name, clientID, e.leases)
	box.paused = rt.paused
	if rt.cfg.ConsumeMode == core.Orderly {
		key := rt.cfg.Name
		if consumerID != "" {
			key = broadcastRulesKey(key, consumerID) // skips only (blocked.go)
		}
		box.rules, box.persist = e.parks.rules(key), e.saveParks
	}
	pc, err := e.opts.NewClient(consumer.Options{
		Group:    rt.cfg,
		ClientID: clientID,
		Listener: box,
		Logger:   e.log,
		// The lease is the consume timeout (SPEC §8.11): its clock starts
		// at receive, and its expiry is the only way a received message
		// goes back unanswered. A message waiting in the inbox ages
		// nothing, so the consumer's cleanExpireMsg is off.
		ConsumeTimeout: listenerOwnsTiming,
	})
	if err != nil {
		return nil, err
	}
	if err := pc.Start(); err != nil {
		return nil, err
	}
	c := &clientRT{consumerID: consumerID, box: box, pc: pc, lastUsed: time.Now()}
	rt.clients[consumerID] = c
	return c, nil
}

func (e *Embedded) stopClient(ctx context.Context, c *clientRT) error {
	c.box.close()
	return c.pc.Shutdown(ctx)
}

// nextIdle is the earliest moment an idle client gets its prefetch
// window lowered (IdlePrefetchAfter) or, BROADCASTING, expires.
func (e *Embedded) nextIdle() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	var next time.Time
	at := func(d time.Time) {
		if next.IsZero() || d.Before(next) {
			next = d
		}
	}
	for _, rt := range e.groups {
		for _, c := range rt.clients {
			if c.active > 0 {
				continue
			}
			if !c.idle {
				at(c.lastUsed.Add(e.opts.IdlePrefetchAfter))
			}
			if rt.cfg.MessageModel == core.Broadcasting {
				at(c.lastUsed.Add(e.opts.BroadcastIdleTimeout))
			}
		}
	}
	return next
}

// expireIdle lowers the prefetch window of clients idle for
// IdlePrefetchAfter (the consumer gives back what it cached beyond it) and
// stops BROADCASTING clients idle for BroadcastIdleTimeout.
func (e *Embedded) expireIdle(now time.Time) {
	var idle []*clientRT
	e.mu.Lock()
	for _, rt := range e.groups {
		for id, c := range rt.clients {
			if c.active > 0 {
				continue
			}
			if rt.cfg.MessageModel == core.Broadcasting && !now.Before(c.lastUsed.Add(e.opts.BroadcastIdleTimeout)) {
				idle = append(idle, c)
				delete(rt.clients, id)
				continue
			}
			if !c.idle && !now.Before(c.lastUsed.Add(e.opts.IdlePrefetchAfter)) {
				// Under e.mu, so a receive's SetPrefetch(0) cannot
				// overtake it; SetPrefetch never blocks or calls back.
				c.idle = true
				c.pc.SetPrefetch(e.opts.IdlePrefetch)
			}
		}
	}
	e.mu.Unlock()
	for _, c := range idle {
		ctx, cancel := context.WithTimeout(context.Background(), e.opts.ClientShutdownTimeout)
		if err := e.stopClient(ctx, c); err != nil {
			e.log.Error().Err(err).Str("consumerId", c.consumerID).Msg("gateway: stop idle client")
		}
		cancel()
	}
}
