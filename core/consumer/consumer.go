package consumer

// CONTRACT SKETCH — the push consumer's exported surface. The owner
// replaces the bodies and may add to it.

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

var errTODO = errors.New("not implemented yet")

// Options configures one push-consumer client (RocketMQ
// DefaultMQPushConsumer).
type Options struct {
	Group    core.GroupConfig
	ClientID string // unique per client; for BROADCASTING the consumerId
	Listener Listener
	Logger   zerolog.Logger

	RebalanceInterval time.Duration // default 20s
	PersistInterval   time.Duration // offsets, default 1s
	PullBatchSize     int           // default 32
	SuspendTime       time.Duration // orderly, default 1s
	ConsumeTimeout    time.Duration // concurrently, default 15m
}

// QueueStatus is one owned queue's state, for status and offsets APIs.
type QueueStatus struct {
	Queue          core.MessageQueue
	ConsumedOffset int64 // in-memory offset (what would be committed)
	Cached         int   // messages in the ProcessQueue
	CachedBytes    int64
	InFlight       int // handed to the listener, not yet answered
	Locked         bool
}

// PushConsumer is one client of a group.
type PushConsumer struct{}

// New creates a client; deps are the engine-side services it uses.
// (Dependencies are declared as small interfaces by this package.)
func New(opts Options /*, deps … */) (*PushConsumer, error) { return nil, errTODO }

// Start registers the client, rebalances and starts pulling.
func (c *PushConsumer) Start() error { return errTODO }

// Shutdown stops pulling, persists offsets, unlocks queues, unregisters.
func (c *PushConsumer) Shutdown(ctx context.Context) error { return errTODO }

// UpdateConfig applies a changed group config (subscriptions, mode) live.
func (c *PushConsumer) UpdateConfig(cfg core.GroupConfig) {}

// Status returns the state of the owned queues.
func (c *PushConsumer) Status() []QueueStatus { return nil }
