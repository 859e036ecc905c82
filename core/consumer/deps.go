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
	// AfterArrival is Arrival without a waiting goroutine (an idle queue's
	// pull parks, park.go): fn runs once, on a goroutine of its own, when
	// Arrival's channel would close. It parks only when offset is the
	// queue's max offset; parked false (more to read, an offset to
	// correct, no known queue): fn never runs. stop cancels; it reports
	// whether fn was cancelled before it started.
	AfterArrival(mq core.MessageQueue, offset int64, fn func()) (stop func() bool, parked bool)
	// Topic returns a topic's config (ENotFound if absent).
	Topic(name string) (core.Topic, error)
	// SearchOffset returns the first offset of mq stored at or after t.
	SearchOffset(mq core.MessageQueue, t time.Time) (int64, error)
	// WatchTopics returns a channel that receives a topic's name after it
	// is created, grows or is deleted, so the client rebalances at once;
	// cancel ends the watch.
	WatchTopics() (ch <-chan string, cancel func())
}

// SendBacker stores failed messages for a later retry or in the
// dead-letter queue (RocketMQ sendMessageBack / asyncConsumerSendMsgBack,
// SPEC §6), many at a time: the client's send-back loop hands it
// everything waiting (sendback.go). Each SendBack's delayLevel 0 lets the
// engine choose (3 + reconsumeTimes), -1 forces the DLQ; its Settle names
// the consume position the message belongs to, and the implementation
// records it as finished there in the same transaction as the copy, so a
// crash never leaves a copy beside an unfinished original (a second retry
// or DLQ entry). A batch is of one client: one group incarnation and
// consumer. nil means every copy is stored (or dropped because the group
// incarnation is gone); an error means none is.
type SendBacker interface {
	SendMessagesBack(ctx context.Context, group string, backs []SendBack) error
}

// SendBack is one failed message of a SendMessagesBack batch.
type SendBack struct {
	Msg               *core.Message
	DelayLevel        int
	MaxReconsumeTimes int
	Settle            Settle
}

// Settle is the position a send-back finishes: the group incarnation, the
// consumer ("" for CLUSTERING), the queue and offset the message was
// pulled from (a retry message shows its original topic, so msg does not
// say), and the queue's reset epoch and topic incarnation as the client
// read them.
type Settle struct {
	Incarnation uint64
	ConsumerID  string
	Queue       core.MessageQueue // the queue the message was pulled from
	Offset      int64             // its offset there
	Epoch       uint64
	TopicUID    uint64
}

// Coordinator is the broker side of a group that a client talks to
// (*groups.Registry satisfies it): client registry, positions, resets and
// orderly queue locks.
type Coordinator interface {
	Heartbeat(group, clientID string, now time.Time)
	Unregister(group, clientID string)
	Clients(group string) []string
	Watch() (ch <-chan string, cancel func())
	// CommittedProgress is the stored position of (group, consumer, mq).
	CommittedProgress(group, consumerID string, mq core.MessageQueue) (p core.Progress, ok bool, err error)
	// CommittedOffset is CommittedProgress's Offset.
	CommittedOffset(group, consumerID string, mq core.MessageQueue) (offset int64, ok bool, err error)
	// CommitProgress merges positions of one group incarnation (dropping
	// what a reset or a deletion made stale).
	CommitProgress(ctx context.Context, group string, incarnation uint64, consumerID string, ps map[core.MessageQueue]core.Progress) error
	// CorrectOffset lowers a stored position beyond the queue's max to
	// offset under a fresh epoch, durably (OFFSET_ILLEGAL); ok false: the
	// stored position is not the one read at epoch, nothing written.
	CorrectOffset(ctx context.Context, group string, incarnation uint64, consumerID string, mq core.MessageQueue, epoch, topicUID uint64, offset int64) (newEpoch uint64, ok bool, err error)
	// DecideStarts persists the start positions of a consumer that
	// appears (idempotent); StartsDecided reports whether topic's were.
	DecideStarts(group, consumerID string) error
	StartsDecided(group string, incarnation uint64, consumerID, topic string) (bool, error)
	TakeResets(group, consumerID string, owned []core.MessageQueue) map[core.MessageQueue]int64
	LockQueue(group, clientID string, mq core.MessageQueue, now time.Time) bool
	UnlockQueue(group, clientID string, mq core.MessageQueue)
}

// Deps are the engine-side services a PushConsumer uses.
type Deps struct {
	Reader      MessageReader
	SendBack    SendBacker
	Coordinator Coordinator
	// Heartbeats, when set, sends this client's heartbeats together with
	// every other client's built with it (one timer per process);
	// otherwise each client has its own timer.
	Heartbeats *Heartbeats
}
