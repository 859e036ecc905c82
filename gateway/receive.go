package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/mqgate/mqgate/core"
)

// The Service side of Embedded: long-poll receives over the clients'
// inboxes, ack / nack / extend through the lease table, and group status.

// Receive implements core.ConsumeService.
func (e *Embedded) Receive(ctx context.Context, group string, req core.ReceiveRequest) ([]core.Received, error) {
	if err := req.Validate(); err != nil { // the receive limits, core/limits.go
		return nil, err
	}

	e.mu.Lock()
	if e.draining {
		e.mu.Unlock()
		return nil, core.ErrClosed
	}
	rt, err := e.groupLocked(group)
	if err != nil {
		e.mu.Unlock()
		return nil, err
	}
	consumerID := ""
	if rt.cfg.MessageModel == core.Broadcasting {
		if req.ConsumerID == "" { // its syntax: ReceiveRequest.Validate
			e.mu.Unlock()
			return nil, core.FieldError("consumerId", "is required for a BROADCASTING group")
		}
		consumerID = req.ConsumerID
	}
	fresh := rt.clients[consumerID] == nil
	c, err := e.clientLocked(rt, consumerID)
	if err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("gateway: start client of group %q: %w", group, err)
	}
	// A receiver is back: the full prefetch window again; the idle timer
	// (reconcile.go) is re-armed for this client.
	wasIdle := c.idle
	if wasIdle {
		c.idle = false
		c.pc.SetPrefetch(0)
	}
	parks := req.Wait > 0
	if parks {
		if rt.waiting >= e.opts.MaxWaitingPerGroup || e.waiting >= e.opts.MaxWaiting {
			e.mu.Unlock()
			return nil, core.Errorf(core.ETooMany, "too many waiting receives; retry later")
		}
		rt.waiting++
		e.waiting++
	}
	c.active++
	invisible := req.Invisible
	if invisible == 0 {
		invisible = time.Duration(rt.cfg.InvisibleSeconds) * time.Second
	}
	if invisible <= 0 {
		invisible = core.DefaultInvisibleSeconds * time.Second
	}
	e.mu.Unlock()

	items, err := c.box.receive(ctx, req.MaxMessages, req.Wait, e.drain)

	e.mu.Lock()
	if parks {
		rt.waiting--
		e.waiting--
	}
	c.active--
	c.lastUsed = time.Now()
	idle := c.active == 0 && (consumerID != "" || wasIdle || fresh)
	e.mu.Unlock()
	if idle {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
	if err != nil {
		return nil, err
	}
	return e.leases.grant(c.box, consumerID, items, time.Now().Add(invisible)), nil
}

// Ack implements core.ConsumeService.
func (e *Embedded) Ack(ctx context.Context, group string, handles []string) ([]core.HandleResult, error) {
	return e.apply(group, handles, opAck, 0, "", 0)
}

// Extend implements core.ConsumeService.
func (e *Embedded) Extend(ctx context.Context, group string, handles []string, invisible time.Duration) ([]core.HandleResult, error) {
	if err := core.ValidateLease(invisible); err != nil {
		return nil, err
	}
	return e.apply(group, handles, opExtend, 0, "", invisible)
}

func (e *Embedded) apply(group string, handles []string, o op, level int, reason string, invisible time.Duration) ([]core.HandleResult, error) {
	if err := core.ValidateHandles(handles); err != nil {
		return nil, err
	}
	if err := e.exists(group); err != nil {
		return nil, err
	}
	now := time.Now()
	e.leases.answering.RLock()
	defer e.leases.answering.RUnlock()
	var callStack [4]call
	res, calls := e.leases.apply(group, handles, o, level, reason, now.Add(invisible), now, callStack[:0])
	runCalls(calls)
	return res, nil
}

func (e *Embedded) exists(group string) error {
	e.mu.Lock()
	_, ok := e.groups[group]
	e.mu.Unlock()
	if ok {
		return nil
	}
	_, err := e.opts.Groups.Get(group)
	return err
}

// GroupStatus implements core.ConsumeService.
func (e *Embedded) GroupStatus(ctx context.Context, group string) (core.GroupStatus, error) {
	if err := e.exists(group); err != nil {
		return core.GroupStatus{}, err
	}
	st := core.GroupStatus{Group: group}
	if e.pushStatus(group, &st) {
		return st, nil
	}
	type named struct {
		id string
		c  *clientRT
	}
	var cs []named
	e.mu.Lock()
	if rt := e.groups[group]; rt != nil {
		st.Waiting = rt.waiting
		for id, c := range rt.clients {
			if id == "" {
				id = e.opts.InstanceID
			}
			cs = append(cs, named{id, c})
		}
	}
	e.mu.Unlock()
	for _, n := range cs {
		counts := n.c.box.counts()
		cst := core.ClientStatus{ClientID: n.id}
		for _, q := range n.c.pc.Status() {
			k := counts[q.Queue]
			cst.Queues = append(cst.Queues, core.QueueStatus{
				Queue: q.Queue, Position: q.ConsumedOffset, Held: q.Cached,
				Buffered: k[0], InFlight: k[1], Exclusive: q.Locked,
			})
		}
		st.Clients = append(st.Clients, cst)
	}
	sortClients(st.Clients)
	return st, nil
}

// GroupStatusWaiting returns how many receives are parked on group.
func (e *Embedded) GroupStatusWaiting(group string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rt := e.groups[group]; rt != nil {
		return rt.waiting
	}
	return 0
}
