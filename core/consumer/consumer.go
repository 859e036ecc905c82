package consumer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

// ErrClosed is returned by Start after Shutdown.
var ErrClosed = errors.New("consumer: shut down")

// QueueStatus is one owned queue's state, for status and offsets APIs.
type QueueStatus struct {
	Queue          core.MessageQueue
	ConsumedOffset int64 // in-memory offset (what would be committed)
	Cached         int   // messages in the ProcessQueue
	CachedBytes    int64
	InFlight       int // handed to the listener, not yet answered
	Locked         bool
	Parked         bool // idle: no pull goroutine until a message arrives (park.go)
}

// Stats are a client's counters since it started.
type Stats struct {
	Delivered        int64 // messages handed to the listener
	Succeeded        int64 // answered CONSUME_SUCCESS
	Failed           int64 // answered RECONSUME_LATER (nack, expiry)
	SentBack         int64 // stored for retry or DLQ by sendMessageBack
	SendBackFailed   int64 // send-back failed: consumed again locally
	DeadLettered     int64 // orderly: sent to the DLQ after maxReconsumeTimes
	BroadcastDropped int64 // BROADCASTING failures, dropped (RocketMQ)
	Expired          int64 // concurrently: unanswered past ConsumeTimeout
	FlowControlled   int64 // pulls held back by the per-queue thresholds
	Parks            int64 // idle queues' pulls parked without a goroutine (park.go)
}

type stats struct {
	delivered, succeeded, failed, sentBack, sendBackFailed, deadLettered, broadcastDropped, expired, flowControlled, parks atomic.Int64
}

const (
	stateNew = iota
	stateRunning
	stateClosed
)

// PushConsumer is one client of a group (RocketMQ
// DefaultMQPushConsumerImpl): it rebalances the group's queues with the
// other clients, pulls its queues into ProcessQueues and hands batches to
// the Listener through the concurrent or orderly consume service.
type PushConsumer struct {
	opts  Options
	deps  Deps
	log   zerolog.Logger
	group string

	mu         sync.Mutex
	state      int
	cfg        core.GroupConfig
	consumerID string                             // "" CLUSTERING, ClientID BROADCASTING
	table      map[core.MessageQueue]*pullRequest // processQueueTable
	draining   map[core.MessageQueue]*pullRequest // orderly, dropped with a batch out
	inflight   map[*deliveryState]struct{}        // concurrently, for cleanExpireMsg
	expiry     bool                               // a cleanExpireMsg task is scheduled
	revoked    []*pullRequest                     // dropped, listener not told yet (dropped.go)
	// backsOut counts, per request, the failed messages (concurrently)
	// queued for send-back and not yet finished (sendback.go).
	backsOut map[*pullRequest]int

	rb rebalanceCount // rebalances started and finished (RebalanceWait, dropped.go)
	// unfinished: the last rebalance left a wanted queue untaken (a topic
	// it could not read, a start it could not compute, a lock another
	// client holds, a drop in progress); the periodic rebalance runs only
	// then.
	unfinished bool

	prefetch    atomic.Int64  // per-queue message threshold in force (SetPrefetch)
	prefetchGen atomic.Uint64 // bumped when prefetch is lowered: pulls trim (trim.go)

	offsets *offsetStore
	sched   *scheduler
	backs   *sendBackQueue // failed messages waiting for sendMessageBack (sendback.go)
	stats   stats

	ctx         context.Context // cancelled at shutdown; bounds send-backs
	cancel      context.CancelFunc
	kick        chan struct{} // rebalance now
	persistKick chan struct{} // offsets became dirty
	persistDone chan struct{} // cap 1: the write in flight finished
	persisting  sync.WaitGroup
	stop        chan struct{}
	done        chan struct{} // service loop exited
	watchCancel func()
	topicCancel func() // the engine's topic watch
	pulls       sync.WaitGroup

	progress offsetProgress // wakes ORDERLY pulls held at a growth fence (fence.go)
}

// New creates a client; deps are the engine-side services it uses.
func New(opts Options, deps Deps) (*PushConsumer, error) {
	if opts.Listener == nil {
		return nil, errors.New("consumer: Options.Listener is required")
	}
	if opts.ClientID == "" {
		return nil, errors.New("consumer: Options.ClientID is required")
	}
	if deps.Reader == nil || deps.Coordinator == nil {
		return nil, errors.New("consumer: Deps.Reader and Deps.Coordinator are required")
	}
	if !core.ValidName(opts.Group.Name) {
		return nil, core.FieldError("name", "invalid group name %q", opts.Group.Name)
	}
	opts.setDefaults()
	c := &PushConsumer{
		opts:        opts,
		deps:        deps,
		log:         opts.Logger.With().Str("group", opts.Group.Name).Str("client", opts.ClientID).Logger(),
		group:       opts.Group.Name,
		cfg:         opts.Group,
		table:       map[core.MessageQueue]*pullRequest{},
		draining:    map[core.MessageQueue]*pullRequest{},
		inflight:    map[*deliveryState]struct{}{},
		backsOut:    map[*pullRequest]int{},
		kick:        make(chan struct{}, 1),
		persistKick: make(chan struct{}, 1),
		persistDone: make(chan struct{}, 1),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	c.consumerID = c.wantConsumerID(opts.Group)
	c.prefetch.Store(int64(opts.PullThresholdForQueue))
	c.offsets = newOffsetStore(func() { signal(c.persistKick) })
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func (c *PushConsumer) wantConsumerID(cfg core.GroupConfig) string {
	if cfg.MessageModel == core.Broadcasting {
		return c.opts.ClientID
	}
	return ""
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Start registers the client, rebalances and starts pulling.
func (c *PushConsumer) Start() error {
	c.mu.Lock()
	switch c.state {
	case stateRunning:
		c.mu.Unlock()
		return nil
	case stateClosed:
		c.mu.Unlock()
		return ErrClosed
	}
	c.state = stateRunning
	c.mu.Unlock()

	c.sched = newScheduler()
	c.backs = newSendBackQueue()
	go c.sendBackLoop()
	watch, cancel := c.deps.Coordinator.Watch()
	c.watchCancel = cancel
	topics, topicCancel := c.deps.Reader.WatchTopics()
	c.topicCancel = topicCancel
	c.deps.Coordinator.Heartbeat(c.group, c.opts.ClientID, time.Now())
	if c.deps.Heartbeats != nil {
		c.deps.Heartbeats.add(c.group, c.opts.ClientID)
	}
	// Decide (once, persisted at once) where this consumer starts in every
	// queue that exists now; queues that appear later start at their first
	// offset. A BROADCASTING consumerId appears here; a CLUSTERING group's
	// start was decided when it subscribed, this only covers groups
	// written by an older version.
	if err := c.deps.Coordinator.DecideStarts(c.group, c.consumerID); err != nil && core.ErrorCode(err) != core.ENotFound {
		c.log.Warn().Err(err).Msg("decide start positions")
	}
	c.doRebalance()
	go c.serviceLoop(watch, topics)
	return nil
}

// Rebalance asks for a rebalance at once (e.g. after a subscribed topic
// was created or grew).
func (c *PushConsumer) Rebalance() { signal(c.kick) }

// UpdateConfig applies a changed group config (subscriptions, filters,
// mode, model) live: the next rebalance, run at once, drops the queues
// whose subscription changed and pulls the new ones.
func (c *PushConsumer) UpdateConfig(cfg core.GroupConfig) {
	filters := map[string]core.Filter{}
	for _, sub := range c.subscriptions(cfg) {
		filters[sub.topic] = sub.filter
	}
	c.mu.Lock()
	c.cfg = cfg
	// Before returning: a message published after UpdateConfig must be
	// judged by the new filter, and the rebalance below runs later.
	for _, pr := range c.table {
		if f, ok := filters[pr.mq.Topic]; !ok || !f.Same(pr.filter) {
			pr.stale.Store(true)
			pr.pq.freezeRead() // an ack before the drop must not commit past the old filter's reads
		}
	}
	c.mu.Unlock()
	signal(c.kick)
}

// Shutdown stops pulling, stores the send-backs of the nacks already
// answered (until ctx ends), persists offsets, unlocks queues, unregisters.
// Answers to deliveries still out are ignored afterwards; those messages
// are delivered again from the committed offset.
func (c *PushConsumer) Shutdown(ctx context.Context) error { return c.shutdown(ctx, true) }

// shutdown without persist is a crash (tests): offsets are not persisted
// and the client neither unlocks nor unregisters.
func (c *PushConsumer) shutdown(ctx context.Context, persist bool) error {
	c.mu.Lock()
	if c.state != stateRunning {
		c.state = stateClosed
		c.mu.Unlock()
		return nil
	}
	c.state = stateClosed
	var prs []*pullRequest
	for _, pr := range c.table {
		pr.pq.SetDropped()
		close(pr.stop)
		pr.forgetParked()
		prs = append(prs, pr)
	}
	for _, pr := range c.draining {
		prs = append(prs, pr)
	}
	c.table, c.draining = map[core.MessageQueue]*pullRequest{}, map[core.MessageQueue]*pullRequest{}
	for st := range c.inflight {
		st.abandon()
	}
	clear(c.inflight)
	c.mu.Unlock()

	close(c.stop)
	<-c.done
	if c.deps.Heartbeats != nil {
		// Before anything else: a client shut down as in a crash must
		// go silent so the registry expires it.
		c.deps.Heartbeats.remove(c.group, c.opts.ClientID)
	}
	c.persisting.Wait() // the last periodic write lands before the final one
	c.watchCancel()
	c.topicCancel()
	c.sched.close()
	waited := make(chan struct{})
	go func() { c.pulls.Wait(); close(waited) }()
	var err error
	select {
	case <-waited:
	case <-ctx.Done():
		err = ctx.Err() // a listener blocked in Consume; the pulls exit when it returns
	}
	if persist {
		c.backs.drain(ctx) // nacks answered before the shutdown reach their copies
	}
	c.cancel()
	c.backs.close() // what drain left (ctx ended, or a crash) is delivered again

	// persistAll, then unlock (RocketMQ shutdown: persistConsumerOffset,
	// unregisterClient, and unlockAll for orderly).
	final := map[core.MessageQueue]core.Progress{}
	for _, pr := range prs {
		pr.mu.Lock()
		noCommit := pr.noCommit
		pr.mu.Unlock()
		if p, ok := c.offsets.take(pr.mq); ok && !noCommit && persist {
			final[pr.mq] = p
		}
	}
	if perr := c.commitProgress(context.Background(), final); perr != nil {
		c.log.Error().Err(perr).Msg("persist offsets at shutdown")
		err = errors.Join(err, perr)
	}
	if !persist {
		return err // a crash: the registry expires the client and its locks
	}
	for _, pr := range prs {
		if pr.orderly {
			c.deps.Coordinator.UnlockQueue(c.group, c.opts.ClientID, pr.mq)
		}
	}
	c.deps.Coordinator.Unregister(c.group, c.opts.ClientID)
	return err
}

// SetPrefetch changes how many messages each owned queue may cache (the
// pull threshold) while running: a gateway lowers it for a group nobody
// has received from for a while, and raises it again when receivers come
// back. n <= 0 restores Options.PullThresholdForQueue. Lowering it trims
// every queue to the new window at once: what is cached beyond it and not
// yet handed out by the listener is given back and pulled again later
// (trim.go), so an idle group's memory shrinks instead of waiting for
// consumption. Raising it wakes the queues held by flow control.
func (c *PushConsumer) SetPrefetch(n int) {
	if n <= 0 {
		n = c.opts.PullThresholdForQueue
	}
	old := c.prefetch.Swap(int64(n))
	if int64(n) == old {
		return
	}
	if int64(n) < old {
		c.prefetchGen.Add(1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pr := range c.table {
		if int64(n) > old {
			// Wake pulls held by flow control or the budget; a parked
			// pull is caught up and needs nothing.
			signal(pr.nudge)
			pr.pq.wake()
			continue
		}
		if pr.pq.Count() <= n {
			// Nothing to give back, so an idle (parked) queue sleeps on;
			// a pull in progress checks prefetchGen before it pulls again.
			continue
		}
		signal(pr.nudge)
		pr.pq.wake()
		c.unparkPull(pr) // the pull goroutine trims
	}
}

// Status returns the state of the owned queues, by queue.
func (c *PushConsumer) Status() []QueueStatus {
	c.mu.Lock()
	prs := make([]*pullRequest, 0, len(c.table))
	for _, pr := range c.table {
		prs = append(prs, pr)
	}
	c.mu.Unlock()
	out := make([]QueueStatus, 0, len(prs))
	for _, pr := range prs {
		off, ok := c.offsets.read(pr.mq)
		if !ok {
			off = -1
		}
		out = append(out, QueueStatus{
			Queue: pr.mq, ConsumedOffset: off,
			Cached: pr.pq.Count(), CachedBytes: pr.pq.Bytes(),
			InFlight: int(pr.inFlight.Load()), Locked: pr.pq.Locked(), Parked: pr.isParked(),
		})
	}
	slices.SortFunc(out, func(a, b QueueStatus) int {
		if a.Queue.Less(b.Queue) {
			return -1
		}
		if b.Queue.Less(a.Queue) {
			return 1
		}
		return 0
	})
	return out
}

// Stats returns the client's counters.
func (c *PushConsumer) Stats() Stats {
	s := &c.stats
	return Stats{
		Delivered: s.delivered.Load(), Succeeded: s.succeeded.Load(), Failed: s.failed.Load(),
		SentBack: s.sentBack.Load(), SendBackFailed: s.sendBackFailed.Load(), DeadLettered: s.deadLettered.Load(),
		BroadcastDropped: s.broadcastDropped.Load(), Expired: s.expired.Load(), FlowControlled: s.flowControlled.Load(),
		Parks: s.parks.Load(),
	}
}

// serviceLoop owns the client's periodic work (RocketMQ RebalanceService,
// the heartbeat and persistAllConsumerOffset scheduled tasks, and
// ConsumeMessageOrderlyService's lockMQPeriodically), each on one timer,
// and rebalances at once when the group (watch) or a topic it subscribes
// to (topics: created, grown, deleted) changes.
// Positions are written as soon as they change (after PersistInterval if
// set), one write in flight at a time: the write joins the store's next
// group commit (waiting up to the store's Linger for a publish to share
// it), and what changes meanwhile goes with the following one.
// So an idle client wakes only for its heartbeat and periodic rebalance,
// and after a crash at most about one group commit of acknowledgements is
// delivered again.
func (c *PushConsumer) serviceLoop(watch, topics <-chan string) {
	defer close(c.done)
	// The periodic rebalance (RocketMQ RebalanceService, every 20 s) is
	// armed only while the last rebalance left something undone: every
	// input of a rebalance — the group's config, clients and resets
	// (Coordinator.Watch), its topics (WatchTopics) — notifies this loop,
	// which rebalances at once, so a pass over a settled client would
	// change nothing and only cost CPU on an idle server. Lock renewal
	// runs only while this client holds queues that need a lock (ORDERLY,
	// CLUSTERING): a concurrent or broadcast client never wakes for it.
	rebalance := newPeriodic(c.opts.RebalanceInterval)
	lock := newPeriodic(c.opts.LockRenewInterval)
	rearm := func() {
		lock.want(c.needsLocks())
		c.mu.Lock()
		want := c.unfinished
		c.mu.Unlock()
		rebalance.want(want)
	}
	rearm()
	heartbeat := time.NewTimer(c.opts.HeartbeatInterval)
	if c.deps.Heartbeats != nil {
		heartbeat.Stop() // sent with every other client's (heartbeat.go)
	}
	persist := time.NewTimer(time.Hour)
	persist.Stop()
	persistArmed, inFlight := false, false
	defer rebalance.t.Stop()
	defer heartbeat.Stop()
	defer lock.t.Stop()
	defer persist.Stop()
	startPersist := func() {
		inFlight = true
		c.persisting.Add(1)
		go func() {
			defer c.persisting.Done()
			c.persistAll()
			c.persistDone <- struct{}{} // cap 1, one write in flight
		}()
	}
	for {
		select {
		case <-c.stop:
			return
		case name, ok := <-watch:
			if !ok {
				watch = nil
				continue
			}
			if name == c.group {
				c.doRebalance()
				rearm()
			}
		case name, ok := <-topics:
			if !ok {
				topics = nil
				continue
			}
			if c.subscribesTo(name) {
				c.doRebalance()
				rearm()
			}
		case <-c.kick:
			c.doRebalance()
			rearm()
		case <-rebalance.t.C:
			rebalance.fired()
			c.doRebalance()
			rearm()
		case <-heartbeat.C:
			c.deps.Coordinator.Heartbeat(c.group, c.opts.ClientID, time.Now())
			heartbeat.Reset(c.opts.HeartbeatInterval)
		case <-lock.t.C:
			lock.fired()
			c.lockAll()
			lock.want(c.needsLocks())
		case <-c.persistKick:
			switch {
			case inFlight, persistArmed:
				// Picked up when the write in flight (or the timer) ends.
			case c.opts.PersistInterval > 0:
				persistArmed = true
				persist.Reset(c.opts.PersistInterval)
			default:
				startPersist()
			}
		case <-persist.C:
			persistArmed = false
			if !inFlight {
				startPersist()
			}
		case <-c.persistDone:
			inFlight = false
			if c.offsets.dirtyCount() > 0 && !persistArmed {
				if c.opts.PersistInterval > 0 {
					persistArmed = true
					persist.Reset(c.opts.PersistInterval)
				} else {
					startPersist()
				}
			}
		}
	}
}

// persistAll writes the changed positions (RocketMQ persistAll).
func (c *PushConsumer) persistAll() {
	dirty := c.offsets.takeDirty()
	if len(dirty) == 0 {
		return
	}
	// Lazy: the write may wait a few milliseconds to share a publish's
	// commit (store Options.Linger) instead of costing one of its own.
	if err := c.commitProgress(core.WithLazyCommit(context.Background()), dirty); err != nil {
		c.log.Error().Err(err).Msg("persist offsets")
		c.offsets.markDirty(dirty)
		signal(c.persistKick)
	}
}

// commitProgress writes positions for this client's group incarnation and
// consumer.
func (c *PushConsumer) commitProgress(ctx context.Context, ps map[core.MessageQueue]core.Progress) error {
	c.mu.Lock()
	cid, inc := c.consumerID, c.cfg.Incarnation
	c.mu.Unlock()
	return c.commitProgressAs(ctx, cid, inc, ps)
}

// commitProgressAs is commitProgress for callers holding c.mu.
func (c *PushConsumer) commitProgressAs(ctx context.Context, cid string, inc uint64, ps map[core.MessageQueue]core.Progress) error {
	if len(ps) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.deps.Coordinator.CommitProgress(ctx, c.group, inc, cid, ps)
}

func (c *PushConsumer) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == stateRunning
}

// periodic is a timer armed only while its task is wanted.
type periodic struct {
	t     *time.Timer
	every time.Duration
	armed bool
}

func newPeriodic(every time.Duration) *periodic {
	return &periodic{t: time.NewTimer(every), every: every, armed: true}
}

// want arms the timer (a full period from now) or stops it.
func (p *periodic) want(on bool) {
	switch {
	case on && !p.armed:
		p.t.Reset(p.every)
	case !on && p.armed:
		p.t.Stop()
	}
	p.armed = on
}

// fired records that the timer fired: want(true) re-arms it.
func (p *periodic) fired() { p.armed = false }
