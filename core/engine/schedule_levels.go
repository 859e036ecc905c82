package engine

import (
	"time"

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
