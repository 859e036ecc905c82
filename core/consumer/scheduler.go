package consumer

import (
	"container/heap"
	"sync"
	"time"
)

// scheduler runs short tasks later: orderly redelivery after the suspend
// time, local re-consumption after a failed send-back
// (submitConsumeRequestLater), the consume-timeout check, and
// "continue consuming" hand-offs that must not run inside a listener's
// Ack. One goroutine, one timer re-armed to the earliest task; it owns
// nothing else. Tasks must not block.
type scheduler struct {
	mu    sync.Mutex
	tasks taskHeap
	seq   uint64
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

type task struct {
	at  time.Time
	seq uint64 // FIFO among equal deadlines
	fn  func()
}

type taskHeap []task

func (h taskHeap) Len() int { return len(h) }
func (h taskHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h taskHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *taskHeap) Push(x any)   { *h = append(*h, x.(task)) }
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = task{}
	*h = old[:len(old)-1]
	return t
}

func newScheduler() *scheduler {
	s := &scheduler{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// after runs fn on the scheduler's goroutine d from now (d <= 0: soon).
func (s *scheduler) after(d time.Duration, fn func()) {
	s.mu.Lock()
	s.seq++
	heap.Push(&s.tasks, task{at: time.Now().Add(d), seq: s.seq, fn: fn})
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// close stops the scheduler; pending tasks are dropped.
func (s *scheduler) close() {
	close(s.stop)
	<-s.done
}

func (s *scheduler) run() {
	defer close(s.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		var due []func()
		now := time.Now()
		wait := time.Hour
		s.mu.Lock()
		for len(s.tasks) > 0 {
			if s.tasks[0].at.After(now) {
				wait = s.tasks[0].at.Sub(now)
				break
			}
			due = append(due, heap.Pop(&s.tasks).(task).fn)
		}
		s.mu.Unlock()
		for _, fn := range due {
			select {
			case <-s.stop:
				return
			default:
			}
			fn()
		}
		if len(due) > 0 {
			continue // tasks may have scheduled more
		}
		t.Reset(wait)
		select {
		case <-s.stop:
			return
		case <-s.kick:
		case <-t.C:
		}
	}
}
