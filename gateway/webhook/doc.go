// Package webhook is the webhook pusher: the consumer.Listener of push
// groups (SPEC §7 "Webhook push", API.md "Webhooks"). It POSTs the
// messages the push consumer's consume services hand it to the group's
// push.url, signed per Standard Webhooks, and answers each message with
// Ack (2xx, CONSUME_SUCCESS) or Nack (anything else, RECONSUME_LATER: the
// engine's sendMessageBack to %RETRY%<group>, delay levels, DLQ after
// maxReconsumeTimes).
//
// It owns: the per-group HTTP client (own Transport, pool sized to
// push.maxInFlight, no redirects, no environment proxy), the network guard
// against SSRF (dial-time allow/deny of the resolved IP), request signing
// and Verify for receivers, Retry-After pauses, delivery status and the
// mqgate_webhook_* metrics.
//
// Pusher.Consume takes the push consumer's deliveries; Pusher.Deliver takes
// a batch of messages and an answer func, for a backend that leases
// messages itself (backend/jetstream) and so knows nothing of core/consumer.
//
// It imports core, core/consumer and gateway/wire (the Message JSON it
// shares with receive answers) only from the project; never the engine,
// the gateway's receive side, api or cmd. The gateway's consumer
// manager creates one Pusher per push group, passes it as the
// PushConsumer's Listener, calls Update on config changes and Close when
// the group stops being a push group.
//
// # Standard Webhooks
//
// webhook-id is the message's original id (Message.UserID: a retry copy's
// ORIGIN_MESSAGE_ID), the same on every attempt; webhook-attempt (ours)
// is reconsumeTimes+1. A batch request is named by a digest of its
// messages' ids. ValidateConfig, for new push blocks, also requires a
// signing key of MinSecretBytes (24, counted on the decoded whsec_ key);
// a running pusher accepts what was stored before. URLChecker applies the
// network guard to a push.url at group creation; the guard denies the
// host's own interface addresses too (hostAddrs), unless an allow network
// holds them.
//
// # Invariants
//
//   - At most push.maxInFlight requests are in flight per group: they are
//     made only by workers, and workers never exceed the limit (after a
//     lower limit from Update, extra workers leave when their request ends).
//   - A waiting message holds no goroutine: deliveries wait in one FIFO.
//   - ORDERLY: a delivery's messages are posted by one worker, one request
//     at a time, in queue order; after a failure nothing later is posted and
//     the rest is nacked, so the consume service redelivers them in order.
//   - Every message handed to Consume is answered exactly once, also when
//     the pusher closes (queued and aborted ones are nacked).
//   - Every request has a deadline (push.timeoutSeconds) that also covers
//     reading the response, of which at most MaxResponseBytes are read.
//
// # Locking
//
// One mutex, Pusher.mu, guards the queue, worker counts, config, client,
// pause and stats; cond (on mu) wakes paused workers. mu is never held
// during network I/O or while calling Delivery.Ack/Nack, so answers may
// re-enter the consumer freely. Metrics are updated outside mu.
package webhook
