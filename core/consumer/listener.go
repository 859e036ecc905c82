package consumer

// CONTRACT SKETCH — the listener seam between the push consumer and the
// gateway / webhook pusher. The consumer owner may refine the internals,
// but these exported names are what the gateway codes against.

import "github.com/mqgate/mqgate/core"

// Listener receives batches from the consume services (RocketMQ
// MessageListenerConcurrently / MessageListenerOrderly, made asynchronous).
//
// Consume must not block: it takes ownership of the Delivery and answers
// every message later, from any goroutine, through the Delivery's methods.
// No goroutine is held per message while the answer is pending.
type Listener interface {
	Consume(d *Delivery)
}

// Delivery is one batch handed to a listener: messages of one queue, in
// queue order. Orderly deliveries are never overlapping for a queue: the
// next batch of that queue comes only after this one is fully answered.
//
// Every message must be answered exactly once with Ack or Nack; a second
// answer for the same index is ignored. When every message is answered the
// consume service processes the result (processConsumeResult).
type Delivery struct {
	Group   string
	Queue   core.MessageQueue
	Orderly bool
	Msgs    []*core.Message

	answer func(i int, ok bool, delayLevel int) // set by the consume service
}

// Ack answers message i with CONSUME_SUCCESS.
func (d *Delivery) Ack(i int) { d.answer(i, true, 0) }

// Nack answers message i with RECONSUME_LATER. delayLevel: 0 lets the
// engine decide (3 + reconsumeTimes), -1 sends it to the DLQ now, 1..N
// picks that delay level (RocketMQ delayLevelWhenNextConsume). Orderly:
// the message and every later one of the batch are consumed again after
// the suspend time (SUSPEND_CURRENT_QUEUE_A_MOMENT).
func (d *Delivery) Nack(i int, delayLevel int) { d.answer(i, false, delayLevel) }

// NewDelivery builds a Delivery whose answers go to answer. The consume
// services use it; listener packages use it in their tests.
func NewDelivery(group string, mq core.MessageQueue, orderly bool, msgs []*core.Message, answer func(i int, ok bool, delayLevel int)) *Delivery {
	return &Delivery{Group: group, Queue: mq, Orderly: orderly, Msgs: msgs, answer: answer}
}
