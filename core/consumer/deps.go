package consumer

import (
	"context"
	"time"

	"github.com/mqgate/mqgate/core"
)

// MessageReader is what the pull service and rebalance need from the
// engine (*engine.Engine satisfies it).
type MessageReader interface {
	// GetMessages reads up to max messages of mq from offset through the
	// filter (RocketMQ getMessage).
	GetMessages(mq core.MessageQueue, offset int64, max int, filter core.Filter) (core.GetResult, error)
	// QueueOffsets returns mq's [min, max) offsets.
	QueueOffsets(mq core.MessageQueue) (min, max int64, err error)
	// Arrival returns a channel closed once mq's max offset exceeds offset
	// (long polling, RocketMQ PullRequestHoldService).
	Arrival(mq core.MessageQueue, offset int64) <-chan struct{}
	// Topic returns a topic's config (ENotFound if absent).
	Topic(name string) (core.Topic, error)
	// SearchOffset returns the first offset of mq stored at or after t.
	SearchOffset(mq core.MessageQueue, t time.Time) (int64, error)
	// WatchTopics returns a channel that receives a topic's name after it
	// is created, grows or is deleted, so the client rebalances at once;
	// cancel ends the watch.
	WatchTopics() (ch <-chan string, cancel func())
}

// SendBacker stores a failed message for a later retry or in the
// dead-letter queue (RocketMQ sendMessageBack / asyncConsumerSendMsgBack,
// SPEC §6). delayLevel 0 lets the engine choose (3 + reconsumeTimes), -1
// forces the DLQ.
type SendBacker interface {
	SendMessageBack(ctx context.Context, group string, msg *core.Message, delayLevel, maxReconsumeTimes int) error
}

// Coordinator is the broker side of a group that a client talks to
// (*groups.Registry satisfies it): client registry, offsets, resets and
// orderly queue locks.
type Coordinator interface {
	Heartbeat(group, clientID string, now time.Time)
	Unregister(group, clientID string)
	Clients(group string) []string
	Watch() (ch <-chan string, cancel func())
	CommittedOffset(group, consumerID string, mq core.MessageQueue) (offset int64, ok bool, err error)
	CommitOffsets(group, consumerID string, offsets map[core.MessageQueue]int64) error
	TakeResets(group, consumerID string, owned []core.MessageQueue) map[core.MessageQueue]int64
	LockQueue(group, clientID string, mq core.MessageQueue, now time.Time) bool
	UnlockQueue(group, clientID string, mq core.MessageQueue)
}

// Deps are the engine-side services a PushConsumer uses.
type Deps struct {
	Reader      MessageReader
	SendBack    SendBacker
	Coordinator Coordinator
}
