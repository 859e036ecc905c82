package consumer

import (
	"time"

	"github.com/mqgate/mqgate/core"
)

// pullLoop is the PullMessageService for one owned queue: pull, put the
// result in the ProcessQueue, dispatch it to the consume service, and pull
// again. It never spins: with nothing new it waits on the engine's Arrival
// channel (long polling, PullRequestHoldService) or the hold timeout; under
// flow control it waits until consumption frees space in the
// ProcessQueue (RocketMQ re-checks every 50 ms; waiting for removeMessage
// is the same condition with no wake-ups); after an error it waits
// PullDelayOnError. An ORDERLY queue also waits at a growth fence until
// the group consumed the old layout (fence.go). It exits when the queue is
// dropped.
func (c *PushConsumer) pullLoop(pr *pullRequest) {
	defer c.pulls.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	// wait blocks until ch is ready, d passes (d > 0) or the queue is
	// dropped; false means dropped.
	wait := func(ch <-chan struct{}, d time.Duration) bool {
		var tc <-chan time.Time
		if d > 0 {
			timer.Reset(d)
			tc = timer.C
			defer timer.Stop()
		}
		select {
		case <-pr.stop:
			return false
		case <-ch:
			return true
		case <-tc:
			return true
		case <-pr.nudge:
			return true
		}
	}
	// hold is wait for long polling: it tells a timeout (park then) from
	// an arrival or a nudge (pull again), and dropped.
	hold := func(ch <-chan struct{}, d time.Duration) holdResult {
		timer.Reset(d)
		defer timer.Stop()
		select {
		case <-pr.stop:
			return holdDropped
		case <-ch:
			return holdWoken
		case <-pr.nudge:
			return holdWoken
		case <-timer.C:
			return holdTimedOut
		}
	}
	for {
		select {
		case <-pr.stop:
			return
		default:
		}
		pq := pr.pq
		if g := c.prefetchGen.Load(); g != pr.trimGen {
			// The window shrank (an idle group): give back what lies
			// beyond it and pull that again later (trim.go).
			pr.trimGen = g
			c.trim(pr)
		}
		// Flow control (RocketMQ pullMessage): the space channel is taken
		// before the check so a removal between them is not missed.
		space := pq.spaceChan()
		if int64(pq.Count()) > c.prefetch.Load() || pq.Bytes() > c.opts.PullThresholdSizeForQueue ||
			(!pr.orderly && pq.MaxSpan() > c.opts.ConsumeConcurrentlyMaxSpan) {
			c.stats.flowControlled.Add(1)
			if !wait(space, 0) {
				return
			}
			continue
		}

		// ORDERLY: hold at a growth fence until the old layout is consumed
		// (fence.go); CONCURRENTLY reads past fences.
		bound := int64(noFence)
		if pr.orderly {
			b, open, wake, recheck := c.fenceGate(pr)
			pr.heldAtFence.Store(!open)
			if !open {
				if !wait(wake, recheck) {
					return
				}
				continue
			}
			bound = b
		}

		// The shared cache budget: reserve room for the batch first
		// (budget.go); the read keeps only what fits.
		budget, held := pq.budgetRef()
		var reserved int64
		if budget != nil {
			n, ok := budget.reserve(held, int64(c.opts.PullBatchSize)*pr.sizeHint(), pr.stop, pr.nudge)
			if !ok {
				c.stats.flowControlled.Add(1)
				continue // dropped (the loop's top returns) or nudged (trim)
			}
			reserved = n
		}
		res, err := c.deps.Reader.GetMessages(pr.mq, pr.nextOffset, c.opts.PullBatchSize, pr.filter)
		if reserved > 0 && (err != nil || res.Status != core.Found || pr.stale.Load()) {
			budget.release(reserved)
			reserved = 0
		}
		if reserved > 0 && !fitReservation(pr, &res, reserved) {
			// The first message alone is larger than the reservation:
			// reserve for its size and read again.
			budget.release(reserved)
			continue
		}
		if pr.stale.Load() {
			// Read with a filter the group no longer has: drop the result
			// and wait for rebalance to replace this request (the bounded
			// wait covers a queue rebalance keeps, e.g. an unreadable topic).
			if !wait(nil, c.opts.PullDelayOnError) {
				return
			}
			continue
		}
		if err != nil {
			if core.ErrorCode(err) == core.ENotFound {
				// A retry topic nobody sent back to yet, or a deleted
				// topic: wait for an arrival or the next rebalance.
				arrival := c.deps.Reader.Arrival(pr.mq, pr.nextOffset)
				select {
				case <-arrival:
					arrival = nil // closed at once: do not spin on it
				default:
				}
				if arrival != nil {
					// A retry topic: the engine wakes the parked pull
					// when its first message arrives.
					if c.park(pr) {
						return
					}
					continue
				}
				if !wait(nil, c.opts.LongPollingHold) {
					return
				}
				continue
			}
			c.log.Warn().Err(err).Str("topic", pr.mq.Topic).Int("queue", pr.mq.QueueID).Msg("pull failed")
			if !wait(nil, c.opts.PullDelayOnError) {
				return
			}
			continue
		}
		if !sameIncarnation(pr, res.TopicUID) {
			if reserved > 0 {
				budget.release(reserved)
			}
			// The topic was deleted and created again: this queue's offsets
			// are the old topic's. Rebalance drops it (topicchange.go).
			signal(c.kick)
			if !wait(nil, c.opts.PullDelayOnError) {
				return
			}
			continue
		}
		if pr.orderly {
			if res.Layouts != len(pr.layouts) {
				if reserved > 0 {
					budget.release(reserved)
				}
				// The topic grew since pr learnt its layouts: classify
				// nothing of this read, re-read them and gate again.
				if !c.refreshLayouts(pr) && !wait(nil, c.opts.PullDelayOnError) {
					return
				}
				continue
			}
			fitFence(&res, bound)
		}
		if reserved > 0 && res.Status != core.Found {
			budget.release(reserved) // fitFence cut everything
			reserved = 0
		}
		switch res.Status {
		case core.Found:
			pr.nextOffset = res.NextOffset
			pr.learnSize(res.Messages)
			// Messages finished before a restart above the committed
			// offset (acknowledged, sent back) are not consumed again.
			msgs := c.offsets.skipFinished(pr.mq, res.Messages)
			if len(msgs) == 0 {
				if reserved > 0 {
					budget.release(reserved)
				}
				pq.advanceRead(res.NextOffset)
				if pq.Empty() {
					c.offsets.update(pr.mq, res.NextOffset, true)
				}
				continue
			}
			msgs = pq.putReserved(msgs, budget, reserved)
			pq.advanceRead(res.NextOffset)
			if pq.Dropped() {
				return
			}
			if len(msgs) == 0 {
				continue // read again after a trim: all finished meanwhile
			}
			if pr.orderly {
				c.tryConsumeOrderly(pr)
			} else {
				c.submitConsumeRequest(pr, msgs)
			}
		case core.NoNewMsg, core.NoMatchedMsg:
			pr.nextOffset = res.NextOffset
			// correctTagsOffset: nothing cached, so everything before
			// nextOffset is consumed (or filtered out). With messages in
			// flight the cache remembers the read (advanceRead, before the
			// Empty check, so a removal between them is not missed) and the
			// removal that empties it commits up to here: this pull may
			// park and not run again.
			pq.advanceRead(res.NextOffset)
			if pq.Empty() {
				c.offsets.update(pr.mq, res.NextOffset, true)
				c.progress.moved()
			}
			if res.Status == core.NoNewMsg {
				// Long polling: wait here for an arrival a while (a busy
				// queue keeps its goroutine), then park (park.go).
				switch hold(c.deps.Reader.Arrival(pr.mq, pr.nextOffset), c.opts.LongPollingHold) {
				case holdDropped:
					return
				case holdTimedOut:
					if c.park(pr) {
						return
					}
				}
			}
		case core.OffsetIllegal:
			// The offset fell out of the queue (retention) or beyond it:
			// correct it to NextOffset (RocketMQ drops and recreates the
			// ProcessQueue; moving the pull on is the same here). An
			// offset beyond the max is lowered in the store first
			// (correctOffset): the merge of later writes keeps the larger
			// offset, so it would come back at the next start.
			c.log.Warn().Str("topic", pr.mq.Topic).Int("queue", pr.mq.QueueID).
				Int64("offset", pr.nextOffset).Int64("next", res.NextOffset).Msg("OFFSET_ILLEGAL, corrected")
			from := pr.nextOffset
			beyond := res.NextOffset < from
			pr.nextOffset = res.NextOffset
			pq.forgetTrimmedBelow(res.NextOffset)
			pq.advanceRead(res.NextOffset)
			if pq.Empty() {
				if beyond && !c.correctOffset(pr, res.NextOffset) {
					// Not stored: read the illegal offset again later and
					// retry, rather than consume past a correction a
					// restart would not know.
					pr.nextOffset = from
					if !wait(nil, c.opts.PullDelayOnError) {
						return
					}
					continue
				}
				c.offsets.update(pr.mq, res.NextOffset, false)
				c.progress.moved()
			}
		}
	}
}

// holdResult is how a long-polling hold ended.
type holdResult int

const (
	holdWoken    holdResult = iota // an arrival or a nudge: pull again
	holdTimedOut                   // nothing for LongPollingHold: park
	holdDropped                    // dropped: the goroutine ends
)

// defaultSizeHint is the message size a queue's first reservation assumes.
const defaultSizeHint = 1 << 10

// sizeHint is the message size pr's next reservation assumes: the mean of
// its last batch (pull goroutine only).
func (pr *pullRequest) sizeHint() int64 {
	if pr.meanSize <= 0 {
		return defaultSizeHint
	}
	return pr.meanSize
}

// learnSize records the mean size of a batch read.
func (pr *pullRequest) learnSize(msgs []*core.Message) {
	if len(msgs) == 0 {
		return
	}
	var sum int64
	for _, m := range msgs {
		sum += int64(m.Size())
	}
	pr.meanSize = max(sum/int64(len(msgs)), 1)
}

// fitReservation keeps the messages of a read that fit in reserved bytes
// and moves NextOffset back to the first one left out. If even the first
// does not fit it reports false and raises the size hint to it, once; a
// message larger than a reservation made for its size is kept alone.
func fitReservation(pr *pullRequest, res *core.GetResult, reserved int64) bool {
	var sum int64
	for i, m := range res.Messages {
		sz := int64(m.Size())
		if sum+sz <= reserved {
			sum += sz
			continue
		}
		if i == 0 {
			if pr.sizeHint() < sz {
				pr.meanSize = sz
				return false
			}
			i = 1 // larger than the whole reservation: alone
		}
		if i < len(res.Messages) {
			res.NextOffset = res.Messages[i].QueueOffset
			res.Messages = res.Messages[:i]
		}
		return true
	}
	return true
}
