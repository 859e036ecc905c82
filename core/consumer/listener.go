package consumer

import "github.com/mqgate/mqgate/core"

// Listener receives batches from the consume services (RocketMQ
// MessageListenerConcurrently / MessageListenerOrderly, made asynchronous).
//
// Consume must not block: it takes ownership of the Delivery and answers
// every message later, from any goroutine, through the Delivery's methods.
// No goroutine is held per message while the answer is pending. Consume may
// also answer before it returns. The consumer never calls Consume from
// inside an Ack or Nack, so a listener may hold its own lock while it
// answers.
type Listener interface {
	Consume(d *Delivery)
}

// Delivery is one batch handed to a listener: messages of one queue, in
// queue order. Orderly deliveries are never overlapping for a queue: the
// next batch of that queue comes only after this one is fully answered.
//
// Every message must be answered exactly once with Ack or Nack; a second
// answer for the same index (or an index out of range) is ignored. When
// every message is answered the consume service processes the result
// (processConsumeResult). Answers after the consumer dropped the queue or
// shut down are ignored: the messages are delivered again from the
// committed offset (at-least-once).
//
// The messages are read-only for the listener. For a retry message,
// Message.UserTopic and Message.UserID give the original topic and id.
type Delivery struct {
	Group   string
	Queue   core.MessageQueue
	Orderly bool
	Msgs    []*core.Message

	answer    func(i int, ok bool, delayLevel int, reason string) // set by the consume service
	revoke    func(i int)                                         // set by the consume service
	pq        *ProcessQueue                                       // set by the consume service
	revocable bool                                                // set by the consume service
}

// Revocable reports whether the listener may give this delivery's
// unanswered messages back with Revoke (a Revoker trimming an idle queue).
// Orderly deliveries, and re-consumptions after a failed send-back (whose
// reconsumeTimes a new pull would lose), are not revocable. It takes no
// lock.
func (d *Delivery) Revocable() bool { return d.revocable }

// Revoke gives message i back unconsumed: the listener never handed it
// out and forgets it; the consumer pulls it again later. It counts as
// neither success nor failure, and it answers the message (a later Ack or
// Nack of i is ignored). Only for a Revocable delivery, from a Revoker's
// Revoke, with no listener lock held.
func (d *Delivery) Revoke(i int) {
	if d.revoke != nil {
		d.revoke(i)
	}
}

// Revoker is implemented by a Listener that buffers deliveries before
// handing their messages on (the HTTP gateway's inbox). When the consumer
// shrinks a queue's prefetch window (SetPrefetch, an idle group), it asks
// the listener to give back the messages of mq at or above offset from
// that it has not handed out: Revoke calls Delivery.Revoke for each (of
// Revocable deliveries of live ProcessQueues only), with none of its locks
// held, before it returns.
type Revoker interface {
	Revoke(mq core.MessageQueue, from int64)
}

// Dropped reports whether the consumer dropped the ProcessQueue this
// delivery came from (rebalance, offset reset, filter or mode change,
// topic delete, shutdown). Answers to a dropped delivery change nothing:
// its messages are delivered again by the queue's next owner, from the
// committed offset. A listener should hand nothing of it out any more
// (RocketMQ ConsumeRequest.run checks processQueue.isDropped first).
// Dropped takes no lock: a listener may call it holding its own.
func (d *Delivery) Dropped() bool { return d.pq != nil && d.pq.Dropped() }

// Ack answers message i with CONSUME_SUCCESS.
func (d *Delivery) Ack(i int) { d.answer(i, true, 0, "") }

// Nack answers message i with RECONSUME_LATER. delayLevel: 0 lets the
// engine decide (3 + reconsumeTimes), -1 sends it to the DLQ now, 1..N
// picks that delay level (RocketMQ delayLevelWhenNextConsume). Orderly:
// the message and every later one of the batch are consumed again after
// the suspend time (SUSPEND_CURRENT_QUEUE_A_MOMENT).
func (d *Delivery) Nack(i int, delayLevel int) { d.answer(i, false, delayLevel, "") }

// NackReason is Nack with the reason of the failure: stored with the
// retry or dead-letter copy (core.PropLastReason, shown as lastReason),
// clipped to core.MaxReasonLength characters. "" stores no reason.
func (d *Delivery) NackReason(i int, delayLevel int, reason string) {
	d.answer(i, false, delayLevel, core.ClipReason(reason))
}

// AckAll acks every message of the delivery.
func (d *Delivery) AckAll() {
	for i := range d.Msgs {
		d.Ack(i)
	}
}

// NackAll nacks every message of the delivery with delayLevel.
func (d *Delivery) NackAll(delayLevel int) {
	for i := range d.Msgs {
		d.Nack(i, delayLevel)
	}
}

// ListenerFunc adapts a function to Listener.
type ListenerFunc func(d *Delivery)

// Consume calls f(d).
func (f ListenerFunc) Consume(d *Delivery) { f(d) }
