package engine

// CONTRACT SKETCH — the exported surface other packages code against.
// The engine owner replaces the bodies; signatures change only by agreement.

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

var errTODO = errors.New("not implemented yet")

// Options configures the engine. Zero values take the defaults.
type Options struct {
	// Dir is the data directory; the bbolt file is Dir/mqgate.db.
	Dir string
	// Logger receives the engine's logs; default zerolog.Nop().
	Logger zerolog.Logger
	// DelayLevels are the durations of delay levels 1..N (default the 18
	// RocketMQ levels 1s … 2h).
	DelayLevels []time.Duration
	// MaxDelay bounds delaySeconds / deliverAt (default 40 days).
	MaxDelay time.Duration
	// RetentionCheckInterval is how often the cleaner runs (default 1m).
	RetentionCheckInterval time.Duration
}

// Engine is the embedded broker over one bbolt file.
type Engine struct{}

// Open opens (creating if needed) the data directory. It fails fast if
// another process holds it and refuses a corrupt file with a clear error.
func Open(opts Options) (*Engine, error) { return nil, errTODO }

// Close stops background work, flushes and closes the bbolt file.
func (e *Engine) Close() error { return errTODO }

// PutTopic creates or updates a topic; created reports which. Queue count
// may grow, never shrink (EConflict).
func (e *Engine) PutTopic(cfg core.TopicConfig) (t core.Topic, created bool, err error) {
	return core.Topic{}, false, errTODO
}

// Topic returns a topic (ENotFound if absent).
func (e *Engine) Topic(name string) (core.Topic, error) { return core.Topic{}, errTODO }

// Topics lists user topics by name.
func (e *Engine) Topics() ([]core.Topic, error) { return nil, errTODO }

// DeleteTopic removes a topic and its messages.
func (e *Engine) DeleteTopic(name string) error { return errTODO }

// TopicStats returns a topic's per-queue offset ranges.
func (e *Engine) TopicStats(name string) (core.TopicStats, error) { return core.TopicStats{}, errTODO }

// Put publishes messages to a user topic, atomically, durably (synced)
// before it returns. Results are in order.
func (e *Engine) Put(ctx context.Context, topic string, msgs []core.PutMessage) ([]core.PutResult, error) {
	return nil, errTODO
}

// Message returns a message of topic by its user id.
func (e *Engine) Message(topic, id string) (*core.Message, error) { return nil, errTODO }

// MessagesByKey returns up to limit messages of topic carrying key.
func (e *Engine) MessagesByKey(topic, key string, limit int) ([]*core.Message, error) {
	return nil, errTODO
}

// GetMessages reads up to max messages of one queue from offset, applying
// the filter (tags code, then exact tag) — RocketMQ getMessage.
func (e *Engine) GetMessages(mq core.MessageQueue, offset int64, max int, filter core.Filter) (core.GetResult, error) {
	return core.GetResult{}, errTODO
}

// QueueOffsets returns a queue's [min, max) offsets.
func (e *Engine) QueueOffsets(mq core.MessageQueue) (min, max int64, err error) { return 0, 0, errTODO }

// Arrival returns a channel closed once the queue's max offset exceeds
// offset (or the topic is deleted, or the engine closes). It is the
// wake-up for long polling: no timers, no polling.
func (e *Engine) Arrival(mq core.MessageQueue, offset int64) <-chan struct{} { return nil }
