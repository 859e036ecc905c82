package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3): delay
// seconds or an HTTP date. ok is false when the header is absent or
// unreadable; a date in the past is a zero delay. The result is capped at
// max so a receiver cannot park a group for days.
func parseRetryAfter(v string, now time.Time, max time.Duration) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(max/time.Second) {
			return max, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now)
	if d < 0 {
		d = 0
	}
	return min(d, max), true
}
