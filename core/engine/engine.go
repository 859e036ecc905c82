package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/internal/watch"
)

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
	// DedupWindow is how long an idempotent publish's key is remembered
	// (core.PutMessage.DedupID; default DefaultDedupWindow, 5m). Records
	// are kept in the file, so a restart keeps them for their window.
	DedupWindow time.Duration
	// SegmentBytes and SegmentSpan bound the store's segments, the unit in
	// which retention and topic deletion free disk (store.Options;
	// defaults 256 MiB and 1 h).
	SegmentBytes int64
	SegmentSpan  time.Duration
	// FullPreCheck reads every page of the store before opening it even
	// when it was closed cleanly (store.Options.FullPreCheck).
	FullPreCheck bool
	// JobRedriven, if set, is told the user ids (core.Message.UserID) each
	// DLQ_REDRIVE job moved, after the chunk holding them committed, in
	// DLQ order (the gateway's timelines record REDRIVEN by job id). It
	// runs on the job's goroutine and must not block; a resumed job calls
	// it from Open, so set it before.
	JobRedriven func(j *core.Job, ids []string)
	// DeadLettered, if set, is told each message copied to a group's
	// dead-letter topic, after the copy committed (cmd/mqgate: the dlq
	// span when tracing is on). It runs on the send-back path: it must
	// not block.
	DeadLettered func(group string, m *core.Message)
	// GroupCommitted, if set, is told of every group commit once its
	// publishers are answered (store.Options.OnGroup; cmd/mqgate: the
	// commit span when tracing is on). It must not block.
	GroupCommitted func(start time.Time, ctxs []context.Context, ops int, err error)
	// RetentionUnit is the length of one hour of a topic's retentionHours
	// (default 1h). Only tests and benchmarks shrink it: a store filled
	// with 72 h retention can then be expired for real, by the cleaner,
	// without waiting 72 hours (cmd/mqbench/growth.sh).
	RetentionUnit time.Duration

	// syncHook is the store's test hook (store.Options.SyncHook), for
	// this package's tests of what answers wait for.
	syncHook func(store.SyncKind)
}

// DefaultDelayLevels are RocketMQ's messageDelayLevel (policy's table,
// shared by every backend).
var DefaultDelayLevels = policy.DefaultDelayLevels

func (o *Options) setDefaults() {
	if len(o.DelayLevels) == 0 {
		o.DelayLevels = DefaultDelayLevels
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = core.MaxDelay
	}
	if o.RetentionCheckInterval <= 0 {
		o.RetentionCheckInterval = time.Minute
	}
	if o.DedupWindow <= 0 {
		o.DedupWindow = DefaultDedupWindow
	}
	if o.RetentionUnit <= 0 {
		o.RetentionUnit = time.Hour
	}
}

// Engine is the embedded broker over one bbolt file.
type Engine struct {
	opts Options
	log  zerolog.Logger
	st   *store.Store

	// adminMu serialises topic create/update/delete so the topic cache is
	// updated in commit order. Lock order: adminMu → topicEntry.layout →
	// topicsMu → arrivals.mu.
	adminMu  sync.Mutex
	topicsMu sync.RWMutex
	topics   map[string]*topicEntry // user topics, for Put's queue selection

	arrivals arrivals
	watchers watch.Set // WatchTopics (topicwatch.go)

	sched delayService // schedule service, timers, retry/DLQ counters (schedule.go)

	trashWake signal // wakes trashLoop after a deletion (trash.go)
	// segsDue says a queue moved past messages since the cleaner last
	// looked for droppable segments (retention or the schedule service
	// trimmed); true at open. A pass with it false does not look.
	segsDue atomic.Bool

	cleaner cleanerStats // retention passes (cleaner.go)

	jobs jobTable // redrive and purge jobs (jobs.go)

	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup // the cleaner, the trash loop and the schedule service's tasks
}

// Open opens (creating if needed) the data directory. It fails fast if
// another process holds it and refuses a corrupt file with a clear error.
func Open(opts Options) (*Engine, error) {
	opts.setDefaults()
	if opts.Dir == "" {
		opts.Dir = "./data"
	}
	e := &Engine{
		opts:    opts,
		log:     opts.Logger,
		topics:  map[string]*topicEntry{},
		closing: make(chan struct{}),

		trashWake: newSignal(),
	}
	e.arrivals.init()
	st, err := store.Open(opts.Dir, store.Options{Logger: &e.log, OnCommit: e.arrivals.advance,
		SegmentBytes: opts.SegmentBytes, SegmentSpan: opts.SegmentSpan, FullPreCheck: opts.FullPreCheck,
		SyncHook: opts.syncHook, OnGroup: opts.GroupCommitted})
	if err != nil {
		return nil, err
	}
	e.st = st
	if err := e.load(); err != nil {
		st.Close()
		return nil, err
	}
	if err := e.startSchedule(); err != nil {
		st.Close()
		return nil, err
	}
	if err := e.resumeJobs(); err != nil {
		close(e.closing)
		e.stopJobs()
		e.wg.Wait()
		st.Close()
		return nil, err
	}
	e.segsDue.Store(true) // the first pass looks for droppable segments
	e.wg.Add(2)
	go e.cleanLoop()
	go e.trashLoop()
	return e, nil
}

// load fills the topic cache and the arrival table from the file.
func (e *Engine) load() error {
	return e.st.View(func(tx store.ReadTx) error {
		recs, err := tx.ListTopics()
		if err != nil {
			return err
		}
		for _, r := range recs {
			if !core.IsSystemTopic(r.Name) {
				e.topics[r.Name] = &topicEntry{rec: r}
			}
		}
		ranges, err := tx.QueueRanges()
		if err != nil {
			return err
		}
		for mq, r := range ranges {
			e.arrivals.set(mq, r[1])
		}
		return nil
	})
}

// Close stops the cleaner, commits or fails queued publishes (core.ErrClosed
// for any that arrive later), wakes every Arrival waiter and closes the
// bbolt file. It is idempotent.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		close(e.closing)
		e.stopJobs()
		e.wg.Wait()
		e.closeErr = e.st.Close()
		e.arrivals.closeAll()
		e.watchers.Close()
	})
	return e.closeErr
}

// Store is the engine's store; core/groups keeps its own buckets in it
// (store.Register) and shares its group commit (CommitHook).
func (e *Engine) Store() *store.Store { return e.st }

// Closed is closed when the engine starts shutting down.
func (e *Engine) Closed() <-chan struct{} { return e.closing }

// view runs a read transaction, answering core.ErrClosed once the engine is
// closing.
func (e *Engine) view(fn func(tx store.ReadTx) error) error {
	select {
	case <-e.closing:
		return core.ErrClosed
	default:
	}
	return e.st.View(fn)
}

// update runs a write transaction outside group commit (admin operations,
// cleaner chunks); bbolt serialises it with the writer.
func (e *Engine) update(fn func(tx store.Tx) error) error {
	select {
	case <-e.closing:
		return core.ErrClosed
	default:
	}
	return e.st.Update(fn)
}

// WriterStats reports the store's group-commit counters (mean group size,
// time applying and committing), for metrics.
func (e *Engine) WriterStats() store.WriterStats { return e.st.Stats() }
