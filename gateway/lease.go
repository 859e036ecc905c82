package gateway

import (
	"container/heap"
	"encoding/binary"
	"sync"
	"time"
	"unsafe"

	"github.com/mqgate/mqgate/core"
)

// outcome is how a lease ended.
type outcome uint8

const (
	outcomeAcked   outcome = iota + 1 // acked: a repeated ack answers ok
	outcomeNacked                     // nacked by the caller
	outcomeVoided                     // orderly: an earlier message of the batch failed; or its queue was dropped
	outcomeExpired                    // the lease ran out (RECONSUME_LATER)
)

// lease is one handed-out, unanswered message: the consume-timeout clock
// of the HTTP path, started at receive. A lease leaves the table as soon as
// it ends; an acked one leaves a one-bit tombstone (ackedSet) so that a
// repeated ack answers ok and changes nothing, any other handle of it
// answers expired.
type lease struct {
	seq      uint64
	rc       receipt // what the handle names
	handle   string  // the handle issued for rc ("" until grant has signed it)
	deadline time.Time
	index    int // in leaseHeap

	// Where the message is.
	box *inbox
	dl  *delivery
	i   int
}

// leaseHeap orders leases by deadline (RocketMQ has none: its client
// keeps consuming until consumeTimeout; nsq's inFlightPQ is the model).
type leaseHeap []*lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *leaseHeap) Push(x any) {
	l := x.(*lease)
	l.index = len(*h)
	*h = append(*h, l)
}
func (h *leaseHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	l.index = -1
	return l
}

// leaseTable holds every live lease of the service, by sequence number and
// by deadline, and the tombstones of acked ones. One goroutine (run) owns
// one timer armed to the earliest deadline; lease expiry is the only way a
// message received over HTTP goes back as RECONSUME_LATER without a nack
// (the clients run with the consumer's cleanExpireMsg off).
type leaseTable struct {
	epoch uint64
	codec *handleCodec

	// answering is held for reading from deciding answers (apply, expire)
	// until they are delivered to the consumer (runCalls); QueueDropped
	// takes it for writing after voiding a queue, so every answer accepted
	// before the void has reached the consumer when the drop is complete
	// (an ack answered ok is then in the queue's stored position before
	// the queue is pulled again). Taken before mu.
	answering sync.RWMutex

	mu    sync.Mutex // guards below; taken before any inbox.mu
	seq   uint64
	byID  map[uint64]*lease
	h     leaseHeap
	acked *ackedSet

	kick chan struct{} // cap 1: the earliest deadline may have moved
	tl   *Timeline     // records deliveries and answers (timeline.go); nil: none
}

func newLeaseTable(epoch uint64, codec *handleCodec) *leaseTable {
	return &leaseTable{epoch: epoch, codec: codec, byID: map[uint64]*lease{},
		acked: newAckedSet(defaultAckedWindow), kick: make(chan struct{}, 1)}
}

func (t *leaseTable) poke() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// endLocked takes l out of the table (t.mu held); an acked lease leaves
// its tombstone.
func (t *leaseTable) endLocked(l *lease, o outcome) {
	if l.index >= 0 {
		heap.Remove(&t.h, l.index)
	}
	delete(t.byID, l.seq)
	if o == outcomeAcked {
		t.acked.set(l.seq)
	}
	l.box, l.dl = nil, nil
}

// grant leases items taken from box until deadline. An item already
// answered between take and grant (an orderly batch failed meanwhile) is
// left out, and so is one whose ProcessQueue was dropped meanwhile.
func (t *leaseTable) grant(box *inbox, consumerID string, items []item, deadline time.Time) []core.Received {
	out := make([]core.Received, 0, len(items))
	leased := make([]*lease, 0, len(items))
	var evStack [maxReceiveBatchEvents]core.Event
	evs := evStack[:0]
	t.mu.Lock()
	earliest := len(t.h) == 0 || deadline.Before(t.h[0].deadline)
	box.mu.Lock()
	for _, it := range items {
		if it.dl.state[it.i] != stHanded {
			continue
		}
		if box.closed || it.dl.d.Dropped() {
			box.voidLocked(it.dl, it.i)
			continue
		}
		m := it.msg()
		t.seq++
		t.acked.grant(t.seq)
		l := &lease{
			seq: t.seq,
			rc: receipt{
				Epoch: t.epoch, Seq: t.seq, Group: box.group, ConsumerID: consumerID,
				Queue: it.dl.mq, Offset: m.QueueOffset,
				Expires: time.UnixMilli(deadline.UnixMilli()).UTC(), // as the handle carries it
			},
			deadline: deadline, box: box, dl: it.dl, i: it.i,
		}
		it.dl.leases[it.i] = l
		t.byID[l.seq] = l
		heap.Push(&t.h, l)
		evs = t.noteTo(evs, l, core.EventDelivered, 0, "")
		out = append(out, core.Received{Message: m, InvisibleUntil: deadline})
		leased = append(leased, l)
	}
	t.tl.RecordAll(box.group, evs)
	box.mu.Unlock()
	t.mu.Unlock()
	// Sign outside the locks: a receipt never changes once granted. The
	// handles go on their leases before any caller has them, so an ack
	// finds each live handle there (apply).
	for k, l := range leased {
		out[k].ReceiptHandle = t.codec.encode(l.rc)
	}
	if len(leased) > 0 {
		t.mu.Lock()
		for k, l := range leased {
			l.handle = out[k].ReceiptHandle
		}
		t.mu.Unlock()
	}
	if earliest {
		t.poke()
	}
	return out
}

// op is what a caller does with a handle.
type op uint8

const (
	opAck op = iota
	opNack
	opExtend
)

// apply runs one operation on each handle of group and returns the
// results and the Delivery calls to make after the locks are released.
// A handle whose lease ended answers expired, except an ack of an acked
// one (ok, nothing changes); so does one whose ProcessQueue was dropped
// (its lease is voided, nothing is answered: the queue's next owner
// delivers the message again). The calls are appended to calls (a
// caller's stack buffer saves an allocation per request).
func (t *leaseTable) apply(group string, handles []string, o op, level int, reason string, extendTo time.Time, now time.Time, calls []call) ([]core.HandleResult, []call) {
	res := make([]core.HandleResult, len(handles))
	// The handles are decoded into one buffer and checked against their
	// leases in place: a request of a few handles (one per ack is common)
	// is checked on the stack, with no allocation. A live lease's own
	// handle is known without its MAC (peekTo); the MACs of the others
	// (ended leases, an earlier run's, forgeries) are verified outside
	// the table's lock, so concurrent acks need not queue behind them.
	var refStack [8]receiptRef
	var bufStack [1024]byte
	refs, buf := refStack[:0], bufStack[:0]
	if len(handles) > len(refStack) {
		refs = make([]receiptRef, 0, len(handles))
	}
	if need := decodedLen(handles); need > len(bufStack) {
		buf = make([]byte, 0, need)
	}
	for k, h := range handles {
		res[k] = core.HandleResult{ReceiptHandle: h, Status: core.HandleInvalid}
		ref, b, ok := t.codec.peekTo(buf, h)
		buf = b
		if ok && ref.inGroup(buf, group) {
			res[k].Status = core.HandleExpired // until its lease says otherwise
		}
		refs = append(refs, ref)
	}
	var evStack [maxReceiveBatchEvents]core.Event
	a := applyOp{o: o, level: level, reason: reason, extendTo: extendTo, now: now}
	evs, moved, unverified := evStack[:0], false, 0
	t.mu.Lock()
	for k, h := range handles {
		if res[k].Status == core.HandleInvalid {
			continue
		}
		rf := &refs[k]
		var l *lease
		if rf.epoch == t.epoch {
			l = t.byID[rf.seq]
		}
		if l == nil || !sameHandle(l.handle, h) {
			res[k].Status = core.HandleInvalid // until its MAC verifies, below
			unverified++
			continue
		}
		var m bool
		calls, evs, m = t.applyLocked(l, &res[k], &a, calls, evs)
		moved = moved || m
	}
	t.tl.RecordAll(group, evs)
	t.mu.Unlock()
	if unverified > 0 {
		verified := 0
		for k := range handles {
			if res[k].Status == core.HandleInvalid && refs[k].n > 0 && refs[k].inGroup(buf, group) && t.codec.verifies(buf, &refs[k]) {
				res[k].Status = core.HandleExpired
				verified++
			}
		}
		// A verified handle names no live lease (the lease would hold
		// that very handle): only an acked one's tombstone makes it ok.
		if o == opAck && verified > 0 {
			t.mu.Lock()
			for k := range handles {
				if rf := &refs[k]; res[k].Status == core.HandleExpired && rf.epoch == t.epoch && t.byID[rf.seq] == nil && t.acked.has(rf.seq) {
					res[k].Status = core.HandleOK // idempotent ack
				}
			}
			t.mu.Unlock()
		}
	}
	if moved {
		t.poke()
	}
	return res, calls
}

// maxReceiveBatchEvents is room on the stack for the timeline events of
// a grant or an apply of a receive's worth of messages.
const maxReceiveBatchEvents = 32

// applyOp is one apply's operation on each of its handles.
type applyOp struct {
	o        op
	level    int
	reason   string
	extendTo time.Time
	now      time.Time
}

// applyLocked runs a on live lease l (t.mu held) and answers r: ok, or
// expired when its deadline has passed or its ProcessQueue was dropped.
// The Delivery calls and timeline events it makes are appended to calls
// and evs; moved reports an extended deadline.
func (t *leaseTable) applyLocked(l *lease, r *core.HandleResult, a *applyOp, calls []call, evs []core.Event) (_ []call, _ []core.Event, moved bool) {
	if !a.now.Before(l.deadline) {
		return calls, evs, false // the timer is about to count it as RECONSUME_LATER
	}
	box := l.box
	box.mu.Lock()
	defer box.mu.Unlock()
	if box.closed || l.dl.d.Dropped() {
		box.voidLocked(l.dl, l.i)
		t.endLocked(l, outcomeVoided)
		return calls, evs, false
	}
	switch a.o {
	case opAck:
		evs = t.noteTo(evs, l, core.EventAcked, 0, "")
		calls = box.answerLocked(l.dl, l.i, true, 0, calls)
		t.endLocked(l, outcomeAcked)
	case opNack:
		evs = t.noteTo(evs, l, core.EventNacked, a.level, a.reason)
		n := len(calls)
		calls = box.answerLocked(l.dl, l.i, false, a.level, calls)
		withReason(calls[n:], a.reason)
		t.endLocked(l, outcomeNacked)
	case opExtend:
		l.deadline = a.extendTo
		heap.Fix(&t.h, l.index)
		r.InvisibleUntil = a.extendTo
		moved = true
	}
	r.Status = core.HandleOK
	return calls, evs, moved
}

// expire ends leases whose deadline has passed: each counts as
// RECONSUME_LATER (delay level 0: the engine decides), unless its client
// shut down or its ProcessQueue was dropped. It returns the Delivery calls
// and the next deadline (zero when the table is empty).
func (t *leaseTable) expire(now time.Time) ([]call, time.Time) {
	var calls []call
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.h) > 0 && !now.Before(t.h[0].deadline) {
		l := heap.Pop(&t.h).(*lease)
		box := l.box
		box.mu.Lock()
		if box.closed || l.dl.d.Dropped() {
			box.voidLocked(l.dl, l.i)
		} else {
			t.note(l, core.EventLeaseExpired, 0, "")
			n := len(calls)
			calls = box.answerLocked(l.dl, l.i, false, 0, calls)
			withReason(calls[n:], leaseExpiredReason(l))
		}
		box.mu.Unlock()
		t.endLocked(l, outcomeExpired)
	}
	if len(t.h) == 0 {
		return calls, time.Time{}
	}
	return calls, t.h[0].deadline
}

// voidDroppedLocked ends the leases box holds on deliveries of mq whose
// ProcessQueue was dropped (t.mu and box.mu held). Drops are rare
// (rebalance, offset reset, filter change, topic delete), so a scan of the
// live leases is fine.
func (t *leaseTable) voidDroppedLocked(box *inbox, mq core.MessageQueue) {
	for _, l := range t.byID {
		if l.box == box && l.dl.mq == mq && l.dl.d.Dropped() {
			box.voidLocked(l.dl, l.i)
			t.endLocked(l, outcomeVoided)
		}
	}
}

// run expires leases until stop closes, with one timer re-armed to the
// earliest deadline.
func (t *leaseTable) run(stop <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		t.answering.RLock()
		calls, next := t.expire(time.Now())
		runCalls(calls)
		t.answering.RUnlock()
		var fire <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next))
			fire = timer.C
		}
		select {
		case <-fire:
		case <-t.kick:
			timer.Stop()
		case <-stop:
			timer.Stop()
			return
		}
	}
}

// live is the number of live leases.
func (t *leaseTable) live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

// sameHandle reports whether h is, byte for byte, the handle issued,
// in constant time: a timed comparison would tell a forger how much of
// a live lease's MAC it has right. It XORs eight bytes at a time and
// decides once, at the end (crypto/subtle's compare goes byte by byte: 3.5%
// of a streaming consumer's CPU, under the lease lock). The length is not
// secret: every handle of a gateway has the handle codec's length. (The
// strings are viewed as bytes in place; a conversion would allocate on
// every ack.)
func sameHandle(issued, h string) bool {
	if len(issued) != len(h) {
		return false
	}
	a, b := unsafe.Slice(unsafe.StringData(issued), len(issued)), unsafe.Slice(unsafe.StringData(h), len(h))
	var diff uint64
	for len(a) >= 8 {
		diff |= binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b)
		a, b = a[8:], b[8:]
	}
	for i := range a {
		diff |= uint64(a[i] ^ b[i])
	}
	return diff == 0
}
