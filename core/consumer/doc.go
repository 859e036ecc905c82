// Package consumer is mqgate's internal push consumer: RocketMQ's
// DefaultMQPushConsumerImpl in Go. One PushConsumer is one client of a
// consumer group; the HTTP gateway and the webhook pusher are its
// Listeners.
//
// It owns, per client:
//   - RebalanceImpl (rebalance.go): on start, every RebalanceInterval
//     while the last rebalance left a wanted queue untaken (unfinished),
//     and at once when the group's clients, config or offsets change
//     (Coordinator.Watch) or a topic it subscribes to is created, grows or
//     is deleted (MessageReader.WatchTopics; topicchange.go), allocate
//     the sorted queues among the sorted live clients (AllocateStrategy,
//     pure functions), drop queues no longer owned (mark dropped, persist
//     the offset, unlock) and create newly owned ones (start from the
//     committed offset, else consumeFrom). Each queue records its topic's
//     incarnation (Topic.UID): a queue whose topic was deleted, or deleted
//     and created again, is dropped without persisting its offset (it
//     counts positions in messages that are gone), and a pull that reads
//     another incarnation discards the read and asks for a rebalance;
//   - growth fences (fence.go), ORDERLY only: when a topic grew, a queue's
//     pull reads no message of a later layout (core.TopicLayout) until the
//     group consumed every old queue up to that growth's fence, so a
//     sharding key moved to another queue keeps its order. It waits on
//     offsetProgress (closed whenever an orderly result, a pull's offset
//     correction or a rebalance moves an offset), never by polling, except
//     every PersistInterval while the missing progress is another
//     client's. CONCURRENTLY groups ignore fences;
//   - PullMessageService (pull.go): one pull goroutine per owned queue
//     while it has work, long polling on the engine's Arrival channel for
//     at most LongPollingHold, then parked without a goroutine until the
//     engine reports an arrival (park.go), flow control by the
//     ProcessQueue thresholds, OFFSET_ILLEGAL correction; under a shared
//     CacheBudget (budget.go) each pull first reserves its batch's bytes —
//     at once up to the queue's fair share, beyond it in FIFO order only
//     while the total stays within the limit — and keeps only what fits;
//     a release wakes only the waiters that now fit;
//   - ProcessQueue (processqueue.go) with RocketMQ's removeMessage rule and
//     the orderly takeMessages / commit / makeMessageToConsumeAgain;
//   - prefetch trimming (trim.go): SetPrefetch lowering the window makes
//     each pull goroutine give back what is cached beyond it and not yet
//     handed out (orderly: pending, never taken; concurrently: through a
//     Revoker listener) and rewind its pull; the given-back offsets stay
//     unfinished until pulled again, so nothing is lost or repeated;
//   - the offset store (offsetstore.go): per owned queue a core.Progress —
//     the offset below which everything is finished plus the finished
//     offsets above it (read off the ProcessQueue when written, so an ack
//     costs nothing extra) — written as soon as it changes, one write in
//     flight, through the store's group commit (Coordinator.CommitProgress),
//     and on shutdown; a queue taken on skips the finished offsets its
//     stored position lists (BROADCASTING: per consumer);
//   - start positions: decided once when the consumer subscribes
//     (Coordinator.DecideStarts, persisted at once); a queue without a
//     stored position appeared later and starts at its first offset
//     (computePullFromWhere);
//   - ConsumeMessageConcurrentlyService (consume_concurrently.go) and
//     ConsumeMessageOrderlyService (consume_orderly.go), which hand
//     Deliveries to the Listener and process the answers
//     (processConsumeResult, sendMessageBack, cleanExpireMsg, suspend);
//   - a send-back queue (sendback.go): failed messages are queued by
//     whichever goroutine found them (an HTTP nack, the gateway's
//     lease-expiry loop, the scheduler) and one goroutine per client takes
//     everything waiting and stores it with one SendBacker call (one store
//     transaction, each copy committed with its settlement), then removes
//     the stored ones (removeMessage) or, if that failed, consumes them
//     again locally SendBackFailedDelay later. An orderly DLQ move
//     continues its queue from there;
//   - a scheduler (scheduler.go): one timer for every "later" (suspend,
//     re-consume after a failed send-back, consume timeout, the lock retry
//     of an orderly queue whose lock lapsed: tryLockLaterAndReconsume).
//
// Orderly locks: CLUSTERING orderly queues are consumed only under the
// engine's per-group queue lock, renewed by lockAll; BROADCASTING ones
// take no lock (each consumerId has its own offsets). A queue whose lock
// is not alive while messages wait retries the lock later (one scheduled
// task at a time), and lockAll resumes a queue whose lock comes alive again.
//
// Dropped queues: Delivery.Dropped reports a dropped ProcessQueue. A
// Listener that also implements DropListener (the gateway) is told after
// each drop, with no lock held, and voids what it holds of it; its orderly
// batch still out is released at once instead of holding the queue's lock
// until answered. A queue dropped with send-backs of its failed messages
// still out (concurrently) is not taken on again by this client until they
// are stored: their settlement is what tells the new request that the
// originals are finished. ConsumeTimeout < 0 turns cleanExpireMsg off: the
// listener owns timing (the gateway's leases).
//
// It must not import HTTP, the gateway or core/store; the engine and the
// group registry are reached through the small interfaces in deps.go
// (*engine.Engine and *groups.Registry satisfy them).
//
// Goroutines: per client one service loop (rebalance, heartbeat, lock
// renewal, offset persistence), one scheduler, one send-back loop and one
// pull goroutine per owned queue that is not parked; Shutdown stops and
// waits for all of them and cancels the parked wake-ups (send-backs still
// queued are dropped: those messages are delivered again from the
// committed offset). Nothing wakes while the client is idle except the
// heartbeat and (orderly) the lock renewal.
//
// Lock order: PushConsumer.mu → pullRequest.parkMu → the engine's
// arrival lock (park.go). PushConsumer.mu → pullRequest.mu → ProcessQueue.mu and
// offsetStore.mu and offsetProgress.mu and sendBackQueue.mu (leaves). The Coordinator may be called with
// PushConsumer.mu held (it never calls back). The Listener is never called
// with any lock held, and never from inside a Delivery's Ack or Nack: an
// answer that lets a queue continue goes through the scheduler.
// DropListener.QueueDropped is called with no lock held, from the service
// goroutine after a rebalance.
package consumer
