package consumer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
)

// sendBackTimeout bounds one batch's SendMessagesBack.
const sendBackTimeout = 10 * time.Second

// maxSendBackBatch bounds the messages one SendMessagesBack call carries;
// more waiting go in the next call (the engine splits further if needed).
const maxSendBackBatch = 1024

// sendBackJob is one failed message waiting for sendMessageBack.
type sendBackJob struct {
	pr                *pullRequest
	msg               *core.Message
	delayLevel        int
	maxReconsumeTimes int
	// then, if set, continues the caller's work with the outcome (orderly:
	// the DLQ move of a queue's head). Without it the message is handled
	// as processConsumeResult (concurrently) does: removeMessage when
	// stored, else reconsumeTimes+1 and a local re-consume
	// SendBackFailedDelay later.
	then func(err error)
}

// sendBackQueue is a client's send-back queue (RocketMQ sends each failed
// message back from the consume thread, one request each; here the
// goroutine that finds a failure — an HTTP nack, the lease-expiry loop,
// the scheduler — only queues it). One goroutine owned by the client
// takes everything waiting and stores it with one SendMessagesBack: one
// store transaction and fsync for the lot, each copy committed with its
// settlement. 10 000 leases expiring together cost about ten group
// commits instead of 10 000.
type sendBackQueue struct {
	mu      sync.Mutex // leaf
	jobs    []sendBackJob
	stopped bool

	kick  chan struct{} // cap 1: jobs are waiting
	flush chan struct{} // closed by drain: store what waits, then stop
	stop  chan struct{}
	done  chan struct{}
}

func newSendBackQueue() *sendBackQueue {
	return &sendBackQueue{kick: make(chan struct{}, 1), flush: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
}

// add queues jobs; after close they are dropped (the client is shutting
// down: the messages are delivered again from the committed offset).
func (q *sendBackQueue) add(jobs ...sendBackJob) {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	q.jobs = append(q.jobs, jobs...)
	q.mu.Unlock()
	signal(q.kick)
}

// take returns up to max waiting jobs, oldest first.
func (q *sendBackQueue) take(max int) []sendBackJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.jobs), max)
	if n == 0 {
		return nil
	}
	out := make([]sendBackJob, n)
	copy(out, q.jobs)
	clear(q.jobs[:n])
	q.jobs = q.jobs[n:]
	if len(q.jobs) == 0 {
		q.jobs = nil // let the backing array go
	}
	return out
}

// pending is the number of jobs waiting.
func (q *sendBackQueue) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}

// drain stores every job waiting, then stops the loop; ctx bounds the
// wait (what is left when it ends is dropped by close). A graceful
// shutdown drains: a nack answered "ok" was queued here before its answer,
// and dropping it would undo the nack — the message would come back from
// the committed offset instead of reaching its retry or DLQ copy.
func (q *sendBackQueue) drain(ctx context.Context) {
	close(q.flush)
	select {
	case <-q.done:
	case <-ctx.Done():
	}
}

// close stops the loop after the batch in flight; waiting jobs are
// dropped.
func (q *sendBackQueue) close() {
	q.mu.Lock()
	q.stopped = true
	q.jobs = nil
	q.mu.Unlock()
	close(q.stop)
	<-q.done
}

// sendBackLoop drains the client's send-back queue until it is closed.
func (c *PushConsumer) sendBackLoop() {
	q := c.backs
	defer close(q.done)
	flushing := false
	for {
		if !flushing {
			select {
			case <-q.stop:
				return
			case <-q.kick:
			case <-q.flush:
				flushing = true
			}
		}
		for {
			select {
			case <-q.stop:
				return
			default:
			}
			jobs := q.take(maxSendBackBatch)
			if len(jobs) == 0 {
				break
			}
			c.sendBackBatch(jobs)
		}
		if flushing {
			return // drained: nothing waits
		}
	}
}

// queueResult is one request's share of a send-back batch: the messages
// stored (done) and those to consume again locally (again).
type queueResult struct {
	done, again []*core.Message
}

// sendBackBatch stores jobs with one SendMessagesBack and finishes each:
// concurrently, the stored ones are removed (removeMessage, offset
// forward) and the others are consumed again locally later, their
// reconsumeTimes+1; jobs with a continuation get the outcome.
func (c *PushConsumer) sendBackBatch(jobs []sendBackJob) {
	c.mu.Lock()
	inc, cid := c.cfg.Incarnation, c.consumerID
	c.mu.Unlock()
	backs := make([]SendBack, len(jobs))
	for i, j := range jobs {
		backs[i] = SendBack{Msg: j.msg, DelayLevel: j.delayLevel, MaxReconsumeTimes: j.maxReconsumeTimes,
			Settle: Settle{Incarnation: inc, ConsumerID: cid, Queue: j.pr.mq, Offset: j.msg.QueueOffset,
				Epoch: j.pr.epoch.Load(), TopicUID: j.pr.uid.Load()}}
	}
	err := errors.New("consumer: no SendBacker")
	if c.deps.SendBack != nil {
		ctx, cancel := context.WithTimeout(c.ctx, sendBackTimeout)
		err = c.deps.SendBack.SendMessagesBack(ctx, c.group, backs)
		cancel()
	}
	if err != nil {
		c.stats.sendBackFailed.Add(int64(len(jobs)))
		c.log.Warn().Err(err).Int("messages", len(jobs)).Msg("sendMessageBack failed")
	} else {
		c.stats.sentBack.Add(int64(len(jobs)))
	}

	// Concurrently: per queue, one removeMessage and one local re-consume.
	var order []*pullRequest
	byQueue := map[*pullRequest]*queueResult{}
	for _, j := range jobs {
		if j.then != nil {
			j.then(err)
			continue
		}
		r := byQueue[j.pr]
		if r == nil {
			r = &queueResult{}
			byQueue[j.pr] = r
			order = append(order, j.pr)
		}
		if err == nil {
			r.done = append(r.done, j.msg)
			continue
		}
		cp := *j.msg
		cp.ReconsumeTimes++
		r.again = append(r.again, &cp)
	}
	if len(order) == 0 {
		return
	}
	defer c.sentBack(order, byQueue)
	if !c.running() {
		return
	}
	for _, pr := range order {
		r := byQueue[pr]
		if pr.pq.Dropped() {
			// The send-back settled the offsets in the stored position; a
			// new request for the queue in this client skips them too
			// (settleLate). On failure the new owner consumes them again.
			c.settleSentBack(pr, r.done)
			continue
		}
		if len(r.again) > 0 {
			for _, m := range r.again {
				pr.pq.ReplaceMessage(m)
			}
			again := r.again
			c.sched.after(c.opts.SendBackFailedDelay, func() { c.submitAgain(pr, again) })
		}
		if len(r.done) > 0 {
			if off := pr.pq.RemoveMessage(r.done); off >= 0 && !pr.pq.Dropped() {
				c.offsets.finished(pr.mq, off)
			}
		}
	}
}

// sentBack ends the count of send-backs out (processConsumeResult counted
// them): once none is left for a dropped request, the rebalance that
// waits for it (sendingBackLocked) is kicked.
func (c *PushConsumer) sentBack(order []*pullRequest, byQueue map[*pullRequest]*queueResult) {
	kick := false
	c.mu.Lock()
	for _, pr := range order {
		r := byQueue[pr]
		n := c.backsOut[pr] - len(r.done) - len(r.again)
		if n > 0 {
			c.backsOut[pr] = n
			continue
		}
		delete(c.backsOut, pr)
		kick = kick || pr.pq.Dropped()
	}
	c.mu.Unlock()
	if kick {
		signal(c.kick)
	}
}

// sendingBackLocked reports whether a dropped request for mq still has
// send-backs out (c.mu held). Their settlement is what tells a new request
// that those messages are finished: taken on before, the queue would
// deliver the originals again besides their retry copies. A drop for an
// offset reset (or a deleted topic) keeps nothing: the queue is taken on
// again at once.
func (c *PushConsumer) sendingBackLocked(mq core.MessageQueue) bool {
	for pr := range c.backsOut {
		if pr.mq != mq || !pr.pq.Dropped() {
			continue
		}
		pr.mu.Lock()
		noCommit := pr.noCommit
		pr.mu.Unlock()
		if !noCommit {
			return true
		}
	}
	return false
}

// settleSentBack adds the offsets of msgs, sent back from pr after it was
// dropped, to the finished offsets of a new request for the queue in this
// client (settleLate's addFinished; the store has them already).
func (c *PushConsumer) settleSentBack(pr *pullRequest, msgs []*core.Message) {
	if len(msgs) == 0 {
		return
	}
	pr.mu.Lock()
	noCommit := pr.noCommit
	pr.mu.Unlock()
	if noCommit {
		return
	}
	done := make([]core.OffsetRange, len(msgs))
	for i, m := range msgs {
		done[i] = core.OffsetRange{From: m.QueueOffset, To: m.QueueOffset + 1}
	}
	c.offsets.addFinished(pr.mq, pr.epoch.Load(), pr.uid.Load(), mergeRanges(done))
}
