package jetstream

import (
	"context"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/core"
)

// Publish coalescing (group commit). Concurrent publishes to one topic
// share JetStream atomic batches: a publish that finds fewer than
// laneInflight batches of its topic in flight on this instance sends
// its messages at once; one that finds them all busy queues, and the
// next batch to go carries every publish queued by then (up to the
// servers' atomic batch limit). A nats-server commits an atomic batch as
// one replicated proposal (one raft append, one fsync per replica with
// sync_interval always), so n coalesced publishes cost about what one
// does. A publish still answers only after the commit of the batch that
// carries it (2xx only after JetStream's ack), and each publish's
// messages stay together and contiguous in that batch: its offsets and
// its index entries' back references are as if it had gone alone.
//
// Idempotent publishes (a DedupID) are not coalesced: a batch holding a
// stored Nats-Msg-Id is refused whole, and their retry logic (dedup.go)
// works on one request's batch.
//
// At low load nothing waits: a lane with a free slot sends at once. The
// bound on batches in flight also keeps an instance well under the
// servers' max_inflight_per_stream (50 by default), which 50 concurrent
// single publishes would otherwise reach.

// laneInflight is how many atomic batches of one topic this instance
// has in flight at most.
const laneInflight = 4

// laneCounters count the batches lanes sent and the publishes they
// carried (their ratio is the coalescing; tests read it).
type laneCounters struct {
	laneBatches, lanePublishes atomic.Uint64
}

// pubJob is one publish's messages waiting in, or carried by, a batch.
type pubJob struct {
	msgs  []*nats.Msg
	first uint64 // stream sequence of msgs[0], once stored
	err   error
	taken bool          // a batch carries it (guarded by Backend.mu)
	done  chan struct{} // closed when first or err is set
}

// pubLane is one topic's queue of publishes. Guarded by Backend.mu.
type pubLane struct {
	queue    []*pubJob
	inflight int
}

// publishCoalesced stores msgs, contiguous, in an atomic batch that may
// carry other publishes of the same stream, and returns the sequence of
// msgs[0].
func (b *Backend) publishCoalesced(ctx context.Context, stream string, msgs []*nats.Msg) (uint64, error) {
	j := &pubJob{msgs: msgs, done: make(chan struct{})}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, core.ErrClosed
	}
	l := b.lanes[stream]
	if l == nil {
		l = &pubLane{}
		b.lanes[stream] = l
	}
	l.queue = append(l.queue, j)
	if l.inflight < laneInflight {
		l.inflight++
		b.wg.Add(1)
		go b.flushLane(stream, l)
	}
	b.mu.Unlock()
	select {
	case <-j.done:
		return j.first, j.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	if !j.taken { // never sent: drop it, nothing was stored
		for i, q := range l.queue {
			if q == j {
				l.queue = append(l.queue[:i:i], l.queue[i+1:]...)
				break
			}
		}
		b.mu.Unlock()
		return 0, core.Errorf(core.EUnavailable, "publish abandoned: %v", ctx.Err())
	}
	b.mu.Unlock()
	<-j.done // the batch carrying it ends within the request timeout
	return j.first, j.err
}

// flushLane sends l's queued publishes, a batch at a time, until the
// queue is empty. It owns one of l's inflight slots.
func (b *Backend) flushLane(stream string, l *pubLane) {
	defer b.wg.Done()
	for {
		b.mu.Lock()
		if len(l.queue) == 0 {
			l.inflight--
			if l.inflight == 0 {
				delete(b.lanes, stream)
			}
			b.mu.Unlock()
			return
		}
		n, size := 0, 0
		for n < len(l.queue) && (n == 0 || size+len(l.queue[n].msgs) <= b.opts.MaxAtomicBatch) {
			size += len(l.queue[n].msgs)
			l.queue[n].taken = true
			n++
		}
		jobs := append([]*pubJob(nil), l.queue[:n]...)
		l.queue = append(l.queue[:0:0], l.queue[n:]...)
		b.mu.Unlock()
		b.sendJobs(jobs, size)
	}
}

// sendJobs publishes jobs as one atomic batch and answers each. A batch
// the stream refused (an error answer: nothing of it was stored) that
// carried several publishes is sent again one publish at a time, so that
// one publish's refusal is not the others'.
func (b *Backend) sendJobs(jobs []*pubJob, size int) {
	all := make([]*nats.Msg, 0, size)
	for _, j := range jobs {
		all = append(all, j.msgs...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.RequestTimeout+readRetryFor)
	last, err := b.publishBatch(ctx, all)
	cancel()
	b.laneBatches.Add(1)
	b.lanePublishes.Add(uint64(len(jobs)))
	if err != nil && len(jobs) > 1 && core.ErrorCode(err) == core.EInvalid {
		for _, j := range jobs {
			b.sendJobs([]*pubJob{j}, len(j.msgs))
		}
		return
	}
	seq := last - uint64(len(all)) + 1
	for _, j := range jobs {
		if err != nil {
			j.err = err
		} else {
			j.first = seq
		}
		seq += uint64(len(j.msgs))
		close(j.done)
	}
}
