package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/mqgate/mqgate/core"
)

// ParseDelayLevels parses RocketMQ's messageDelayLevel: durations separated
// by spaces or commas ("1s 5s 10s 30s 1m …", "100ms 200ms"). Level i (from
// 1) is the i-th duration. Any count of levels is accepted, as long as each
// is positive; an empty string is an error (the caller keeps the default).
func ParseDelayLevels(s string) ([]time.Duration, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("delay levels: no durations in %q", s)
	}
	if len(fields) > maxDelayLevels {
		return nil, fmt.Errorf("delay levels: at most %d levels, got %d", maxDelayLevels, len(fields))
	}
	out := make([]time.Duration, len(fields))
	for i, f := range fields {
		d, err := time.ParseDuration(f)
		if err != nil {
			return nil, fmt.Errorf("delay levels: level %d: %w", i+1, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("delay levels: level %d: %s is not positive", i+1, f)
		}
		out[i] = d
	}
	return out, nil
}

// maxDelayLevels bounds the level count: each level is one queue of
// SCHEDULE_TOPIC_XXXX and one task, and queue ids are 16-bit on disk.
const maxDelayLevels = 1000

// levelQueue maps a delay level (1..) to its schedule queue (level-1); a
// level above the last is the last (RocketMQ clamps to maxDelayLevel).
func (e *Engine) levelQueue(level int) int {
	return min(level, len(e.opts.DelayLevels)) - 1
}

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
