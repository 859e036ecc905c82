package api

import (
	"context"

	"github.com/mqgate/mqgate/core"
)

// Engine is what the HTTP layer needs from the message engine. It is
// declared here, by its user, so the handlers can run over any
// implementation; *engine.Engine (core/engine) satisfies it.
type Engine interface {
	// PutTopic creates or updates a topic; created reports which.
	PutTopic(cfg core.TopicConfig) (t core.Topic, created bool, err error)
	// Topic returns one topic (ENotFound if absent).
	Topic(name string) (core.Topic, error)
	// Topics lists user topics by name.
	Topics() ([]core.Topic, error)
	// DeleteTopic removes a topic and its messages.
	DeleteTopic(name string) error
	// TopicStats returns a topic's per-queue offset ranges.
	TopicStats(name string) (core.TopicStats, error)
	// CorruptMessages lists the topic's stored messages set aside because
	// they failed their checksum when read (ENotFound: no such topic).
	CorruptMessages(topic string) ([]core.CorruptMessage, error)

	// Put publishes messages atomically and durably; results are in order.
	Put(ctx context.Context, topic string, msgs []core.PutMessage) ([]core.PutResult, error)
	// Message returns a message of topic by its user id.
	Message(topic, id string) (*core.Message, error)
	// MessagesByKey returns up to limit messages of topic carrying key.
	MessagesByKey(topic, key string, limit int) ([]*core.Message, error)
	// GetMessages reads a queue from offset without consuming (browse).
	GetMessages(mq core.MessageQueue, offset int64, max int, filter core.Filter) (core.GetResult, error)

	// DLQMessages lists a group's dead letters (%DLQ%<group>) oldest
	// first from cursor ("" = the start), skipping redriven ones; next is
	// "" once the queue is exhausted. A bad cursor is EInvalid.
	DLQMessages(group, cursor string, limit int) (msgs []*core.Message, next string, err error)
	// DLQDepth counts a group's dead letters not yet redriven.
	DLQDepth(group string) (int64, error)
	// Redrive sends dead letters (those with the given original ids, or
	// all when ids is empty) back through %RETRY%<group> with
	// reconsumeTimes reset, and reports how many went.
	Redrive(ctx context.Context, group string, ids []string) (int, error)
}
