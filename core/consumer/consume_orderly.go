package consumer

import (
	"time"

	"github.com/mqgate/mqgate/core"
)

// lockRetryDelay is how long an orderly queue whose lock is not alive
// waits before it tries to lock again and consume (RocketMQ
// tryLockLaterAndReconsume waits 10 ms – 3 s).
const lockRetryDelay = 200 * time.Millisecond

// needsBrokerLock: CLUSTERING orderly queues are consumed under the
// engine's per-group lock; BROADCASTING ones are not (every consumerId has
// its own offsets, RocketMQ consumes them without lockBatchMQ), so their
// lock is always alive.
func needsBrokerLock(cfg core.GroupConfig) bool {
	return cfg.ConsumeMode == core.Orderly && cfg.MessageModel != core.Broadcasting
}

// tryConsumeOrderly hands the next batch of a queue to the listener if
// nothing of the queue is out and this client holds a live lock on it
// (ConsumeMessageOrderlyService.ConsumeRequest.run). It never runs inside
// a listener's answer: results re-enter through the scheduler. With
// messages waiting and the lock not alive it schedules one
// tryLockLaterAndReconsume.
func (c *PushConsumer) tryConsumeOrderly(pr *pullRequest) {
	pr.mu.Lock()
	if pr.consuming || pr.pq.Dropped() {
		pr.mu.Unlock()
		return
	}
	if !c.lockAlive(pr) {
		retry := !pr.lockRetry && pr.pq.Pending() > 0
		pr.lockRetry = pr.lockRetry || retry
		pr.mu.Unlock()
		if retry {
			c.sched.after(lockRetryDelay, func() { c.tryLockLaterAndReconsume(pr) })
		}
		return
	}
	msgs := pr.pq.TakeMessages(c.opts.ConsumeMessageBatchMaxSize)
	if len(msgs) == 0 {
		pr.mu.Unlock()
		return
	}
	pr.consuming, pr.outstanding = true, true
	d := &Delivery{Group: c.group, Queue: pr.mq, Orderly: true, Msgs: msgs}
	pr.current = c.newDelivery(pr, d)
	pr.mu.Unlock()
	if !c.running() {
		return
	}
	c.stats.delivered.Add(int64(len(msgs)))
	c.opts.Listener.Consume(d)
}

// tryLockLaterAndReconsume (RocketMQ, same name) locks one queue whose lock
// lapsed and consumes what it caches; while the lock stays dead and
// messages wait, tryConsumeOrderly schedules it again.
func (c *PushConsumer) tryLockLaterAndReconsume(pr *pullRequest) {
	pr.mu.Lock()
	pr.lockRetry = false
	pr.mu.Unlock()
	if pr.pq.Dropped() || !c.running() {
		return
	}
	now := time.Now()
	pr.pq.setLocked(c.deps.Coordinator.LockQueue(c.group, c.opts.ClientID, pr.mq, now), now)
	c.tryConsumeOrderly(pr)
}

// lockAlive: RocketMQ consumes an orderly queue only while it is locked
// and the lock was renewed within REBALANCE_LOCK_MAX_LIVE_TIME.
// BROADCASTING queues need no lock.
func (c *PushConsumer) lockAlive(pr *pullRequest) bool {
	return pr.lockFree || pr.pq.Locked() && time.Since(time.Unix(0, pr.pq.lastLockTime.Load())) < c.opts.LockMaxLiveTime
}

// processOrderlyResult (ConsumeMessageOrderlyService.processConsumeResult
// with per-message answers): the acknowledged prefix is committed; from the
// first failure on, the batch is made to consume again after SuspendTime
// (SUSPEND_CURRENT_QUEUE_A_MOMENT) with reconsumeTimes+1 on the failed
// messages — unless the first failed message has used up
// maxReconsumeTimes (or was nacked with delay level -1): then it goes to
// the DLQ (BROADCASTING: dropped) and the queue moves on at once. The DLQ
// move goes through the client's send-back loop (sendback.go) and the
// queue continues when it is stored (or, if that failed, is suspended and
// tried again), so the answering goroutine never waits for the store.
func (c *PushConsumer) processOrderlyResult(st *deliveryState) {
	pr := st.pr
	c.mu.Lock()
	running := c.state == stateRunning
	cfg := c.cfg
	c.mu.Unlock()
	if !running {
		return
	}
	msgs := st.d.Msgs
	n := len(msgs)
	k := 0
	for k < n && st.ok[k] {
		k++
	}
	c.stats.succeeded.Add(int64(k))
	switch {
	case k == n:
		pr.failing.note(nil, time.Time{}) // the head succeeded (suspend.go)
		c.finishOrderlyResult(st, false)
	case st.released:
		// The queue was dropped with the batch out (DropListener): the
		// rest was not consumed; nothing failed.
		pr.pq.MakeMessageToConsumeAgain(msgs[k:])
		c.finishOrderlyResult(st, false)
	default:
		for j := k; j < n; j++ {
			if !st.ok[j] {
				c.stats.failed.Add(1)
			}
		}
		m := msgs[k]
		if m.ReconsumeTimes < cfg.MaxReconsumeTimes && st.delay[k] >= 0 {
			c.consumeAgain(st, k, false)
			return
		}
		if cfg.MessageModel == core.Broadcasting {
			c.stats.broadcastDropped.Add(1)
			c.consumeAgain(st, k, true)
			return
		}
		c.backs.add(sendBackJob{pr: pr, msg: withReason(m, st.reason(k)), delayLevel: -1, maxReconsumeTimes: cfg.MaxReconsumeTimes,
			then: func(err error) {
				if err == nil {
					c.stats.deadLettered.Add(1)
				}
				c.consumeAgain(st, k, err == nil)
			}})
	}
}

// consumeAgain makes the failed batch st (first failure at k) consume
// again from k, or from k+1 when skip (message k left the queue: DLQ or
// dropped), and finishes the result; without skip the queue is
// suspended.
func (c *PushConsumer) consumeAgain(st *deliveryState, k int, skip bool) {
	msgs := st.d.Msgs
	start := k
	if skip {
		start = k + 1
	}
	again := make([]*core.Message, 0, len(msgs)-start)
	for j := start; j < len(msgs); j++ {
		cp := *msgs[j]
		if !st.ok[j] {
			cp.ReconsumeTimes++
		}
		again = append(again, &cp)
	}
	st.pr.pq.MakeMessageToConsumeAgain(again)
	if skip { // the failing head left the queue, or is sent round again (suspend.go)
		st.pr.failing.note(nil, time.Time{})
	} else {
		st.pr.failing.note(again[0], time.Now().Add(c.opts.SuspendTime))
	}
	c.finishOrderlyResult(st, !skip)
}

// finishOrderlyResult commits what the batch finished and lets the queue
// continue (after SuspendTime when suspend), or completes its drop.
func (c *PushConsumer) finishOrderlyResult(st *deliveryState, suspend bool) {
	pr := st.pr
	commit := pr.pq.Commit() // what is still consuming: the finished prefix

	pr.mu.Lock()
	pr.outstanding, pr.current = false, nil
	draining, noCommit := pr.draining, pr.noCommit
	pr.mu.Unlock()
	if commit >= 0 && !noCommit && (draining || !pr.pq.Dropped()) {
		c.offsets.update(pr.mq, commit, false)
		c.progress.moved() // pulls held at a growth fence re-check (fence.go)
	}
	if draining {
		// Dropped while this batch was out: persist, then unlock so the
		// new owner starts after what was just committed.
		c.mu.Lock()
		if c.draining[pr.mq] == pr {
			delete(c.draining, pr.mq)
			c.finishDropLocked(pr)
		}
		c.mu.Unlock()
		signal(c.kick)
		return
	}
	delay := time.Duration(0)
	if suspend {
		delay = c.opts.SuspendTime
	}
	c.sched.after(delay, func() {
		pr.mu.Lock()
		pr.consuming = false
		pr.mu.Unlock()
		c.tryConsumeOrderly(pr)
	})
}
