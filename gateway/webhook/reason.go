package webhook

import (
	"fmt"
	"time"

	"github.com/mqgate/mqgate/core"
)

// failureReason is the nack reason a failed POST leaves on its messages
// (core.PropLastReason, lastReason in the DLQ listing): the outcome, how
// long the receiver took and the status line or connection error, e.g.
// "webhook status after 12ms: HTTP 503 Service Unavailable: busy".
func failureReason(r result, elapsed time.Duration) string {
	return core.ClipReason(fmt.Sprintf("webhook %s after %dms: %s", r.outcome, elapsed.Milliseconds(), r.err))
}
