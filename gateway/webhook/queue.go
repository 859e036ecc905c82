package webhook

import "github.com/mqgate/mqgate/core/consumer"

// job is one unit a worker takes: for a CONCURRENTLY delivery the messages
// [lo, hi) of one request; for an ORDERLY delivery the whole delivery,
// posted chunk by chunk in order by the same worker.
type job struct {
	d      *consumer.Delivery
	lo, hi int
}

func (j job) len() int { return j.hi - j.lo }

// nack answers every message of the job with RECONSUME_LATER.
func (j job) nack(level int) {
	for i := j.lo; i < j.hi; i++ {
		j.d.Nack(i, level)
	}
}

// fifo is the pusher's wait queue of jobs: deliveries are served in the
// order the consume services handed them over, across queues.
type fifo struct {
	items []job
	head  int
}

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) push(j job) {
	if q.head > 0 && q.head == len(q.items) {
		// Empty again: reuse the backing array from the start.
		q.items, q.head = q.items[:0], 0
	}
	q.items = append(q.items, j)
}

func (q *fifo) pop() job {
	j := q.items[q.head]
	q.items[q.head] = job{} // drop the delivery reference
	q.head++
	if q.head > 64 && q.head*2 >= len(q.items) {
		// Compact so a queue that never fully drains does not grow forever.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return j
}

// drain removes and returns every waiting job.
func (q *fifo) drain() []job {
	js := append([]job(nil), q.items[q.head:]...)
	clear(q.items)
	q.items, q.head = q.items[:0], 0
	return js
}
