package consumer

import (
	"time"

	"github.com/mqgate/mqgate/core"
)

// Observer watches one client's consumption for metrics: each Delivery
// handed to the Listener, and each message's answer (an ack, or a nack,
// which a lease that ran out is too). It is called on the consumption
// path without the consumer's locks: it must be cheap and never block.
type Observer interface {
	// Delivered: n messages of group were handed to the Listener (again,
	// for a message whose send-back failed).
	Delivered(group string, n int)
	// Answered: m was answered ok (acked) or not, handed being when its
	// Delivery reached the Listener.
	Answered(group string, m *core.Message, ok bool, handed time.Time)
}
