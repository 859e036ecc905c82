package engine

// Counters is a snapshot of the schedule service's and the retry path's
// counters since the engine opened (for topic stats and /metrics).
type Counters struct {
	// Delayed counts messages published with a delay level or a
	// deliverAt / delaySeconds in the future; Timers is the part of them
	// kept in the timer index.
	Delayed, Timers int64
	// Delivered counts delayed messages (including retries) moved to their
	// real topic when due; Dropped those whose real topic was gone: deleted,
	// or deleted and re-created (another incarnation, REAL_TOPIC_UID).
	Delivered, Dropped int64
	// Skipped counts unreadable schedule entries passed over.
	Skipped int64
	// Retried counts sendMessageBack copies to %RETRY%<group>,
	// DeadLettered copies to %DLQ%<group>, Redriven dead letters sent back.
	Retried, DeadLettered, Redriven int64
}

// Counters returns the schedule and retry counters.
func (e *Engine) Counters() Counters {
	s := &e.sched
	return Counters{
		Delayed: s.delayed.Load(), Timers: s.timers.Load(),
		Delivered: s.moved.Load(), Dropped: s.dropped.Load(), Skipped: s.skip.Load(),
		Retried: s.retried.Load(), DeadLettered: s.deadLettered.Load(), Redriven: s.redriven.Load(),
	}
}
