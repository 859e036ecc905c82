package engine

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// The schedule service's own buckets, beside the store's mq.* buckets.
var (
	// bucketSchedOffsets: schedule queue id(2) -> topic uid(8) + offset(8),
	// the next unit each DeliverDelayedMessageTimerTask delivers (RocketMQ
	// ScheduleMessageService.offsetTable, persisted in the transaction that
	// moves the messages before it).
	bucketSchedOffsets = store.Register("core/engine", "sched.offsets")
	// bucketTimers: due unix ms(8) + sequence(8) -> sealed message record;
	// the time-ordered index of timer messages (deliverAt / delaySeconds).
	bucketTimers = store.Register("core/engine", "sched.timers")
	// bucketTimerTopics: topic uid(8) + timer key(16) -> empty; the timer
	// entries of each topic incarnation (those stamped REAL_TOPIC_UID), so
	// deleting a topic removes its pending timers without a scan.
	bucketTimerTopics = store.Register("core/engine", "sched.timertopics")
	// bucketTimerIDs: message id -> timer key(16); finds a pending timer
	// message by id (GET of a message before it is due), written and
	// removed in the transactions that add and move or drop the entry.
	bucketTimerIDs = store.Register("core/engine", "sched.timerids")
	// bucketSweep: topic uid(8) -> empty; deleted incarnations whose timer
	// entries and redrive marks the trash loop has yet to remove (written
	// in the deletion's transaction, so a crash cannot lose one).
	bucketSweep = store.Register("core/engine", "sched.sweep")
	// bucketRedriven: DLQ topic uid(8) + queue offset(8) -> empty; DLQ
	// entries already sent back by Redrive.
	bucketRedriven = store.Register("core/engine", "dlq.redriven")
)

// scheduleRetryDelay is how long a task waits after a failed put before it
// tries again (RocketMQ DELAY_FOR_A_WHILE after a failed putMessage: 10 s).
var scheduleRetryDelay = 10 * time.Second

// moveBatch bounds one move transaction of the schedule service.
const (
	moveBatch      = 256
	moveBatchBytes = 8 << 20
)

// idle is a task's armed deadline when nothing is pending: any new message
// is earlier and wakes it.
const idle = math.MaxInt64

// delayService is the state of the schedule service: one task per schedule
// queue (delay level), one task for the timer index, counters, and the
// redrive lock.
type delayService struct {
	levels []*levelTask // index = schedule queue id (level-1)
	timer  *timerTask

	redriveMu sync.Mutex // one Redrive at a time (the hook also refuses doubles)

	delayed, timers, moved, dropped       atomic.Int64
	retried, deadLettered, redriven, skip atomic.Int64
	discarded                             atomic.Int64 // send-backs of deleted groups
}

// signal is a wake-up channel of capacity one: a send never blocks, and a
// pending wake-up is never lost.
type signal chan struct{}

func newSignal() signal { return make(signal, 1) }

func (s signal) notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// startSchedule creates the service's buckets and starts a task per delay
// level (and per older schedule queue left by a longer level list) and the
// timer task. The tasks belong to e.wg and stop on e.closing.
func (e *Engine) startSchedule() error {
	queues := len(e.opts.DelayLevels)
	err := e.update(func(tx store.Tx) error {
		for _, b := range []store.BucketName{bucketSchedOffsets, bucketTimers, bucketTimerTopics, bucketSweep, bucketRedriven, bucketDedup, bucketDedupExp} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if err := indexTimerIDs(tx); err != nil {
			return err
		}
		if rec, ok, err := tx.GetTopic(core.ScheduleTopic); err != nil {
			return err
		} else if ok {
			queues = max(queues, rec.Queues)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("schedule service: %w", err)
	}
	e.sched.levels = make([]*levelTask, queues)
	for q := range e.sched.levels {
		t := &levelTask{e: e, qid: q, dueLoop: dueLoop{wake: newSignal()}}
		t.armed.Store(0) // start with a pass
		e.sched.levels[q] = t
	}
	e.sched.timer = &timerTask{e: e, dueLoop: dueLoop{wake: newSignal()}}
	for _, t := range e.sched.levels {
		e.wg.Add(1)
		go t.run()
	}
	e.wg.Add(1)
	go e.sched.timer.run()
	return nil
}

// delayPlan is how one Put is stored: messages with a delay level are
// rewritten to their schedule queue, timer messages leave the ops for the
// timer index (written by hook in the same transaction).
type delayPlan struct {
	ops  []putOp
	hook store.Hook

	due    []int64 // per message of the Put: due unix ms, 0 = not delayed
	timer  []bool  // per message: kept in the timer index
	levels map[int]int64
	minTmr int64
}

// planDelays routes the delayed messages of a Put (RocketMQ
// CommitLog.putMessage's delay-level rewrite, and the RocketMQ 5 timer
// path). ops are the Put's ops with their queue already selected; the
// returned plan's ops replace them in the commit.
//
// Every delayed message carries its topic's incarnation (REAL_TOPIC_UID =
// uid, the UID the Put resolved): when due it is moved only if the topic
// still has that UID (realTarget, store.Op.ExpectUID), so a topic deleted
// meanwhile, even one re-created under the same name, receives nothing of
// it. The plan's hook checks the same UID in the publish's transaction: a
// Put racing with the topic's deletion fails rather than leaving messages
// that were accepted for a topic already gone.
func (e *Engine) planDelays(now time.Time, uid uint64, msgs []core.PutMessage, ops []putOp) (*delayPlan, error) {
	p := &delayPlan{ops: ops}
	topic := ""
	if len(ops) > 0 {
		topic = ops[0].topic // before any op is rewritten to the schedule topic
	}
	var timers []*core.Message
	for i := range msgs {
		pm := &msgs[i]
		if pm.DelayLevel == 0 && (pm.DeliverAt.IsZero() || !pm.DeliverAt.After(now)) {
			continue // not delayed; a deliverAt in the past is delivered now
		}
		if p.due == nil {
			p.due, p.timer, p.levels, p.minTmr = make([]int64, len(msgs)), make([]bool, len(msgs)), map[int]int64{}, idle
		}
		op := &ops[i]
		m := op.msg
		if m.SysProps == nil {
			m.SysProps = map[string]string{}
		}
		m.SysProps[core.PropRealTopic] = op.topic
		m.SysProps[core.PropRealQueueID] = strconv.Itoa(op.queueID)
		m.SysProps[core.PropRealTopicUID] = strconv.FormatUint(uid, 10)
		if pm.DelayLevel > 0 {
			q := e.levelQueue(pm.DelayLevel)
			due := dueMillis(now, e.opts.DelayLevels[q])
			m.SysProps[core.PropDelay] = strconv.Itoa(q + 1)
			*op = putOp{topic: core.ScheduleTopic, queueID: q, msg: m, tagsCode: due, hasTagsCode: true,
				autoCreate: len(e.opts.DelayLevels)}
			p.due[i] = due
			if cur, ok := p.levels[q]; !ok || due < cur {
				p.levels[q] = due
			}
			continue
		}
		due := dueMillis(pm.DeliverAt, 0)
		m.SysProps[core.PropDeliverAt] = strconv.FormatInt(due, 10)
		m.Topic, m.QueueID = op.topic, op.queueID
		p.due[i], p.timer[i] = due, true
		p.minTmr = min(p.minTmr, due)
		timers = append(timers, m)
	}
	if p.due == nil {
		return p, nil
	}
	hooks := []store.Hook{topicGuard(topic, uid)}
	if len(timers) > 0 {
		kept := make([]putOp, 0, len(ops)-len(timers))
		for i := range ops {
			if !p.timer[i] {
				kept = append(kept, ops[i])
			}
		}
		p.ops = kept
		hooks = append(hooks, timerInsertHook(timers))
	}
	p.hook = chainHooks(hooks...)
	return p, nil
}

// topicGuard fails a transaction (ENotFound) unless topic exists with
// incarnation uid: messages parked for later (schedule queue, timer index)
// are checked against the topic they were accepted for when they are
// parked, the way store.Op.ExpectUID checks a direct write.
func topicGuard(topic string, uid uint64) store.Hook {
	return func(tx store.Tx) error {
		rec, ok, err := tx.GetTopic(topic)
		if err != nil {
			return err
		}
		if !ok || rec.UID != uid {
			return core.Errorf(core.ENotFound, "topic %q does not exist", topic)
		}
		return nil
	}
}

// chainHooks runs hooks in order in one transaction (nil ones skipped).
func chainHooks(hooks ...store.Hook) store.Hook {
	return func(tx store.Tx) error {
		for _, h := range hooks {
			if h == nil {
				continue
			}
			if err := h(tx); err != nil {
				return err
			}
		}
		return nil
	}
}

// committed wakes the tasks whose next deadline the new messages precede
// and counts them. Called after the Put's transaction committed.
func (e *Engine) delaysCommitted(p *delayPlan) {
	if p.due == nil {
		return
	}
	for q, due := range p.levels {
		e.sched.levels[q].offer(due)
	}
	if p.minTmr != idle {
		e.sched.timer.offer(p.minTmr)
	}
	for i, due := range p.due {
		if due == 0 {
			continue
		}
		e.sched.delayed.Add(1)
		if p.timer[i] {
			e.sched.timers.Add(1)
		}
	}
}

// delayedResult patches the PutResult of message i: a delayed message has
// its due time and no queue position yet.
func (p *delayPlan) delayedResult(i int, r *core.PutResult, committedAt time.Time) {
	if p.due == nil || p.due[i] == 0 {
		return
	}
	r.QueueID, r.QueueOffset = -1, -1
	r.DeliverAt = time.UnixMilli(p.due[i]).UTC()
	if p.timer[i] {
		r.StoredAt = committedAt
	}
}

// scheduleProps are the system properties of a message waiting on the
// delay path; realTarget clears them when it is moved.
var scheduleProps = []string{core.PropRealTopic, core.PropRealQueueID, core.PropRealTopicUID, core.PropDelay, core.PropDeliverAt}

// realTarget reads where a scheduled message belongs and rebuilds it for
// its real topic: REAL_TOPIC, REAL_QID, REAL_TOPIC_UID, DELAY and
// DELIVER_AT cleared, id, body, properties, reconsumeTimes and bornAt
// kept. The op expects the real topic's incarnation from REAL_TOPIC_UID,
// so the move fails with ENotFound (and the task drops the message) if the
// topic was deleted meanwhile, re-created or not. A message parked before
// incarnations were recorded has no REAL_TOPIC_UID and goes to whichever
// topic has the name.
func realTarget(m *core.Message) (putOp, bool) {
	topic := m.SysProps[core.PropRealTopic]
	qid, err := strconv.Atoi(m.SysProps[core.PropRealQueueID])
	if topic == "" || err != nil || qid < 0 {
		return putOp{}, false
	}
	var uid uint64
	if s, ok := m.SysProps[core.PropRealTopicUID]; ok {
		if uid, err = strconv.ParseUint(s, 10, 64); err != nil || uid == 0 {
			return putOp{}, false
		}
	}
	for _, k := range scheduleProps {
		delete(m.SysProps, k)
	}
	if len(m.SysProps) == 0 {
		m.SysProps = nil
	}
	m.Topic, m.QueueID, m.QueueOffset, m.CommitLogOffset, m.StoredAt = topic, qid, 0, 0, time.Time{}
	return putOp{topic: topic, queueID: qid, msg: m, expectUID: uid}, true
}
