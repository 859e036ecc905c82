package engine

import (
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// ParseDelayLevels parses RocketMQ's messageDelayLevel (--delay-levels):
// policy.ParseDelayLevels, the one parser of every backend.
func ParseDelayLevels(s string) ([]time.Duration, error) { return policy.ParseDelayLevels(s) }

// levelQueue maps a delay level (1..) to its schedule queue (level-1); a
// level above the last is the last (policy.LevelIndex).
func (e *Engine) levelQueue(level int) int { return policy.LevelIndex(e.opts.DelayLevels, level) }

// dueMillis is the due time in unix ms of a message accepted at now with
// delay d, rounded up so that delivery at or after it is never early.
func dueMillis(now time.Time, d time.Duration) int64 {
	t := now.Add(d)
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

// validateDelay checks the delay fields of one message before anything is
// written (the rest of validatePut's rules). maxDelay bounds deliverAt.
func validateDelay(m *core.PutMessage, field func(string) string, now time.Time, maxDelay time.Duration) error {
	if m.DelayLevel < 0 {
		return core.FieldError(field("delayLevel"), "must be 1 or more (0 = no delay)")
	}
	if m.DelayLevel != 0 && !m.DeliverAt.IsZero() {
		return core.FieldError(field("delayLevel"), "at most one of delayLevel, delaySeconds and deliverAt")
	}
	if !m.DeliverAt.IsZero() && m.DeliverAt.Sub(now) > maxDelay {
		return core.FieldError(field("deliverAt"), "at most %s in the future", maxDelay)
	}
	return nil
}
