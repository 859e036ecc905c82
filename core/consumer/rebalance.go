package consumer

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/core"
)

// pullRequest is one owned queue (RocketMQ PullRequest plus the
// per-queue state of the consume services). Its pull goroutine owns
// nextOffset; stop is closed when the queue is dropped.
type pullRequest struct {
	mq       core.MessageQueue
	pq       *ProcessQueue
	filter   core.Filter
	orderly  bool
	stop     chan struct{}
	inFlight atomic.Int64
	// stale is set by UpdateConfig when the queue's filter changed: a read
	// made with the old filter must not move the offset past messages the
	// new one wants (NO_MATCHED_MSG), so it is discarded until rebalance
	// replaces this request.
	stale atomic.Bool
	// uid is the topic incarnation the queue was created for (0: a
	// %RETRY% topic not created yet; its first read adopts the uid). A
	// read or rebalance that finds another one drops the queue without
	// committing: its offsets belong to the deleted topic (topicchange.go).
	uid atomic.Uint64
	// heldAtFence: the pull waits at a growth fence (fence.go).
	heldAtFence atomic.Bool
	// epoch is the offset-reset generation of the queue's position (an
	// OFFSET_ILLEGAL correction starts a new one: correctOffset).
	epoch atomic.Uint64

	nextOffset int64              // pull goroutine only
	trimGen    uint64             // the prefetch generation last trimmed to (trim.go); pull goroutine only
	meanSize   int64              // mean message size of the last read (budget reservations); pull goroutine only
	nudge      chan struct{}      // cap 1: the pull loop should look again (prefetch lowered)
	layouts    []core.TopicLayout // growth history (fence.go); pull goroutine only after creation

	parkMu sync.Mutex  // guards parked and unpark (park.go); after PushConsumer.mu, before the engine's locks
	parked bool        // no pull goroutine: waiting for an arrival or a nudge
	unpark func() bool // cancels the engine's wake-up of a parked pull

	mu          sync.Mutex     // orderly consume state; after PushConsumer.mu
	consuming   bool           // a batch is out or suspended: nothing else goes out
	outstanding bool           // a batch is out, not fully answered
	draining    bool           // dropped while a batch was out: finish it, then unlock
	noCommit    bool           // dropped for an offset reset: results must not commit
	current     *deliveryState // orderly: the batch out (release on drop)
	failing     failingHead    // orderly: the failing head, if any (suspend.go)
	lockRetry   bool           // orderly: a tryLockLaterAndReconsume is scheduled
	lockFree    bool           // BROADCASTING orderly: no broker lock (per-consumer offsets)
}

// subscription is one topic the client pulls, with its filter.
type subscription struct {
	topic  string
	filter core.Filter
	retry  bool
}

func (c *PushConsumer) subscriptions(cfg core.GroupConfig) []subscription {
	var subs []subscription
	for _, s := range cfg.Subscriptions {
		f, err := core.ParseSubscription(s)
		if err != nil {
			c.log.Error().Err(err).Str("topic", s.Topic).Msg("bad filter, subscription skipped")
			continue
		}
		subs = append(subs, subscription{topic: s.Topic, filter: f})
	}
	// copySubscription: CLUSTERING groups also consume their retry topic.
	if cfg.MessageModel != core.Broadcasting {
		subs = append(subs, subscription{topic: core.RetryTopic(cfg.Name), filter: core.MatchAll, retry: true})
	}
	return subs
}

// topicQueues returns the sorted queues of a topic and the topic (its
// UID and Layouts; zero when it does not exist); ok is false when the
// topic could not be read (keep what is owned rather than drop it on a
// transient error).
func (c *PushConsumer) topicQueues(s subscription) (qs []core.MessageQueue, t core.Topic, ok bool) {
	n := 0
	t, err := c.deps.Reader.Topic(s.topic)
	switch {
	case err == nil:
		n = t.Queues
	case core.ErrorCode(err) == core.ENotFound:
		t = core.Topic{}
		if s.retry {
			n = 1 // retryQueueNums: created by the first send-back
		}
	default:
		c.log.Warn().Err(err).Str("topic", s.topic).Msg("rebalance: read topic")
		return nil, core.Topic{}, false
	}
	for i := 0; i < n; i++ {
		qs = append(qs, core.MessageQueue{Topic: s.topic, QueueID: i})
	}
	return qs, t, true
}

// doRebalance is RocketMQ RebalanceImpl.doRebalance: for each subscribed
// topic, allocate the sorted queues among the sorted live clients, then
// updateProcessQueueTableInRebalance. It runs on the service goroutine
// (and once in Start).
func (c *PushConsumer) doRebalance() {
	defer c.rebalanceEnd(c.rebalanceBegin()) // after the unlock below: no lock held
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateRunning {
		return
	}
	defer c.progress.moved() // offsets started, reset or dropped: re-check fences
	cfg := c.cfg
	orderly := cfg.ConsumeMode == core.Orderly

	// A changed message model changes whose offsets these are: start over.
	if cid := c.wantConsumerID(cfg); cid != c.consumerID {
		for _, pr := range c.table {
			c.dropLocked(pr, false)
		}
		c.consumerID = cid
	}

	clients := c.deps.Coordinator.Clients(c.group)
	if !slices.Contains(clients, c.opts.ClientID) {
		clients = append(clients, c.opts.ClientID)
		slices.Sort(clients)
	}
	want := map[core.MessageQueue]core.Filter{}
	keep := map[string]bool{}         // topics whose queues could not be read
	topics := map[string]core.Topic{} // the others: incarnation and layouts
	c.unfinished = false              // set below when a wanted queue is not taken on
	for _, s := range c.subscriptions(cfg) {
		qs, t, ok := c.topicQueues(s)
		if !ok {
			keep[s.topic] = true
			c.unfinished = true
			continue
		}
		topics[s.topic] = t
		mine := qs
		if cfg.MessageModel != core.Broadcasting {
			mine = c.opts.Allocate(c.opts.ClientID, qs, clients)
		}
		for _, mq := range mine {
			want[mq] = s.filter
		}
	}
	owned := make([]core.MessageQueue, 0, len(want))
	for mq := range want {
		owned = append(owned, mq)
	}
	slices.SortFunc(owned, func(a, b core.MessageQueue) int {
		if a.Less(b) {
			return -1
		}
		return 1
	})
	resets := c.deps.Coordinator.TakeResets(c.group, c.consumerID, owned)

	for mq, pr := range c.table {
		f, ok := want[mq]
		_, reset := resets[mq]
		switch {
		case !ok && keep[mq.Topic]:
		case !ok, reset, !f.Same(pr.filter), pr.orderly != orderly, otherIncarnation(pr, topics):
			// A queue of a deleted (or deleted and re-created) topic is
			// dropped without committing: its offset is the old topic's.
			gone := otherIncarnation(pr, topics)
			c.log.Info().Str("topic", mq.Topic).Int("queue", mq.QueueID).Bool("reset", reset).Bool("topicGone", gone).Msg("drop queue")
			c.dropLocked(pr, reset || gone)
		}
	}
	var started []*pullRequest
	for _, mq := range owned {
		if _, ok := c.table[mq]; ok {
			continue
		}
		if c.revokedLocked(mq) {
			c.unfinished = true
			// Dropped in this pass and wanted again (a filter change): the
			// DropListener must first be told and its answers in progress
			// land (notifyDropped), so the new request starts from a
			// position that holds them; the rebalance it kicks takes the
			// queue on.
			continue
		}
		if _, ok := c.draining[mq]; ok {
			c.unfinished = true
			continue // our own previous batch is still out; it kicks us when done
		}
		if c.sendingBackLocked(mq) {
			c.unfinished = true
			continue // a dropped request's send-backs are out; the last one kicks us
		}
		now := time.Now()
		lockFree := orderly && !needsBrokerLock(cfg)
		if orderly && !lockFree && !c.deps.Coordinator.LockQueue(c.group, c.opts.ClientID, mq, now) {
			c.unfinished = true
			continue // another client still holds it; its unlock notifies us
		}
		pq := NewProcessQueue()
		pos, err := c.computePullFromWhere(cfg, mq, topics[mq.Topic].UID, pq)
		if err != nil {
			c.log.Warn().Err(err).Str("topic", mq.Topic).Int("queue", mq.QueueID).Msg("compute pull offset")
			c.unfinished = true
			if orderly && !lockFree {
				c.deps.Coordinator.UnlockQueue(c.group, c.opts.ClientID, mq)
			}
			continue
		}
		pr := &pullRequest{mq: mq, pq: pq, filter: want[mq], orderly: orderly, lockFree: lockFree, stop: make(chan struct{}), nudge: make(chan struct{}, 1), nextOffset: pos.Offset,
			layouts: topics[mq.Topic].Layouts}
		pr.epoch.Store(pos.Epoch)
		pr.uid.Store(pos.TopicUID)
		pr.pq.attachBudget(c.opts.CacheBudget)
		if orderly {
			pr.pq.setLocked(true, now)
		}
		c.table[mq] = pr
		c.log.Debug().Str("topic", mq.Topic).Int("queue", mq.QueueID).Int64("offset", pos.Offset).Msg("own queue")
		started = append(started, pr)
	}
	// Every new queue is under the cache budget before any pulls, so the
	// first pulls already see the fair share of them all (budget.go).
	// A queue with nothing to read parks at once (park.go).
	for _, pr := range started {
		if c.parkNew(pr) {
			continue
		}
		c.pulls.Add(1)
		go c.pullLoop(pr)
	}
}

// computePullFromWhere is where a newly owned queue starts (RocketMQ
// computePullFromWhere): its stored position when there is one for the
// topic's current incarnation (a taken reset is stored too), with the
// finished ranges above its offset, which the pull then skips. Otherwise
// the queue appeared after the consumer subscribed — the topic was created
// later, grew, or was created again — and starts at its first offset; a
// retry topic always does. consumeFrom applies only where no start was
// ever decided for the topic (a group written before starts were decided
// at subscription). A start not read from the store is dirty: it is
// persisted with the next write.
func (c *PushConsumer) computePullFromWhere(cfg core.GroupConfig, mq core.MessageQueue, uid uint64, pq *ProcessQueue) (core.Progress, error) {
	p, ok, err := c.deps.Coordinator.CommittedProgress(c.group, c.consumerID, mq)
	if err != nil {
		return p, err
	}
	if ok && (p.TopicUID == 0 || uid == 0 || p.TopicUID == uid) {
		if p.TopicUID == 0 {
			p.TopicUID = uid
		}
		c.offsets.start(mq, p, pq, false)
		return p, nil
	}
	minOff, maxOff, err := c.deps.Reader.QueueOffsets(mq)
	if err != nil {
		if core.ErrorCode(err) != core.ENotFound {
			return p, err
		}
		minOff, maxOff = 0, 0
	}
	decided := mq.Topic == core.RetryTopic(c.group)
	if !decided {
		if decided, err = c.deps.Coordinator.StartsDecided(c.group, cfg.Incarnation, c.consumerID, mq.Topic); err != nil {
			return p, err
		}
	}
	start := core.Progress{TopicUID: uid}
	switch {
	case decided, cfg.ConsumeFrom == core.ConsumeFromFirstOffset:
		start.Offset = minOff
	case cfg.ConsumeFrom == core.ConsumeFromTimestamp:
		if start.Offset, err = c.deps.Reader.SearchOffset(mq, cfg.ConsumeTimestamp); err != nil {
			return p, err
		}
	default:
		start.Offset = maxOff
	}
	c.offsets.start(mq, start, pq, true)
	return start, nil
}

// dropLocked stops owning a queue (RocketMQ
// removeUnnecessaryMessageQueue): mark dropped, stop pulling, persist its
// offset and, for orderly, unlock it — after the batch still out is
// answered, so no other client consumes the queue meanwhile.
func (c *PushConsumer) dropLocked(pr *pullRequest, forReset bool) {
	delete(c.table, pr.mq)
	pr.pq.SetDropped()
	close(pr.stop)
	pr.forgetParked()
	c.revokeLocked(pr)
	pr.mu.Lock()
	pr.noCommit = forReset
	if pr.orderly && pr.outstanding {
		pr.draining = true
		c.draining[pr.mq] = pr
		pr.mu.Unlock()
		return
	}
	pr.mu.Unlock()
	c.finishDropLocked(pr)
}

func (c *PushConsumer) finishDropLocked(pr *pullRequest) {
	pr.mu.Lock()
	noCommit := pr.noCommit
	pr.mu.Unlock()
	p, ok := c.offsets.take(pr.mq)
	if ok && !noCommit {
		if err := c.commitProgressAs(context.Background(), c.consumerID, c.cfg.Incarnation, map[core.MessageQueue]core.Progress{pr.mq: p}); err != nil {
			c.log.Error().Err(err).Str("topic", pr.mq.Topic).Int("queue", pr.mq.QueueID).Msg("persist offset of dropped queue")
		}
	}
	if pr.orderly && !pr.lockFree {
		c.deps.Coordinator.UnlockQueue(c.group, c.opts.ClientID, pr.mq)
	}
}

// lockAll renews the orderly locks of owned queues (RocketMQ
// lockMQPeriodically); a queue whose lock is lost stops consuming, one
// whose lock is alive again — regained, or renewed after it lapsed on this
// side (a stall over LockMaxLiveTime) — resumes consuming what is cached.
// BROADCASTING queues hold no broker lock.
// needsLocks reports whether the client holds (or drains) a queue whose
// broker lock must be renewed.
func (c *PushConsumer) needsLocks() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pr := range c.table {
		if pr.orderly && !pr.lockFree {
			return true
		}
	}
	for _, pr := range c.draining {
		if !pr.lockFree {
			return true
		}
	}
	return false
}

func (c *PushConsumer) lockAll() {
	c.mu.Lock()
	var resume []*pullRequest
	now := time.Now()
	for _, pr := range c.table {
		if !pr.orderly || pr.lockFree {
			continue
		}
		ok := c.deps.Coordinator.LockQueue(c.group, c.opts.ClientID, pr.mq, now)
		was := c.lockAlive(pr)
		pr.pq.setLocked(ok, now)
		if ok && !was {
			resume = append(resume, pr)
		}
	}
	for _, pr := range c.draining {
		if !pr.lockFree {
			c.deps.Coordinator.LockQueue(c.group, c.opts.ClientID, pr.mq, now)
		}
	}
	c.mu.Unlock()
	for _, pr := range resume {
		c.sched.after(0, func() { c.tryConsumeOrderly(pr) })
	}
}
