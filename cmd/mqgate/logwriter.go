package main

import (
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Log buffering. Every request writes a log line; written one by one that
// is a system call per request (and, with stderr on a pipe, a wake-up of
// the reader per line). logWriter collects lines and writes them in
// batches: when flushBytes are pending, else flushDelay after the first
// pending line. Warnings and errors go out at once, with everything
// before them, so what explains a failure is never held back.
const (
	flushBytes    = 32 << 10
	flushDelay    = 20 * time.Millisecond
	maxPendingLog = 1 << 20 // past it, loggers wait for the write in progress
)

// logWriter is a zerolog.LevelWriter. Its flusher goroutine is owned by
// Main: started by newLogWriter, stopped (after a last flush) by Close.
// Lines keep their order: they are appended under mu in call order and
// written by one writer at a time (writeMu), oldest first.
type logWriter struct {
	out io.Writer

	writeMu sync.Mutex // serialises writes to out; taken before mu

	mu      sync.Mutex
	space   sync.Cond // signalled when pending is taken
	pending []byte
	spare   []byte // the last written batch, reused
	closed  bool   // set by Close: write through from then on

	kick chan struct{} // a first line is pending (cap 1)
	full chan struct{} // flushBytes are pending (cap 1)
	stop chan struct{} // closed by Close
	done chan struct{} // closed when the flusher exits

	closeOnce sync.Once
}

func newLogWriter(out io.Writer) *logWriter {
	w := &logWriter{out: out, kick: make(chan struct{}, 1), full: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	w.space.L = &w.mu
	go w.flushLoop()
	return w
}

// Write buffers p (copied: zerolog reuses its buffer).
func (w *logWriter) Write(p []byte) (int, error) {
	return w.WriteLevel(zerolog.InfoLevel, p)
}

// WriteLevel buffers p, or for warnings and worse writes it at once after
// everything pending.
func (w *logWriter) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	if level >= zerolog.WarnLevel && level != zerolog.NoLevel {
		return w.writeThrough(p)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.writeThrough(p)
	}
	for len(w.pending) >= maxPendingLog {
		w.space.Wait()
	}
	first := len(w.pending) == 0
	w.pending = append(w.pending, p...)
	n := len(w.pending)
	w.mu.Unlock()
	switch {
	case n >= flushBytes:
		notify(w.full)
	case first:
		notify(w.kick)
	}
	return len(p), nil
}

// writeThrough writes everything pending, then p.
func (w *logWriter) writeThrough(p []byte) (int, error) {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	w.mu.Lock()
	w.pending = append(w.pending, p...)
	w.mu.Unlock()
	return len(p), w.flushLocked()
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default: // already signalled
	}
}

// flushLoop writes pending lines flushDelay after the first of them, or
// sooner when flushBytes are pending; on stop it writes what is left.
func (w *logWriter) flushLoop() {
	defer close(w.done)
	timer := time.NewTimer(flushDelay)
	timer.Stop()
	for {
		select {
		case <-w.kick:
			timer.Reset(flushDelay)
			select {
			case <-timer.C:
			case <-w.full:
				timer.Stop()
			case <-w.stop:
			}
		case <-w.full:
		case <-w.stop:
		}
		w.flush()
		select {
		case <-w.stop:
			w.flush() // lines written during the last flush
			return
		default:
		}
	}
}

func (w *logWriter) flush() {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	_ = w.flushLocked() // nowhere to report a failing stderr
}

// flushLocked writes everything pending; writeMu is held.
func (w *logWriter) flushLocked() error {
	w.mu.Lock()
	batch := w.pending
	w.pending = w.spare[:0]
	w.spare = nil
	w.space.Broadcast()
	w.mu.Unlock()
	if len(batch) == 0 {
		w.mu.Lock()
		w.spare = batch
		w.mu.Unlock()
		return nil
	}
	_, err := w.out.Write(batch)
	w.mu.Lock()
	if cap(batch) <= maxPendingLog {
		w.spare = batch
	}
	w.mu.Unlock()
	return err
}

// Close writes what is pending and stops the flusher. Lines logged after
// Close are written at once, unbuffered.
func (w *logWriter) Close() error {
	w.closeOnce.Do(func() {
		close(w.stop)
		<-w.done
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		w.flush() // lines appended before closed was set
	})
	return nil
}
