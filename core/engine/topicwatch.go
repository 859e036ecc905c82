package engine

import "sync"

// topicWatchers are the WatchTopics subscriptions. Each one coalesces
// changed topic names into a pending set that a goroutine of its own feeds
// to its channel, so announcing a change never blocks the engine and a
// slow reader sees every changed name at least once, never a backlog.
type topicWatchers struct {
	mu     sync.Mutex // leaf
	set    map[*topicWatcher]struct{}
	closed bool
}

type topicWatcher struct {
	out    chan string
	signal chan struct{} // capacity 1: pending is not empty
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex // leaf
	pending map[string]struct{}
}

// WatchTopics returns a channel that receives a topic's name after a
// change of it has committed: created, grown (or otherwise updated) or
// deleted — user topics and %RETRY% / %DLQ% topics alike. Consumers
// rebalance on it instead of waiting for their periodic rebalance. cancel
// ends the watch (safe to call more than once); the channel is closed
// after cancel or Close.
func (e *Engine) WatchTopics() (ch <-chan string, cancel func()) {
	w := &topicWatcher{
		out:     make(chan string),
		signal:  make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		pending: map[string]struct{}{},
	}
	ws := &e.watchers
	ws.mu.Lock()
	if ws.closed {
		ws.mu.Unlock()
		close(w.out)
		return w.out, func() {}
	}
	if ws.set == nil {
		ws.set = map[*topicWatcher]struct{}{}
	}
	ws.set[w] = struct{}{}
	ws.mu.Unlock()
	go w.run()
	return w.out, func() {
		ws.mu.Lock()
		delete(ws.set, w)
		ws.mu.Unlock()
		w.close()
	}
}

// notify announces a committed change of topic to every watcher.
func (ws *topicWatchers) notify(topic string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.set {
		w.add(topic)
	}
}

// closeAll ends every watch (engine Close); later watches get a closed
// channel.
func (ws *topicWatchers) closeAll() {
	ws.mu.Lock()
	ws.closed = true
	set := ws.set
	ws.set = nil
	ws.mu.Unlock()
	for w := range set {
		w.close()
	}
}

func (w *topicWatcher) add(topic string) {
	w.mu.Lock()
	w.pending[topic] = struct{}{}
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *topicWatcher) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// run feeds the pending names to out until stopped.
func (w *topicWatcher) run() {
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
