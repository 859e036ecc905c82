package webhook

import (
	"time"
)

// stats is the mutable part of core.PushStatus, guarded by Pusher.mu.
type stats struct {
	delivered, failed   uint64
	consecutiveFailures int
	lastSuccessAt       time.Time
	lastErrorAt         time.Time
	lastError           string
}
