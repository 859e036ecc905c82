package consumer

import "github.com/mqgate/mqgate/core"

// NewDelivery builds a Delivery whose answers go to answer instead of a
// consume service. Listener packages (gateway, gateway/webhook) use it in
// their tests to drive a listener without a running push consumer, and
// backend/jetstream feeds gateway/webhook.Pusher with it (one webhook
// implementation for every backend). answer is called for every answer
// given: the caller ignores repeated ones.
func NewDelivery(group string, mq core.MessageQueue, orderly bool, msgs []*core.Message, answer func(i int, ok bool, delayLevel int)) *Delivery {
	return NewDeliveryReasons(group, mq, orderly, msgs, func(i int, ok bool, delayLevel int, _ string) { answer(i, ok, delayLevel) })
}

// NewDeliveryReasons is NewDelivery whose answer also gets the reason of
// a NackReason ("" for Ack, Nack and a NackReason without one).
func NewDeliveryReasons(group string, mq core.MessageQueue, orderly bool, msgs []*core.Message, answer func(i int, ok bool, delayLevel int, reason string)) *Delivery {
	return &Delivery{Group: group, Queue: mq, Orderly: orderly, Msgs: msgs, answer: answer}
}
