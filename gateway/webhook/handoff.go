package webhook

import (
	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// Answer receives the outcome of message i of a Deliver call: ok, or a
// failure to retry at delayLevel (0: the policy's) with its reason
// (core.PropLastReason). Each message is answered once.
type Answer func(i int, ok bool, delayLevel int, reason string)

// Deliver pushes msgs of one queue of group (in order, one at a time when
// orderly) and answers each through answer. It is the pusher's delivery
// interface for a backend that leases messages itself (backend/jetstream)
// and so runs no push consumer: the consumer's Delivery stays inside this
// package. Like Consume it never blocks on the receiver.
func (p *Pusher) Deliver(group string, mq core.MessageQueue, orderly bool, msgs []*core.Message, answer Answer) {
	p.Consume(consumer.NewDeliveryReasons(group, mq, orderly, msgs, answer))
}
