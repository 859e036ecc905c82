package gateway

import (
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// Message timelines (API.md "Timeline"): what happened to a message in a
// group, from a bounded in-memory ring per group plus what the store
// keeps (the API adds PUBLISHED from the message's bornAt).
//
// Retention: the last TimelineRingSize events of each group (`mqgate serve
// --timeline-events`; all messages of the group share the ring), lost on
// restart; nothing goes to disk. Memory: a ring grows with its events up
// to its size in 120-byte slots (~480 KiB a group at 4096), plus the nack
// reasons the slots hold (at most core.MaxReasonLength characters each);
// a deleted group's ring is dropped with it (Forget, when the gateway stops
// its clients), and a group created again starts with an empty one. Cost: recording is one
// short critical section writing a fixed-size slot (no allocation: the id
// and consumer id strings are shared with the message and the lease); a
// lookup scans the group's ring. A redrive job records one REDRIVEN a
// message it moves, so a large job pushes older history out.

// TimelineRingSize is how many events each group's ring keeps.
const TimelineRingSize = 4096

// Timeline holds every group's ring. The zero value is not usable: use
// NewTimeline. A nil *Timeline records nothing.
type Timeline struct {
	mu     sync.Mutex // a leaf lock: taken after any gateway lock
	size   int
	groups map[string]*ring
}

type ring struct {
	ev   []core.Event
	next int // slot of the next event
	full bool
	inc  uint64 // the group incarnation the events belong to (0: not bound yet)
}

// NewTimeline returns rings of size events per group (TimelineRingSize
// when size <= 0).
func NewTimeline(size int) *Timeline {
	if size <= 0 {
		size = TimelineRingSize
	}
	return &Timeline{size: size, groups: map[string]*ring{}}
}

// Record adds one event of group.
func (t *Timeline) Record(group string, ev core.Event) {
	t.RecordAll(group, []core.Event{ev})
}

// RecordAll adds events of group, in order, under one lock; those
// without a time get one reading of the clock.
func (t *Timeline) RecordAll(group string, evs []core.Event) {
	if t == nil || len(evs) == 0 {
		return
	}
	now := time.Now()
	t.mu.Lock()
	r := t.groups[group]
	if r == nil {
		r = &ring{}
		t.groups[group] = r
	}
	for _, ev := range evs {
		if ev.At.IsZero() {
			ev.At = now
		}
		if !r.full && len(r.ev) < t.size {
			r.ev = append(r.ev, ev) // grows to size, then wraps
		} else {
			r.ev[r.next] = ev
		}
		r.next++
		if r.next == t.size {
			r.next, r.full = 0, true
		}
	}
	t.mu.Unlock()
}

// Events returns the events of message id in group, oldest first.
func (t *Timeline) Events(group, id string) []core.Event {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.groups[group]
	if r == nil {
		return nil
	}
	var out []core.Event
	start, n := 0, r.next
	if r.full {
		start, n = r.next, len(r.ev)
	}
	for k := range n {
		if e := r.ev[(start+k)%len(r.ev)]; e.MessageID == id {
			out = append(out, e)
		}
	}
	return out
}

// Bind ties group's ring to incarnation: a ring of another incarnation
// holds a deleted namesake's events and is dropped (a delete and a create
// can reach the gateway as one change).
func (t *Timeline) Bind(group string, incarnation uint64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.groups[group]
	switch {
	case r == nil:
		t.groups[group] = &ring{inc: incarnation}
	case r.inc == 0:
		r.inc = incarnation
	case r.inc != incarnation:
		t.groups[group] = &ring{inc: incarnation}
	}
}

// Forget drops group's ring (the group was deleted).
func (t *Timeline) Forget(group string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	delete(t.groups, group)
	t.mu.Unlock()
}

// Timeline returns the gateway's timeline (nil when Options.Timeline is
// unset).
func (e *Embedded) Timeline() *Timeline { return e.opts.Timeline }

// MessageEvents returns what the gateway recorded of message id in group.
func (e *Embedded) MessageEvents(group, id string) []core.Event {
	return e.opts.Timeline.Events(group, id)
}

// RecordEvents records events of group (the API's REDRIVEN).
func (e *Embedded) RecordEvents(group string, evs ...core.Event) {
	for _, ev := range evs {
		e.opts.Timeline.Record(group, ev)
	}
}

// note records an event of lease l (t.mu held, before l ends).
func (t *leaseTable) note(l *lease, typ core.EventType, level int, reason string) {
	if ev, ok := t.event(l, typ, level, reason); ok {
		t.tl.Record(l.box.group, ev)
	}
}

// noteTo is note for a pass over many leases of one group: the event is
// appended to evs, which the pass records (RecordAll) before it releases
// the table's lock, so the events keep their order among all others.
func (t *leaseTable) noteTo(evs []core.Event, l *lease, typ core.EventType, level int, reason string) []core.Event {
	if ev, ok := t.event(l, typ, level, reason); ok {
		evs = append(evs, ev)
	}
	return evs
}

// event is the event of typ for lease l; false when nothing records it.
func (t *leaseTable) event(l *lease, typ core.EventType, level int, reason string) (core.Event, bool) {
	if t.tl == nil || l.dl == nil {
		return core.Event{}, false
	}
	m := l.dl.msgs[l.i]
	ev := core.Event{Type: typ, MessageID: m.UserID(), DelayLevel: level, Reason: reason}
	if typ == core.EventDelivered {
		ev.ConsumerID, ev.Attempt = l.rc.ConsumerID, m.ReconsumeTimes+1
		if ev.ConsumerID == "" {
			ev.ConsumerID = l.box.clientID
		}
	}
	return ev, true
}

// RecordJobRedriven records REDRIVEN by job j for each id (its group's
// ring): engine.Options.JobRedriven.
func (t *Timeline) RecordJobRedriven(j *core.Job, ids []string) {
	if t == nil || j.Group == "" {
		return
	}
	now := time.Now()
	for _, id := range ids {
		t.Record(j.Group, core.Event{At: now, Type: core.EventRedriven, MessageID: id, Job: j.ID})
	}
}

// recordSendBack records a successful send-back: the engine dead-letters
// when reconsumeTimes reached maxReconsumeTimes or the level is -1, and
// otherwise schedules a retry at level (0: 3 + reconsumeTimes).
func (t *Timeline) recordSendBack(group string, m *core.Message, level, maxReconsumeTimes int) {
	if t == nil {
		return
	}
	out := policy.Retry(m.ReconsumeTimes, maxReconsumeTimes, level)
	if out.DeadLetter {
		t.Record(group, core.Event{Type: core.EventDeadLettered, MessageID: m.UserID()})
		return
	}
	t.Record(group, core.Event{Type: core.EventRetryScheduled, MessageID: m.UserID(), DelayLevel: out.Level})
}

func withTimeline(t *leaseTable, tl *Timeline) *leaseTable {
	t.tl = tl
	return t
}
