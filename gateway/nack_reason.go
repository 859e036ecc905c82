package gateway

import (
	"context"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Nack implements core.ConsumeService: the reason (at most core.MaxReasonLength
// characters, "" for none) is stored with the retry and dead-letter copies
// as core.PropLastReason (API.md "Nack reason").
func (e *Embedded) Nack(ctx context.Context, group string, handles []string, delayLevel int, reason string) ([]core.HandleResult, error) {
	if err := core.ValidateNack(delayLevel, reason); err != nil {
		return nil, err
	}
	return e.apply(group, handles, opNack, delayLevel, core.ClipReason(reason), 0)
}

// reasonAnswerer is an answerer that takes a nack's reason
// (*consumer.Delivery).
type reasonAnswerer interface {
	NackReason(i int, delayLevel int, reason string)
}

// nackReason nacks message i of d with reason when d takes one.
func nackReason(d answerer, i, level int, reason string) {
	if r, ok := d.(reasonAnswerer); ok {
		r.NackReason(i, level, reason)
		return
	}
	d.Nack(i, level)
}

// withReason gives the nacks among calls the reason (orderly: the later
// messages of the batch answered with the failed one get it too).
func withReason(calls []call, reason string) {
	for k := range calls {
		if !calls[k].ok {
			calls[k].reason = reason
		}
	}
}

// leaseExpiredReason is the reason recorded when a lease runs out.
func leaseExpiredReason(l *lease) string {
	return "lease expired at " + l.deadline.UTC().Format(time.RFC3339) + " without ack or nack"
}
