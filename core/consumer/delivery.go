package consumer

import (
	"sync"
	"time"
)

// deliveryState tracks the answers of one Delivery (RocketMQ
// ConsumeRequest plus its ConsumeConcurrentlyContext's ackIndex,
// generalised to one answer per message).
type deliveryState struct {
	c       *PushConsumer
	pr      *pullRequest
	d       *Delivery
	started time.Time

	mu        sync.Mutex
	answered  []bool
	ok        []bool
	revoked   []bool // given back by a Revoker: neither done nor failed
	delay     []int
	reasons   []string // NackReason texts; nil until the first one
	remaining int
	finished  bool
	released  bool // finished by release: the queue was dropped, nothing counts
}

func (c *PushConsumer) newDelivery(pr *pullRequest, d *Delivery) *deliveryState {
	n := len(d.Msgs)
	st := &deliveryState{
		c: c, pr: pr, d: d, started: time.Now(),
		answered: make([]bool, n), ok: make([]bool, n), revoked: make([]bool, n), delay: make([]int, n), remaining: n,
	}
	d.answer = st.answer
	d.revoke = st.revoke
	d.pq = pr.pq
	pr.inFlight.Add(int64(n))
	if o := c.opts.Observer; o != nil {
		o.Delivered(d.Group, n)
	}
	return st
}

// answer records one message's result; the last one processes the batch.
func (st *deliveryState) answer(i int, ok bool, delayLevel int, reason string) {
	st.mu.Lock()
	if st.finished || i < 0 || i >= len(st.answered) || st.answered[i] {
		st.mu.Unlock()
		return
	}
	st.answered[i], st.ok[i], st.delay[i] = true, ok, delayLevel
	if reason != "" && !ok {
		if st.reasons == nil {
			st.reasons = make([]string, len(st.answered))
		}
		st.reasons[i] = reason
	}
	st.remaining--
	done := st.remaining == 0
	if done {
		st.finished = true
	}
	st.mu.Unlock()
	st.pr.inFlight.Add(-1)
	if o := st.c.opts.Observer; o != nil {
		o.Answered(st.d.Group, st.d.Msgs[i], ok, st.started)
	}
	if done {
		st.c.processConsumeResult(st)
	}
}

// reason is the NackReason text of message i ("" when none); read once
// the delivery is finished.
func (st *deliveryState) reason(i int) string {
	if st.reasons == nil {
		return ""
	}
	return st.reasons[i]
}

// toSendBack is how many messages a finished concurrent delivery sends
// back (CLUSTERING): those neither acknowledged nor given back.
func (st *deliveryState) toSendBack() int {
	n := 0
	for i, ok := range st.ok {
		if !ok && !st.revoked[i] {
			n++
		}
	}
	return n
}

// revoke takes message i back unconsumed (Delivery.Revoke): it leaves
// the ProcessQueue as a trimmed offset, pulled again later (trim.go).
func (st *deliveryState) revoke(i int) {
	if !st.d.revocable {
		return
	}
	st.mu.Lock()
	if st.finished || i < 0 || i >= len(st.answered) || st.answered[i] {
		st.mu.Unlock()
		return
	}
	st.answered[i], st.revoked[i] = true, true
	st.remaining--
	done := st.remaining == 0
	if done {
		st.finished = true
	}
	st.mu.Unlock()
	st.pr.pq.revokeMessage(st.d.Msgs[i])
	st.pr.inFlight.Add(-1)
	if done {
		st.c.processConsumeResult(st)
	}
}

// expire answers every unanswered message with RECONSUME_LATER at
// delayLevel (cleanExpireMsg). It reports whether anything was unanswered.
func (st *deliveryState) expire(delayLevel int) bool {
	st.mu.Lock()
	var todo []int
	for i, a := range st.answered {
		if !a {
			todo = append(todo, i)
		}
	}
	st.mu.Unlock()
	for _, i := range todo {
		st.answer(i, false, delayLevel, "consume timeout")
	}
	return len(todo) > 0
}

// release finishes a delivery of a dropped queue whose listener voids
// what it holds (DropListener): the unanswered messages count as not
// consumed — no failure, no send-back, no suspend — and the answers already
// given are processed (orderly: the acknowledged prefix is committed, then
// the drop completes). It reports whether it finished the delivery (false:
// the last answer came first and processes it).
func (st *deliveryState) release() bool {
	st.mu.Lock()
	if st.finished {
		st.mu.Unlock()
		return false
	}
	n := st.remaining
	st.finished, st.released = true, true
	st.remaining = 0
	st.mu.Unlock()
	st.pr.inFlight.Add(-int64(n))
	st.c.processConsumeResult(st)
	return true
}

// abandon ends a delivery without processing it (shutdown, dropped
// queue): later answers are ignored.
func (st *deliveryState) abandon() {
	st.mu.Lock()
	n := st.remaining
	st.finished = true
	st.remaining = 0
	st.mu.Unlock()
	st.pr.inFlight.Add(-int64(n))
}
