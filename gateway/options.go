package gateway

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// PushClient is what the gateway needs of one push-consumer client
// (*consumer.PushConsumer satisfies it).
type PushClient interface {
	Start() error
	Shutdown(ctx context.Context) error
	UpdateConfig(cfg core.GroupConfig)
	Status() []consumer.QueueStatus
	// SetPrefetch sets the per-queue prefetch window (n <= 0: the default).
	SetPrefetch(n int)
}

// NewClientFunc builds (without starting) one push-consumer client; cmd
// wires it to consumer.New with the engine's services. opts carries the
// group, the client id and the gateway as Listener.
type NewClientFunc func(opts consumer.Options) (PushClient, error)

// GroupSource is the part of the group registry (*groups.Registry) the
// gateway reads: configs and change notifications.
type GroupSource interface {
	Get(name string) (core.Group, error)
	List() ([]core.Group, error)
	Watch() (ch <-chan string, cancel func())
}

// Options configures the embedded gateway. Zero values take the defaults.
type Options struct {
	// InstanceID is this gateway's push-consumer client id in CLUSTERING
	// groups; it must differ between gateway processes sharing an engine.
	// Default: "gw-" + a random suffix.
	InstanceID string
	// Groups is the group registry. Required.
	Groups GroupSource
	// NewClient builds push-consumer clients. Required.
	NewClient NewClientFunc
	// Key signs receipt handles (at least 32 bytes). Default: the key kept
	// in Dir (LoadOrCreateKey).
	Key []byte
	// PreviousKeys still verify handles signed before a key rotation
	// (each at least 32 bytes); they never sign one.
	PreviousKeys [][]byte
	// Dir is the data directory holding the generated key when Key is unset.
	Dir string
	// MaxWaitingPerGroup bounds the receives parked on one group; more
	// answer ETooMany (429). Default 256.
	MaxWaitingPerGroup int
	// MaxWaiting bounds the receives parked in all. Default 4096.
	MaxWaiting int
	// BroadcastIdleTimeout is how long a BROADCASTING consumerId may go
	// without a receive before its client is shut down (its offsets are
	// kept; it resumes from them on its next receive). Default 5m.
	BroadcastIdleTimeout time.Duration
	// IdlePrefetchAfter: a pull client nobody has received from for this
	// long has its per-queue prefetch window lowered to IdlePrefetch, and
	// what it cached beyond the window is given back (pulled again when
	// needed); the first receive after that restores the default window
	// (consumer.DefaultPullThresholdForQueue, 1000). An idle group then
	// caches at most IdlePrefetch + one pull batch (32) per queue, plus
	// what is leased. Default 30s.
	IdlePrefetchAfter time.Duration
	// IdlePrefetch is the per-queue window of an idle pull client.
	// Default 32.
	IdlePrefetch int
	// ClientShutdownTimeout bounds one client's Shutdown. Default 10s.
	ClientShutdownTimeout time.Duration
	// Logger receives the gateway's logs. Default: none.
	Logger zerolog.Logger
	// Timeline, if set, records what happens to each message (timeline.go);
	// share it with SettlingSendBack.Timeline.
	Timeline *Timeline
	// Parks, if set, stores parked keys (the group registry; blocked.go);
	// Start moves Dir's parked-keys.json of earlier versions into it.
	// Without it parks live in memory only.
	Parks ParkStore
	// Webhook is shared by the pushers of every push group: metrics
	// registerer, logger, network guard, Retry-After → delay level
	// (webhook.LevelAtLeast over the engine's delay levels). The zero value
	// delivers without metrics and with the default guard (no loopback).
	Webhook webhook.Options
}

// The consuming limits, defined once in core (core/limits.go); these
// names stay for the callers that know them from here.
const (
	MaxReceiveMessages = core.MaxReceiveMessages
	MaxWait            = core.MaxWait
	MinInvisible       = core.MinInvisible
	MaxInvisible       = core.MaxInvisible
	MaxHandles         = core.MaxHandles
)

// listenerOwnsTiming is the ConsumeTimeout of receive (inbox) clients:
// negative turns the consumer's cleanExpireMsg off. The lease is the
// consume timeout of the HTTP path: it starts at receive, extend moves it,
// and its expiry (leaseTable) answers RECONSUME_LATER. A message in the
// inbox has no clock: it waits until it is received or its ProcessQueue
// is dropped, never into the retry topic.
const listenerOwnsTiming = -1

// pushConsumeTimeout is the ConsumeTimeout of webhook (push) clients: a
// backstop only, since the pusher answers every message itself (requests
// bounded by push.timeoutSeconds ≤ 5 min, Retry-After pauses by
// webhook.Options.MaxRetryAfter, default 1 h). It counts from the
// dispatch to the pusher, so a message still queued in the pusher after
// this long (a backlog of many hours behind a slow receiver) would be sent
// back and posted again later.
const pushConsumeTimeout = MaxInvisible + 5*time.Minute

func (o *Options) setDefaults() {
	if o.MaxWaitingPerGroup <= 0 {
		o.MaxWaitingPerGroup = 256
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = 4096
	}
	if o.BroadcastIdleTimeout <= 0 {
		o.BroadcastIdleTimeout = 5 * time.Minute
	}
	if o.IdlePrefetchAfter <= 0 {
		o.IdlePrefetchAfter = 30 * time.Second
	}
	if o.IdlePrefetch <= 0 {
		o.IdlePrefetch = 32
	}
	if o.ClientShutdownTimeout <= 0 {
		o.ClientShutdownTimeout = 10 * time.Second
	}
}
