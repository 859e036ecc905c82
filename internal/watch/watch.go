// Package watch is a coalescing change notifier: a Set hands out
// subscriptions that receive the names of changed things (groups, topics).
// Each subscription keeps a set of pending names that a goroutine of its
// own feeds to its channel, so Notify never blocks the notifier and a slow
// reader sees every changed name at least once after the change, never a
// backlog.
//
// It imports nothing of mqgate. Every subscription's goroutine is owned by
// the subscription and stopped by its cancel or by Set.Close.
package watch

import "sync"

// Set is a group of subscriptions. The zero value is ready to use.
type Set struct {
	mu     sync.Mutex // leaf
	subs   map[*sub]struct{}
	closed bool
}

type sub struct {
	out    chan string
	signal chan struct{} // capacity 1: pending is not empty
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex // leaf
	pending map[string]struct{}
}

// Watch subscribes: the channel receives each name given to Notify after
// the subscription started. cancel ends it (safe to call more than once);
// the channel is closed after cancel or Close.
func (s *Set) Watch() (ch <-chan string, cancel func()) {
	w := &sub{
		out:     make(chan string),
		signal:  make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		pending: map[string]struct{}{},
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(w.out)
		return w.out, func() {}
	}
	if s.subs == nil {
		s.subs = map[*sub]struct{}{}
	}
	s.subs[w] = struct{}{}
	s.mu.Unlock()
	go w.run()
	return w.out, func() {
		s.mu.Lock()
		delete(s.subs, w)
		s.mu.Unlock()
		w.close()
	}
}

// Notify tells every subscription that name changed. It never blocks.
func (s *Set) Notify(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.subs {
		w.add(name)
	}
}

// Close ends every subscription and waits for their goroutines; later
// Watch calls get a closed channel.
func (s *Set) Close() {
	s.mu.Lock()
	s.closed = true
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	for w := range subs {
		w.close()
	}
}

func (w *sub) add(name string) {
	w.mu.Lock()
	w.pending[name] = struct{}{}
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *sub) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// run feeds the pending names to out until stopped.
func (w *sub) run() {
	defer close(w.done)
	defer close(w.out)
	for {
		select {
		case <-w.stop:
			return
		case <-w.signal:
		}
		w.mu.Lock()
		names := make([]string, 0, len(w.pending))
		for n := range w.pending {
			names = append(names, n)
		}
		clear(w.pending)
		w.mu.Unlock()
		for _, n := range names {
			select {
			case w.out <- n:
			case <-w.stop:
				return
			}
		}
	}
}
