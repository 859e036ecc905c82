package consumer

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

// Defaults of Options (RocketMQ DefaultMQPushConsumer unless noted).
const (
	DefaultRebalanceInterval          = 20 * time.Second
	DefaultPullBatchSize              = 32
	DefaultConsumeMessageBatchMaxSize = 1
	DefaultSuspendTime                = time.Second // suspendCurrentQueueTimeMillis
	DefaultConsumeTimeout             = 15 * time.Minute
	DefaultPullThresholdForQueue      = 1000
	DefaultPullThresholdSizeForQueue  = 100 << 20
	DefaultConsumeConcurrentlyMaxSpan = 2000
	DefaultHeartbeatInterval          = 10 * time.Second
	DefaultLockRenewInterval          = 20 * time.Second // REBALANCE_LOCK_INTERVAL
	DefaultLockMaxLiveTime            = 30 * time.Second // REBALANCE_LOCK_MAX_LIVE_TIME
	DefaultLongPollingHold            = 15 * time.Second // brokerSuspendMaxTimeMillis
	DefaultPullDelayOnError           = time.Second      // PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION is 3 s
	DefaultSendBackFailedDelay        = 5 * time.Second  // submitConsumeRequestLater
)

// Options configures one push-consumer client (RocketMQ
// DefaultMQPushConsumer). Zero values take the defaults.
type Options struct {
	Group    core.GroupConfig
	ClientID string // unique per client; for BROADCASTING the consumerId
	Listener Listener
	Logger   zerolog.Logger

	// RebalanceInterval: periodic rebalance, besides the immediate one when
	// the group's clients or config change. Default 20 s.
	RebalanceInterval time.Duration
	// PersistInterval: how long changed positions wait before they are
	// written. Default 0: at once, one write in flight at a time, each
	// joining the store's next group commit, which waits up to the store's
	// Linger (10 ms) for a publish to share it (RocketMQ writes every 5 s).
	// After a crash at most the finished messages of this window (plus
	// the write in flight) are delivered again.
	PersistInterval time.Duration
	// PullBatchSize: messages per pull. Default 32.
	PullBatchSize int
	// ConsumeMessageBatchMaxSize: messages per Delivery (of one queue).
	// Default 1; the HTTP gateway uses up to 32.
	ConsumeMessageBatchMaxSize int
	// SuspendTime: orderly, how long a failed queue waits before its
	// messages are delivered again. Default 1 s.
	SuspendTime time.Duration
	// ConsumeTimeout: concurrently, a delivery unanswered this long after
	// it was handed to the Listener is sent back with delay level 3
	// (cleanExpireMsg). Default 15 min. Negative: the listener owns timing
	// and answers every message itself — the consumer never sends one back
	// on its own (the HTTP gateway, whose leases start at receive and end
	// in RECONSUME_LATER).
	ConsumeTimeout time.Duration

	// PullThresholdForQueue and PullThresholdSizeForQueue cap what one
	// ProcessQueue caches (default 1000 messages, 100 MiB);
	// ConsumeConcurrentlyMaxSpan caps the offset span of a concurrent
	// queue (default 2000). Above them the queue stops pulling until
	// consumption frees space.
	PullThresholdForQueue      int
	PullThresholdSizeForQueue  int64
	ConsumeConcurrentlyMaxSpan int64

	// HeartbeatInterval must be well under the registry's client timeout.
	// Default 10 s.
	HeartbeatInterval time.Duration
	// LockRenewInterval: orderly queue locks are renewed this often
	// (default 20 s); a lock not renewed for LockMaxLiveTime (default 30 s)
	// is treated as lost by this client.
	LockRenewInterval time.Duration
	LockMaxLiveTime   time.Duration
	// LongPollingHold: an idle pull's goroutine waits for an arrival at
	// most this long; then the pull parks: its goroutine ends and the
	// engine starts one again when a message arrives (park.go). Default
	// 15 s.
	LongPollingHold time.Duration
	// PullDelayOnError: wait after a failed pull. Default 1 s.
	PullDelayOnError time.Duration
	// SendBackFailedDelay: a message whose send-back failed is consumed
	// again locally after this long. Default 5 s.
	SendBackFailedDelay time.Duration
	// CacheBudget, shared by the clients of one process, caps the bytes
	// all their ProcessQueues cache together (nil: per-queue limits only).
	CacheBudget *CacheBudget
	// Allocate splits queues among clients. Default AllocateAveragely.
	Allocate AllocateStrategy
	// Observer, when set, sees the deliveries and answers (observer.go).
	Observer Observer
}

func (o *Options) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.RebalanceInterval, DefaultRebalanceInterval)
	o.PersistInterval = max(o.PersistInterval, 0)
	def(&o.SuspendTime, DefaultSuspendTime)
	if o.ConsumeTimeout == 0 {
		o.ConsumeTimeout = DefaultConsumeTimeout // negative: the listener owns timing
	}
	def(&o.HeartbeatInterval, DefaultHeartbeatInterval)
	def(&o.LockRenewInterval, DefaultLockRenewInterval)
	def(&o.LockMaxLiveTime, DefaultLockMaxLiveTime)
	def(&o.LongPollingHold, DefaultLongPollingHold)
	def(&o.PullDelayOnError, DefaultPullDelayOnError)
	def(&o.SendBackFailedDelay, DefaultSendBackFailedDelay)
	if o.PullBatchSize <= 0 {
		o.PullBatchSize = DefaultPullBatchSize
	}
	if o.ConsumeMessageBatchMaxSize <= 0 {
		o.ConsumeMessageBatchMaxSize = DefaultConsumeMessageBatchMaxSize
	}
	if o.PullThresholdForQueue <= 0 {
		o.PullThresholdForQueue = DefaultPullThresholdForQueue
	}
	if o.PullThresholdSizeForQueue <= 0 {
		o.PullThresholdSizeForQueue = DefaultPullThresholdSizeForQueue
	}
	if o.ConsumeConcurrentlyMaxSpan <= 0 {
		o.ConsumeConcurrentlyMaxSpan = DefaultConsumeConcurrentlyMaxSpan
	}
	if o.Allocate == nil {
		o.Allocate = AllocateAveragely
	}
}
