package engine

import (
	"sync/atomic"
	"time"
)

// dueLoop is the sleep and wake-up protocol both schedule tasks share (a
// levelTask per delay level, RocketMQ's DeliverDelayedMessageTimerTask, and
// the timerTask over the timer index). Instead of RocketMQ's fixed 100 ms
// re-scheduling it sleeps on one timer armed for the earliest due message,
// and a put of an earlier message wakes it through offer; it never polls.
type dueLoop struct {
	wake signal
	// armed is the due time (unix ms) the task sleeps until; idle when
	// nothing is pending, and idle while a pass runs so that any put
	// committed during the pass wakes it for one more.
	armed atomic.Int64
}

// offer wakes the task if a message due at due precedes its deadline.
func (d *dueLoop) offer(due int64) {
	if due < d.armed.Load() {
		d.wake.notify()
	}
}

// run is a task's goroutine (one of e.wg, ended by e.closing): it calls
// pass, which delivers what is due and returns the due time of the first
// message not yet due (0 when nothing is pending), then sleeps until that
// time or a wake-up. A failed pass is reported to failed and retried after
// scheduleRetryDelay.
func (d *dueLoop) run(e *Engine, pass func() (int64, error), failed func(error)) {
	defer e.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		d.armed.Store(idle)
		next, err := pass()
		var wait time.Duration
		switch {
		case err != nil:
			if isClosing(e) {
				return
			}
			failed(err)
			next = time.Now().Add(scheduleRetryDelay).UnixMilli()
			wait = scheduleRetryDelay
		case next == 0:
			next = idle
		default:
			wait = time.Until(time.UnixMilli(next))
		}
		d.armed.Store(next)
		if next != idle {
			timer.Reset(max(wait, 0))
		}
		select {
		case <-e.closing:
			return
		case <-timer.C:
		case <-d.wake:
			timer.Stop()
		}
	}
}

func isClosing(e *Engine) bool {
	select {
	case <-e.closing:
		return true
	default:
		return false
	}
}
