package webhook

import (
	"time"

	"github.com/mqgate/mqgate/core"
)

// Status is a snapshot of one group's push delivery (core.PushStatus,
// the seam's type).
type Status = core.PushStatus

// stats is the mutable part of Status, guarded by Pusher.mu.
type stats struct {
	delivered, failed   uint64
	consecutiveFailures int
	lastSuccessAt       time.Time
	lastErrorAt         time.Time
	lastError           string
}
