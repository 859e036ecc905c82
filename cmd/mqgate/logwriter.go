package main

import (
	"io"
	"sync"
)

// maxPendingLog bounds the log bytes waiting for a write: past it, loggers
// wait for the write in progress instead of buffering without limit (a
// stalled stderr then slows the server as it did before, no more).
const maxPendingLog = 1 << 20

// coalescingWriter batches log lines into fewer writes, group-commit style,
// without a goroutine of its own. A Write appends its line to a shared
// buffer; if no write is in progress, that caller becomes the leader and
// writes everything pending, again and again until the buffer is empty,
// while other callers only append and return. At low rates every line is
// written at once by its own caller; under load (one request log line per
// request) the lines of many requests share one write system call instead
// of one each.
//
// Nothing is lost or reordered: a line is appended under mu in call order,
// and the leader stops only after seeing the buffer empty under mu, so a
// later line finds no leader and writes itself. A Write may return before
// its line reaches out (another caller is writing it); the process must
// not exit during a Write, which zerolog callers never do.
type coalescingWriter struct {
	out io.Writer

	mu      sync.Mutex
	space   sync.Cond // signalled after each write: pending shrank
	pending []byte    // lines waiting for the leader
	writing bool      // a leader is writing
	spare   []byte    // the leader's last written batch, reused
}

func newCoalescingWriter(out io.Writer) *coalescingWriter {
	w := &coalescingWriter{out: out}
	w.space.L = &w.mu
	return w
}

// Write takes p (copied: zerolog reuses its buffer) and writes it, or
// leaves it to the leader. Only the leader sees write errors.
func (w *coalescingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	for w.writing && len(w.pending) >= maxPendingLog {
		w.space.Wait()
	}
	w.pending = append(w.pending, p...)
	if w.writing {
		w.mu.Unlock()
		return len(p), nil
	}
	w.writing = true
	var err error
	for len(w.pending) > 0 {
		batch := w.pending
		w.pending = w.spare[:0]
		w.mu.Unlock()
		if _, werr := w.out.Write(batch); werr != nil && err == nil {
			err = werr
		}
		w.mu.Lock()
		w.spare = nil // never the array pending now uses
		if cap(batch) <= maxPendingLog {
			w.spare = batch
		}
		w.space.Broadcast()
	}
	w.writing = false
	w.mu.Unlock()
	return len(p), err
}
