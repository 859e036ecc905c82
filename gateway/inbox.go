package gateway

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// msgState is where one message of a delivery is in the gateway.
type msgState uint8

const (
	stBuffered msgState = iota // dispatched by the consume service, not yet received
	stHanded                   // taken by a receive (leased, or about to be)
	stAnswered                 // Ack or Nack called (or about to be)
)

// answerer is how a batch is answered: *consumer.Delivery. Dropped (an
// atomic load) may be called with gateway locks held; Ack and Nack not.
type answerer interface {
	Ack(i int)
	Nack(i int, delayLevel int)
	Dropped() bool
}

// delivery is the gateway's bookkeeping for one consumer.Delivery. Fields
// are guarded by the owning inbox's mu.
type delivery struct {
	d       answerer
	mq      core.MessageQueue
	orderly bool
	msgs    []*core.Message
	q       *queueBuf
	state   []msgState
	leases  []*lease // current lease of each handed message
}

// item is one message of a delivery.
type item struct {
	dl *delivery
	i  int
}

func (it item) msg() *core.Message { return it.dl.msgs[it.i] }

// queueBuf holds one queue's dispatched, not yet received messages in
// queue order.
type queueBuf struct {
	mq       core.MessageQueue
	items    []item
	inFlight int    // handed out and not answered
	takenBy  uint64 // the take that last took from this queue (orderly runs)
}

// takeable reports whether take t may take this queue's head: an orderly
// queue gives nothing while an earlier message of it is in flight, except to
// the take that is already handing out a run of it. Messages of a dropped
// ProcessQueue at the head are discarded first (inbox.mu held): they are
// never handed out, whether or not QueueDropped has run yet.
func (q *queueBuf) takeable(t uint64) bool {
	for len(q.items) > 0 && q.items[0].dl.d.Dropped() {
		it := q.items[0]
		it.dl.state[it.i] = stAnswered
		q.items[0] = item{}
		q.items = q.items[1:]
	}
	if len(q.items) == 0 {
		q.items = nil
		return false
	}
	return !q.items[0].dl.orderly || q.inFlight == 0 || q.takenBy == t
}

// revocable is an answerer whose unhanded messages can be given back
// (*consumer.Delivery): Revocable takes no lock, Revoke is called with no
// gateway lock held.
type revocable interface {
	Revocable() bool
	Revoke(i int)
}

// call is one answer to make to a consumer.Delivery once every gateway lock
// is released: the consume service may dispatch the next batch from inside
// Ack / Nack, which calls back into Consume.
type call struct {
	d      answerer
	i      int
	ok     bool
	level  int
	reason string // a nack's reason (nack_reason.go)
	revoke bool   // give the message back (Revoke), not an answer
}

func runCalls(calls []call) {
	for _, c := range calls {
		if c.revoke {
			c.d.(revocable).Revoke(c.i)
			continue
		}
		switch {
		case c.ok:
			c.d.Ack(c.i)
		case c.reason != "":
			nackReason(c.d, c.i, c.level, c.reason)
		default:
			c.d.Nack(c.i, c.level)
		}
	}
}

// waiter is one parked receive. ready gets one token when the receive
// should look again (messages arrived or a queue unblocked, or the inbox
// closed).
type waiter struct {
	ready chan struct{}
}

// inbox is one push-consumer client's listener: the consume services hand it
// deliveries, receives take from it fairly across queues (round-robin, one
// message per queue per pass).
type inbox struct {
	group    string
	clientID string
	leases   *leaseTable // the service's; its mu is taken before mu

	mu      sync.Mutex // guards everything below; taken after leaseTable.mu
	queues  map[core.MessageQueue]*queueBuf
	order   []*queueBuf // round-robin order of every queue seen
	cursor  int
	ticket  uint64
	waiters []*waiter
	closed  bool
	paused  bool        // the group is paused: nothing is taken (pause.go)
	rules   *groupRules // skip and park rules of ORDERLY groups (blocked.go); nil: none
	persist func()      // persists park rules after rules recorded an id
}

var (
	_ consumer.DropListener = (*inbox)(nil)
	_ consumer.Revoker      = (*inbox)(nil)
)

func newInbox(group, clientID string, leases *leaseTable) *inbox {
	return &inbox{group: group, clientID: clientID, leases: leases, queues: map[core.MessageQueue]*queueBuf{}}
}

// Consume buffers a delivery and wakes a parked receive. It never blocks on
// a receiver (consumer.Listener contract).
func (b *inbox) Consume(d *consumer.Delivery) {
	b.consume(d, d.Queue, d.Orderly, d.Msgs)
}

func (b *inbox) consume(d answerer, mq core.MessageQueue, orderly bool, msgs []*core.Message) {
	if len(msgs) == 0 {
		return
	}
	var calls []call
	save := false
	defer func() { // after mu is released
		if save && b.persist != nil {
			b.persist() // parked ids before their dead-letter nacks
		}
		runCalls(calls)
	}()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || d.Dropped() {
		// The client is shutting down, or the ProcessQueue was dropped
		// while this batch was on its way (QueueDropped may have run
		// already): its messages are pulled again by whoever owns the
		// queue next. Checked under mu, so a batch either is refused here
		// or is buffered before QueueDropped purges it.
		return
	}
	q := b.queues[mq]
	if q == nil {
		q = &queueBuf{mq: mq}
		b.queues[mq] = q
		b.order = append(b.order, q)
	}
	dl := &delivery{d: d, mq: mq, orderly: orderly, msgs: msgs, q: q,
		state: make([]msgState, len(msgs)), leases: make([]*lease, len(msgs))}
	for i := range msgs {
		q.items = append(q.items, item{dl: dl, i: i})
	}
	if orderly && b.rules != nil {
		calls, save = b.applyRulesLocked(dl, calls)
	}
	if q.takeable(0) {
		b.wakeLocked()
	}
}

// wakeLocked hands one token to the longest-parked receive.
func (b *inbox) wakeLocked() {
	if len(b.waiters) == 0 {
		return
	}
	w := b.waiters[0]
	b.waiters = b.waiters[1:]
	w.ready <- struct{}{} // cap 1, and a waiter is listed at most once
}

func (b *inbox) removeWaiterLocked(w *waiter) bool {
	if i := slices.Index(b.waiters, w); i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
		return true
	}
	return false
}

func (b *inbox) anyTakeableLocked() bool {
	if b.paused {
		return false
	}
	for _, q := range b.order {
		if q.takeable(0) {
			return true
		}
	}
	return false
}

// takeLocked takes up to n messages, one per takeable queue per pass,
// starting one queue further on each call so that small receives rotate
// over the queues.
func (b *inbox) takeLocked(n int) []item {
	if len(b.order) == 0 || n <= 0 || b.paused {
		return nil
	}
	b.ticket++
	t := b.ticket
	var out []item
	start := b.cursor
	b.cursor = (b.cursor + 1) % len(b.order)
	for len(out) < n {
		progress := false
		for k := 0; k < len(b.order) && len(out) < n; k++ {
			q := b.order[(start+k)%len(b.order)]
			if !q.takeable(t) {
				continue
			}
			it := q.items[0]
			q.items[0] = item{}
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = nil
			}
			it.dl.state[it.i] = stHanded
			q.inFlight++
			q.takenBy = t
			out = append(out, it)
			progress = true
		}
		if !progress {
			break
		}
	}
	return out
}

// stopSignal closes when the service drains: parked receives answer at
// once with what they have (nothing: a receive with messages returns).
type stopSignal = <-chan struct{}

// receive takes up to n messages, parking up to wait for them. It returns
// early, empty, when ctx ends or stop closes; a parked receive never holds
// messages, so none is lost when its caller goes away.
func (b *inbox) receive(ctx context.Context, n int, wait time.Duration, stop stopSignal) ([]item, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, nil
	}
	items := b.takeLocked(n)
	if len(items) > 0 || wait <= 0 {
		b.mu.Unlock()
		return items, nil
	}
	w := &waiter{ready: make(chan struct{}, 1)}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		var last bool
		select {
		case <-w.ready:
		case <-timer.C:
			last = true
		case <-ctx.Done():
			b.leave(w)
			return nil, ctx.Err()
		case <-stop:
			b.leave(w)
			return nil, nil
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, nil
		}
		if last {
			b.removeWaiterLocked(w)
		}
		items = b.takeLocked(n)
		if len(items) > 0 || last {
			// A token that reached us after the timer fired is spent here;
			// whatever is left goes to the next parked receive.
			select {
			case <-w.ready:
			default:
			}
			if b.anyTakeableLocked() {
				b.wakeLocked()
			}
			b.mu.Unlock()
			return items, nil
		}
		// Someone else took them first: park again, at the front, where
		// this receive stood.
		b.waiters = slices.Insert(b.waiters, 0, w)
		b.mu.Unlock()
	}
}

// leave unparks w; a wake-up token it was given but did not use is passed on.
func (b *inbox) leave(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.removeWaiterLocked(w) {
		select {
		case <-w.ready:
			if b.anyTakeableLocked() {
				b.wakeLocked()
			}
		default:
		}
	}
}

// answerLocked records the answer to message i of dl and returns the
// Delivery calls to make once the locks are released. Orderly: a nack (or
// expiry) also answers every later unanswered message of the batch — the
// consume service sends them all round again after the suspend time
// (SUSPEND_CURRENT_QUEUE_A_MOMENT) — voiding their leases and dropping
// those still buffered. The caller holds leaseTable.mu (lease voiding).
func (b *inbox) answerLocked(dl *delivery, i int, ok bool, level int, calls []call) []call {
	if dl.state[i] == stAnswered {
		return calls
	}
	b.finishLocked(dl, i)
	calls = append(calls, call{d: dl.d, i: i, ok: ok, level: level})
	if !ok && dl.orderly {
		for j := i + 1; j < len(dl.state); j++ {
			if dl.state[j] == stAnswered {
				continue
			}
			if l := dl.leases[j]; l != nil {
				b.leases.endLocked(l, outcomeVoided)
			}
			b.finishLocked(dl, j)
			calls = append(calls, call{d: dl.d, i: j, ok: false, level: level})
		}
	}
	if dl.q.inFlight == 0 && dl.q.takeable(0) {
		b.wakeLocked()
	}
	return calls
}

func (b *inbox) finishLocked(dl *delivery, i int) {
	q := dl.q
	switch dl.state[i] {
	case stHanded:
		q.inFlight--
	case stBuffered:
		q.items = slices.DeleteFunc(q.items, func(it item) bool { return it.dl == dl && it.i == i })
	}
	dl.state[i] = stAnswered
	dl.leases[i] = nil
}

// voidLocked ends message i of dl without answering it: its ProcessQueue
// was dropped (or the client is shutting down), so the answer would change
// nothing and the message is delivered again by the queue's next owner.
// The caller ends its lease, if any, and holds leaseTable.mu.
func (b *inbox) voidLocked(dl *delivery, i int) {
	if dl.state[i] == stAnswered {
		return
	}
	b.finishLocked(dl, i)
	if dl.q.inFlight == 0 && dl.q.takeable(0) {
		b.wakeLocked()
	}
}

// QueueDropped implements consumer.DropListener: the deliveries of mq whose
// ProcessQueue was dropped are voided — buffered messages are removed,
// leases end (their handles answer expired) — and nothing is answered
// (RocketMQ: a dropped ProcessQueue's ConsumeRequest does nothing).
// Deliveries of the queue's next ProcessQueue, if already here, stay.
func (b *inbox) QueueDropped(mq core.MessageQueue) {
	b.voidDropped(mq)
	// Answers accepted before the void may still be on their way to the
	// consumer (runCalls runs with no lock held): wait for them, so the
	// consumer re-pulls the queue only after they landed.
	b.leases.answering.Lock()
	b.leases.answering.Unlock()
}

func (b *inbox) voidDropped(mq core.MessageQueue) {
	t := b.leases
	t.mu.Lock()
	defer t.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[mq]
	if q == nil {
		return
	}
	q.items = slices.DeleteFunc(q.items, func(it item) bool {
		if !it.dl.d.Dropped() {
			return false
		}
		it.dl.state[it.i] = stAnswered
		return true
	})
	t.voidDroppedLocked(b, mq)
	if q.takeable(0) {
		b.wakeLocked()
	}
}

// Revoke implements consumer.Revoker: the consumer shrank mq's prefetch
// window (an idle group), so the buffered messages of mq at or above from
// are given back — removed from the buffer and revoked, to be pulled again
// later. Handed-out messages keep their leases.
func (b *inbox) Revoke(mq core.MessageQueue, from int64) {
	var calls []call
	b.mu.Lock()
	if q := b.queues[mq]; q != nil && !b.closed {
		q.items = slices.DeleteFunc(q.items, func(it item) bool {
			r, ok := it.dl.d.(revocable)
			if !ok || !r.Revocable() || it.dl.d.Dropped() || it.msg().QueueOffset < from {
				return false
			}
			it.dl.state[it.i] = stAnswered
			calls = append(calls, call{d: it.dl.d, i: it.i, revoke: true})
			return true
		})
		if len(q.items) == 0 {
			q.items = nil
		}
	}
	b.mu.Unlock()
	runCalls(calls)
}

// close wakes every parked receive (they answer empty) and drops the
// buffers: the client is being shut down and its unanswered messages come
// back through the engine.
func (b *inbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, w := range b.waiters {
		w.ready <- struct{}{}
	}
	b.waiters = nil
	for _, q := range b.order {
		q.items = nil
	}
}

// counts returns per queue the buffered and in-flight messages.
func (b *inbox) counts() map[core.MessageQueue][2]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := make(map[core.MessageQueue][2]int, len(b.order))
	for _, q := range b.order {
		m[q.mq] = [2]int{len(q.items), q.inFlight}
	}
	return m
}

func (b *inbox) parked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}
