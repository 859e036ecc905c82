package policy

import (
	"fmt"
	"strings"
	"time"
)

// DefaultDelayLevels are RocketMQ's messageDelayLevel:
// 1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h.
var DefaultDelayLevels = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
	6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
	20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
}

// MaxDelayLevels bounds the level count: on the embedded engine each level
// is one queue of SCHEDULE_TOPIC_XXXX and one delivery task.
const MaxDelayLevels = 1000

// ParseDelayLevels parses RocketMQ's messageDelayLevel: durations separated
// by spaces or commas ("1s 5s 10s 30s 1m …", "100ms 200ms"). Level i (from
// 1) is the i-th duration. Any count of levels up to MaxDelayLevels is
// accepted, as long as each is positive; an empty string is an error (the
// caller keeps the default).
func ParseDelayLevels(s string) ([]time.Duration, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("delay levels: no durations in %q", s)
	}
	if len(fields) > MaxDelayLevels {
		return nil, fmt.Errorf("delay levels: at most %d levels, got %d", MaxDelayLevels, len(fields))
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

// LevelIndex maps a delay level (1..) to its index in levels (level-1): a
// level above the last is the last (RocketMQ clamps to maxDelayLevel), a
// level below 1 is the first. On the embedded engine the index is the
// schedule queue of SCHEDULE_TOPIC_XXXX. levels must not be empty.
func LevelIndex(levels []time.Duration, level int) int {
	return min(max(level, 1), len(levels)) - 1
}

// LevelDelay is the delay of level (clamped as LevelIndex does).
func LevelDelay(levels []time.Duration, level int) time.Duration {
	return levels[LevelIndex(levels, level)]
}

// LevelAtLeast is the lowest level whose delay is at least d, or the
// highest level when none is; 0 for d <= 0 or no levels (the engine's own
// ladder). A webhook's Retry-After of d nacks with it, so the message is
// never redelivered sooner than the receiver asked.
func LevelAtLeast(levels []time.Duration, d time.Duration) int {
	if len(levels) == 0 || d <= 0 {
		return 0
	}
	for i, l := range levels {
		if l >= d {
			return i + 1
		}
	}
	return len(levels)
}
