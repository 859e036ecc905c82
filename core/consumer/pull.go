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
		if ok, freed := pq.budgetAllows(); !ok {
			c.stats.flowControlled.Add(1)
			if !wait(freed, 0) {
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

		res, err := c.deps.Reader.GetMessages(pr.mq, pr.nextOffset, c.opts.PullBatchSize, pr.filter)
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
				if !wait(arrival, c.opts.LongPollingHold) {
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
				// The topic grew since pr learnt its layouts: classify
				// nothing of this read, re-read them and gate again.
				if !c.refreshLayouts(pr) && !wait(nil, c.opts.PullDelayOnError) {
					return
				}
				continue
			}
			fitFence(&res, bound)
		}
		switch res.Status {
		case core.Found:
			pr.nextOffset = res.NextOffset
			// Messages finished before a restart above the committed
			// offset (acknowledged, sent back) are not consumed again.
			msgs := c.offsets.skipFinished(pr.mq, res.Messages)
			if len(msgs) == 0 {
				if pq.Empty() {
					c.offsets.update(pr.mq, res.NextOffset, true)
				}
				continue
			}
			msgs = pq.putMessages(msgs)
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
			// nextOffset is consumed (or filtered out).
			if pq.Empty() {
				c.offsets.update(pr.mq, res.NextOffset, true)
				c.progress.moved()
			}
			if res.Status == core.NoNewMsg {
				if !wait(c.deps.Reader.Arrival(pr.mq, pr.nextOffset), c.opts.LongPollingHold) {
					return
				}
			}
		case core.OffsetIllegal:
			// The offset fell out of the queue (retention) or beyond it:
			// correct it to NextOffset (RocketMQ drops and recreates the
			// ProcessQueue; moving the pull on is the same here).
			c.log.Warn().Str("topic", pr.mq.Topic).Int("queue", pr.mq.QueueID).
				Int64("offset", pr.nextOffset).Int64("next", res.NextOffset).Msg("OFFSET_ILLEGAL, corrected")
			pr.nextOffset = res.NextOffset
			pq.forgetTrimmedBelow(res.NextOffset)
			if pq.Empty() {
				c.offsets.update(pr.mq, res.NextOffset, false)
				c.progress.moved()
			}
		}
	}
}
