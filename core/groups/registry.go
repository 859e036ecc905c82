package groups

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/internal/watch"
)

// Defaults of Options.
const (
	// DefaultClientTimeout is how long a client stays live without a
	// heartbeat (RocketMQ channelExpiredTimeout is 120 s; our clients are
	// in-process or on the same host, so we move their queues sooner).
	DefaultClientTimeout = 35 * time.Second
	// DefaultLockTTL is how long an orderly queue lock lasts unless renewed
	// (RocketMQ rocketmq.broker.rebalance.lockMaxLiveTime).
	DefaultLockTTL = 60 * time.Second
)

// Options configures a Registry. Zero values take the defaults.
type Options struct {
	// ClientTimeout: a client that has not sent a heartbeat for this long is
	// removed and its group's watchers are told (its queues move).
	ClientTimeout time.Duration
	// LockTTL: an orderly queue lock not renewed for this long is free.
	LockTTL time.Duration
	// Logger receives the registry's logs; default zerolog.Nop().
	Logger zerolog.Logger
	// Offsets, when set, lets the registry decide start positions when a
	// consumer subscribes (starts.go). Without it consumers apply
	// consumeFrom themselves when they find no stored position.
	Offsets OffsetSearcher
	// Commit, when set, runs fn in a read-write transaction of the
	// store's group commit (sharing its fsync with publishes); fn may run
	// more than once and must act only through tx. Default: Store.Update.
	Commit func(ctx context.Context, fn store.Hook) error
}

// Registry keeps consumer groups in the engine's bbolt file: configs,
// committed offsets (per group/topic/queue, and per consumer for
// BROADCASTING), and in memory the client registry (heartbeats, expiry)
// and the orderly queue locks.
type Registry struct {
	st   *store.Store
	opts Options
	log  zerolog.Logger

	mu       sync.Mutex
	clients  map[string]map[string]time.Time // group → client id → expiry
	locks    map[string]map[core.MessageQueue]lockEntry
	resets   map[resetKey]int64 // offset resets not yet taken by a consumer
	watchers watch.Set
	closed   bool

	kick chan struct{} // the earliest client deadline may have moved
	stop chan struct{}
	done chan struct{}
}

// Open opens the registry over the engine's store with default options.
func Open(st *store.Store) (*Registry, error) { return OpenWith(st, Options{}) }

// OpenWith opens the registry over the engine's store.
func OpenWith(st *store.Store, opts Options) (*Registry, error) {
	if st == nil {
		return nil, fmt.Errorf("groups: nil store")
	}
	if opts.ClientTimeout <= 0 {
		opts.ClientTimeout = DefaultClientTimeout
	}
	if opts.LockTTL <= 0 {
		opts.LockTTL = DefaultLockTTL
	}
	err := st.Update(func(tx store.Tx) error {
		for _, b := range []store.BucketName{bucketConfig, bucketOffsets, bucketStarts, bucketParks} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("groups: create buckets: %w", err)
	}
	r := &Registry{
		st:      st,
		opts:    opts,
		log:     opts.Logger,
		clients: map[string]map[string]time.Time{},
		locks:   map[string]map[core.MessageQueue]lockEntry{},
		resets:  map[resetKey]int64{},
		kick:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go r.expireLoop()
	return r, nil
}

// commit runs fn in a read-write transaction (Options.Commit).
func (r *Registry) commit(ctx context.Context, fn store.Hook) error {
	if r.opts.Commit != nil {
		return r.opts.Commit(ctx, fn)
	}
	return r.st.Update(fn)
}

// Close stops the registry's background work and its watchers. The bbolt
// file belongs to the engine and stays open.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	r.watchers.Close()
	return nil
}
