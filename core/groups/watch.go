package groups

import "sync"

// watcher is one Watch subscription. Changes are coalesced into a set of
// pending group names that one goroutine (owned by the watcher, stopped by
// cancel or Registry.Close) feeds into the channel, so notifying never
// blocks the registry and a slow reader never loses a change.
type watcher struct {
	out    chan string
	signal chan struct{} // capacity 1: pending is not empty
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex // leaf lock
	pending map[string]struct{}
}

// Watch returns a channel that receives the group's name whenever a group
// config changes or is deleted, its offsets are reset, its set of live
// clients changes or one of its orderly queue locks is released; cancel
// stops the watch (and is safe to call more than once). The channel is
// closed after cancel or Close.
func (r *Registry) Watch() (ch <-chan string, cancel func()) {
	w := &watcher{
		out:     make(chan string),
		signal:  make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		pending: map[string]struct{}{},
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		close(w.out)
		return w.out, func() {}
	}
	r.watchers[w] = struct{}{}
	r.mu.Unlock()
	go w.run()
	return w.out, func() {
		r.mu.Lock()
		delete(r.watchers, w)
		r.mu.Unlock()
		w.close()
	}
}

// notify tells every watcher that group changed. Callers hold r.mu.
func (r *Registry) notifyLocked(group string) {
	for w := range r.watchers {
		w.add(group)
	}
}

func (w *watcher) add(group string) {
	w.mu.Lock()
	w.pending[group] = struct{}{}
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *watcher) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *watcher) run() {
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
