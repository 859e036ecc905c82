package consumer

import (
	"context"
	"time"

	"github.com/mqgate/mqgate/core"
)

// cleanExpireDelayLevel is the delay level of messages sent back by
// cleanExpireMsg (RocketMQ sendMessageBack(msg, 3)).
const cleanExpireDelayLevel = 3

// submitConsumeRequest hands pulled messages to the listener in batches of
// ConsumeMessageBatchMaxSize (ConsumeMessageConcurrentlyService).
func (c *PushConsumer) submitConsumeRequest(pr *pullRequest, msgs []*core.Message) {
	c.submit(pr, msgs, true)
}

// submitConsumeRequestLater's body: messages consumed again locally after
// a failed send-back carry reconsumeTimes+1, which a new pull would lose,
// so their deliveries are not revocable.
func (c *PushConsumer) submitAgain(pr *pullRequest, msgs []*core.Message) {
	c.submit(pr, msgs, false)
}

func (c *PushConsumer) submit(pr *pullRequest, msgs []*core.Message, revocable bool) {
	bs := c.opts.ConsumeMessageBatchMaxSize
	for i := 0; i < len(msgs); i += bs {
		c.consumeConcurrently(pr, msgs[i:min(i+bs, len(msgs))], revocable)
	}
}

// consumeConcurrently is ConsumeRequest.run, made asynchronous: the
// listener answers later and the last answer runs processConsumeResult.
func (c *PushConsumer) consumeConcurrently(pr *pullRequest, msgs []*core.Message, revocable bool) {
	if pr.pq.Dropped() {
		return
	}
	d := &Delivery{Group: c.group, Queue: pr.mq, Msgs: msgs, revocable: revocable}
	st := c.newDelivery(pr, d)
	c.mu.Lock()
	if c.state != stateRunning {
		c.mu.Unlock()
		st.abandon()
		return
	}
	if c.opts.ConsumeTimeout > 0 { // negative: the listener owns timing
		c.inflight[st] = struct{}{}
		if !c.expiry {
			c.expiry = true
			c.sched.after(c.opts.ConsumeTimeout, c.cleanExpireMsg)
		}
	}
	c.mu.Unlock()
	c.stats.delivered.Add(int64(len(msgs)))
	c.opts.Listener.Consume(d)
}

// processConsumeResult (concurrently): failed messages are sent back
// (CLUSTERING) or dropped (BROADCASTING); the rest are removed and the
// offset moves forward. Sending back is asynchronous: the failed messages
// are queued for the client's send-back loop, which stores them in
// batches and then removes them — or, if sending back failed, gives them
// reconsumeTimes+1 and consumes them again locally SendBackFailedDelay
// later (sendback.go). So the goroutine that answered (an HTTP nack, the
// lease-expiry loop) never waits for the store.
func (c *PushConsumer) processConsumeResult(st *deliveryState) {
	if st.d.Orderly {
		c.processOrderlyResult(st)
		return
	}
	pr := st.pr
	c.mu.Lock()
	delete(c.inflight, st)
	running := c.state == stateRunning
	cfg := c.cfg
	// Checked under c.mu, where drops happen: a send-back counted here is
	// seen by any rebalance that would take the queue on again.
	dropped := pr.pq.Dropped()
	if running && !dropped && cfg.MessageModel != core.Broadcasting {
		if n := st.toSendBack(); n > 0 {
			c.backsOut[pr] += n
		}
	}
	c.mu.Unlock()
	if !running {
		return // delivered again from the committed position
	}
	if dropped {
		c.settleLate(pr, st)
		return // the new owner consumes from the committed position
	}
	msgs := st.d.Msgs
	done := make([]*core.Message, 0, len(msgs))
	var back []sendBackJob
	for i, m := range msgs {
		if st.revoked[i] {
			continue // given back: pulled again later (trim.go)
		}
		if st.ok[i] {
			c.stats.succeeded.Add(1)
			done = append(done, m)
			continue
		}
		c.stats.failed.Add(1)
		if cfg.MessageModel == core.Broadcasting {
			c.stats.broadcastDropped.Add(1)
			c.log.Warn().Str("msgId", m.ID).Msg("BROADCASTING, the message consume failed, drop it")
			done = append(done, m)
			continue
		}
		// Queued for the client's send-back loop (sendback.go), which
		// removes it once stored; until then it holds the offset back.
		back = append(back, sendBackJob{pr: pr, msg: withReason(m, st.reason(i)), delayLevel: st.delay[i], maxReconsumeTimes: cfg.MaxReconsumeTimes})
	}
	if len(back) > 0 {
		c.backs.add(back...)
	}
	if len(done) == 0 {
		return
	}
	if off := pr.pq.RemoveMessage(done); off >= 0 && !pr.pq.Dropped() {
		c.offsets.finished(pr.mq, off)
	}
}

// cleanExpireMsg sends back messages whose consumption started more than
// ConsumeTimeout ago (RocketMQ ConsumeMessageConcurrentlyService
// cleanExpireMsg, which scans every 15 min; here the task is scheduled
// for the earliest deadline among deliveries still out). With
// ConsumeTimeout < 0 it never runs: the listener's own clock (the HTTP
// gateway's lease, started at receive) is the only timeout.
func (c *PushConsumer) cleanExpireMsg() {
	now := time.Now()
	var expired []*deliveryState
	var next time.Time
	c.mu.Lock()
	if c.state != stateRunning {
		c.mu.Unlock()
		return
	}
	for st := range c.inflight {
		if st.pr.pq.Dropped() {
			delete(c.inflight, st)
			continue
		}
		deadline := st.started.Add(c.opts.ConsumeTimeout)
		if !now.Before(deadline) {
			expired = append(expired, st)
			delete(c.inflight, st)
			continue
		}
		if next.IsZero() || deadline.Before(next) {
			next = deadline
		}
	}
	if next.IsZero() {
		c.expiry = false
	} else {
		c.sched.after(next.Sub(now), c.cleanExpireMsg)
	}
	c.mu.Unlock()
	for _, st := range expired {
		if st.expire(cleanExpireDelayLevel) {
			c.stats.expired.Add(1)
			c.log.Warn().Str("topic", st.pr.mq.Topic).Int("queue", st.pr.mq.QueueID).Msg("consume timeout, messages sent back")
		}
	}
}

// settleLate keeps acknowledgements the listener accepted before the queue
// was dropped (a rebalance, a filter change) but that reached the consumer
// after the drop had written the queue's position: they are merged into
// the stored position (a write only adds finished offsets), and a new
// request for the queue in this client skips them if it has not pulled them
// yet. Failed messages are left to be delivered again. A drop for an
// offset reset keeps nothing: the reset decides.
func (c *PushConsumer) settleLate(pr *pullRequest, st *deliveryState) {
	pr.mu.Lock()
	noCommit := pr.noCommit
	pr.mu.Unlock()
	if noCommit {
		return
	}
	var done []core.OffsetRange
	for i, m := range st.d.Msgs {
		if st.ok[i] {
			done = append(done, core.OffsetRange{From: m.QueueOffset, To: m.QueueOffset + 1})
		}
	}
	if len(done) == 0 {
		return
	}
	uid := pr.uid.Load()
	c.offsets.addFinished(pr.mq, pr.epoch.Load(), uid, done)
	p := core.Progress{Done: done, Epoch: pr.epoch.Load(), TopicUID: uid}
	if err := c.commitProgress(context.Background(), map[core.MessageQueue]core.Progress{pr.mq: p}); err != nil {
		c.log.Warn().Err(err).Str("topic", pr.mq.Topic).Int("queue", pr.mq.QueueID).Msg("persist acknowledgements of a dropped queue")
	}
}
