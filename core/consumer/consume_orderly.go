package consumer

import (
	"time"

	"github.com/mqgate/mqgate/core"
)

// tryConsumeOrderly hands the next batch of a queue to the listener if
// nothing of the queue is out and this client holds a live lock on it
// (ConsumeMessageOrderlyService.ConsumeRequest.run). It never runs inside
// a listener's answer: results re-enter through the scheduler.
func (c *PushConsumer) tryConsumeOrderly(pr *pullRequest) {
	pr.mu.Lock()
	if pr.consuming || pr.pq.Dropped() || !c.lockAlive(pr) {
		pr.mu.Unlock()
		return
	}
	msgs := pr.pq.TakeMessages(c.opts.ConsumeMessageBatchMaxSize)
	if len(msgs) == 0 {
		pr.mu.Unlock()
		return
	}
	pr.consuming, pr.outstanding = true, true
	pr.mu.Unlock()
	d := &Delivery{Group: c.group, Queue: pr.mq, Orderly: true, Msgs: msgs}
	c.newDelivery(pr, d)
	if !c.running() {
		return
	}
	c.stats.delivered.Add(int64(len(msgs)))
	c.opts.Listener.Consume(d)
}

// lockAlive: RocketMQ consumes an orderly queue only while it is locked
// and the lock was renewed within REBALANCE_LOCK_MAX_LIVE_TIME.
func (c *PushConsumer) lockAlive(pr *pullRequest) bool {
	return pr.pq.Locked() && time.Since(time.Unix(0, pr.pq.lastLockTime.Load())) < c.opts.LockMaxLiveTime
}

// processOrderlyResult (ConsumeMessageOrderlyService.processConsumeResult
// with per-message answers): the acknowledged prefix is committed; from the
// first failure on, the batch is made to consume again after SuspendTime
// (SUSPEND_CURRENT_QUEUE_A_MOMENT) with reconsumeTimes+1 on the failed
// messages — unless the first failed message has used up
// maxReconsumeTimes (or was nacked with delay level -1): then it goes to
// the DLQ (BROADCASTING: dropped) and the queue moves on at once.
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
	suspend := false
	if k < n {
		for j := k; j < n; j++ {
			if !st.ok[j] {
				c.stats.failed.Add(1)
			}
		}
		m := msgs[k]
		skip := false // m leaves the queue (DLQ or dropped)
		if m.ReconsumeTimes >= cfg.MaxReconsumeTimes || st.delay[k] < 0 {
			if cfg.MessageModel == core.Broadcasting {
				c.stats.broadcastDropped.Add(1)
				skip = true
			} else if err := c.sendBack(pr, m, -1, cfg.MaxReconsumeTimes); err == nil {
				c.stats.deadLettered.Add(1)
				skip = true
			}
		}
		start := k
		if skip {
			start = k + 1
		}
		again := make([]*core.Message, 0, n-start)
		for j := start; j < n; j++ {
			cp := *msgs[j]
			if !st.ok[j] {
				cp.ReconsumeTimes++
			}
			again = append(again, &cp)
		}
		pr.pq.MakeMessageToConsumeAgain(again)
		suspend = !skip
	}
	commit := pr.pq.Commit() // what is still consuming: the finished prefix

	pr.mu.Lock()
	pr.outstanding = false
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
