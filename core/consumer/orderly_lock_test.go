package consumer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// queueRecorder acks every message at once and records, per queue, the
// offsets in the order they were delivered.
type queueRecorder struct {
	mu   sync.Mutex
	offs map[int][]int64
	n    int
}

func newQueueRecorder() *queueRecorder { return &queueRecorder{offs: map[int][]int64{}} }

func (r *queueRecorder) Consume(d *Delivery) {
	r.mu.Lock()
	for _, m := range d.Msgs {
		r.offs[m.QueueID] = append(r.offs[m.QueueID], m.QueueOffset)
		r.n++
	}
	r.mu.Unlock()
	d.AckAll()
}

func (r *queueRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Issue 9 item 6: BROADCASTING + ORDERLY needs no broker lock — every
// consumerId has its own offsets — so every consumerId gets every message,
// each queue in order. (The per-group lock used to let one consumerId
// starve the others.)
func TestBroadcastingOrderlyEveryConsumerGetsAllInOrder(t *testing.T) {
	const total = 200
	e := newEnv(t)
	e.topic("t", 4)
	cfg := e.group(core.GroupConfig{Name: "bo", Subscriptions: []core.Subscription{{Topic: "t"}},
		MessageModel: core.Broadcasting, ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset})
	e.publish("t", "m", total, 50, func(i int) string { return fmt.Sprintf("k%d", i%8) })

	recs := []*queueRecorder{newQueueRecorder(), newQueueRecorder(), newQueueRecorder()}
	for i, r := range recs {
		c := e.consumer(cfg, fmt.Sprintf("b%d", i), r, func(o *Options) { o.ConsumeMessageBatchMaxSize = 4 })
		defer shutdown(t, c)
	}
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		for i, r := range recs {
			if n := r.count(); n < total {
				return fmt.Errorf("consumer b%d got %d of %d", i, n, total)
			}
		}
		return nil
	})
	for i, r := range recs {
		r.mu.Lock()
		n := 0
		for qid, offs := range r.offs {
			if !slices.IsSorted(offs) || len(slices.Compact(slices.Clone(offs))) != len(offs) {
				t.Errorf("b%d queue %d out of order or duplicated: %v", i, qid, offs)
			}
			n += len(offs)
		}
		r.mu.Unlock()
		if n != total {
			t.Errorf("b%d got %d deliveries, want %d", i, n, total)
		}
	}
}

// stallFirst holds the first delivery for stall before acking it (a
// listener that stalls past the lock window) and acks the rest at once.
type stallFirst struct {
	stall time.Duration
	wg    sync.WaitGroup

	mu   sync.Mutex
	offs []int64
}

func (s *stallFirst) Consume(d *Delivery) {
	s.mu.Lock()
	first := len(s.offs) == 0
	for _, m := range d.Msgs {
		s.offs = append(s.offs, m.QueueOffset)
	}
	s.mu.Unlock()
	if !first {
		d.AckAll()
		return
	}
	s.wg.Go(func() {
		time.Sleep(s.stall) // the test is about this time passing
		d.AckAll()
	})
}

func (s *stallFirst) got() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.offs)
}

// Issue 9 item 7: an orderly queue whose client-side lock lapsed (here: the
// listener stalls past LockMaxLiveTime) resumes consuming what it caches —
// without a new message arriving — once the lock is taken again
// (tryLockLaterAndReconsume, and lockAll's renewal).
func TestOrderlyLapsedLockResumesWithoutNewMessage(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "o", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset})
	e.publish("t", "m", 5, 5, nil)
	l := &stallFirst{stall: 250 * time.Millisecond}
	defer l.wg.Wait()
	c := e.consumer(cfg, "o1", l, func(o *Options) {
		o.LockMaxLiveTime = 100 * time.Millisecond
		o.LockRenewInterval = 300 * time.Millisecond
	})
	defer shutdown(t, c)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := l.got(); !slices.Equal(got, []int64{0, 1, 2, 3, 4}) {
			return fmt.Errorf("consumed %v", got)
		}
		return nil
	})
}
