package engine

import (
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Put publishes messages to a user topic, atomically, durably (synced)
// before it returns. Results are in order.
//
// Queue selection (RocketMQ MessageQueueSelector): a message with a
// sharding key goes to FNV-1a(key) mod queues (SelectMessageQueueByHash);
// the others of one call go together to the topic's next round-robin queue.
func (e *Engine) Put(ctx context.Context, topic string, msgs []core.PutMessage) ([]core.PutResult, error) {
	if core.IsSystemTopic(topic) {
		return nil, core.Errorf(core.EForbidden, "cannot publish to system topic %q", topic)
	}
	ent := e.cachedTopic(topic)
	if ent == nil {
		return nil, core.Errorf(core.ENotFound, "topic %q does not exist", topic)
	}
	// The one check of a publish's limits (core/validate.go): a bad
	// message never costs a transaction and never fails anyone else's.
	if err := core.ValidatePut(msgs, time.Now(), e.opts.MaxDelay); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		out, err := e.put(ctx, ent, topic, msgs)
		if !errors.Is(err, errDedupRace) {
			return out, err
		}
		if attempt == maxDedupAttempts {
			return nil, core.Errorf(core.EConflict, "an idempotent publish with the same key is in progress; retry")
		}
	}
}

// put is one attempt of Put: it answers the messages whose DedupID is
// already recorded (dedup.go) and stores the others.
func (e *Engine) put(ctx context.Context, ent *topicEntry, topic string, all []core.PutMessage) ([]core.PutResult, error) {
	// Choose queues and commit under the layout read lock, so a growth
	// fences exactly the publishes that chose with the old count.
	ent.layout.RLock()
	defer ent.layout.RUnlock()
	e.topicsMu.RLock()
	queues, uid := ent.rec.Queues, ent.rec.UID
	e.topicsMu.RUnlock()

	now := time.Now().UTC()
	dp, err := e.planDedup(topic, uid, all, now)
	if err != nil {
		return nil, err
	}
	msgs := all
	if dp.touched {
		msgs = make([]core.PutMessage, len(dp.fresh))
		for i, j := range dp.fresh {
			msgs[i] = all[j]
		}
	}
	var stored []core.PutResult
	if len(msgs) > 0 {
		if stored, err = e.putNew(ctx, topic, queues, uid, ent, msgs, dp.touched, now); err != nil {
			return nil, err
		}
	}
	if !dp.touched {
		return stored, nil
	}
	out := make([]core.PutResult, len(all))
	for i, j := range dp.fresh {
		out[j] = stored[i]
	}
	for i, r := range dp.replay {
		out[i] = r
	}
	for i, j := range dp.alias { // j < i, answered above
		out[i] = out[j]
		out[i].Replayed = true
	}
	return out, nil
}

// putNew commits msgs, recording their DedupIDs when dedup is set.
func (e *Engine) putNew(ctx context.Context, topic string, queues int, uid uint64, ent *topicEntry,
	msgs []core.PutMessage, dedup bool, now time.Time) ([]core.PutResult, error) {
	rr := -1
	ops := make([]putOp, len(msgs))
	ids := make([]string, len(msgs))
	newIDs(now, ids)
	// The messages of the call in one allocation, not one each.
	ms := make([]core.Message, len(msgs))
	for i := range msgs {
		pm := &msgs[i]
		var q int
		if pm.ShardingKey != "" {
			q = int(fnv32a(pm.ShardingKey) % uint32(queues))
		} else {
			if rr < 0 {
				rr = int(ent.rr.Add(1) % uint64(queues))
			}
			q = rr
		}
		ms[i] = core.Message{
			ID:          ids[i],
			Body:        pm.Body,
			BodyIsText:  pm.BodyIsText,
			Tags:        pm.Tags,
			Keys:        pm.Keys,
			Properties:  maps.Clone(pm.Properties),
			ShardingKey: pm.ShardingKey,
			BornAt:      now.Truncate(time.Millisecond),
		}
		if pm.TraceParent != "" {
			ms[i].SysProps = traceProps(pm)
		}
		ops[i] = putOp{topic: topic, queueID: q, expectUID: uid, msg: &ms[i]}
	}
	plan, err := e.planDelays(now, uid, msgs, ops) // delayed messages: schedule.go
	if err != nil {
		return nil, err
	}
	hook := plan.hook
	if dedup {
		hook = chainHooks(hook, e.dedupHook(topic, uid, msgs, ids, plan.due, now))
	}
	if err := e.commit(ctx, plan.ops, hook); err != nil {
		return nil, err
	}
	e.delaysCommitted(plan)
	committedAt := time.Now().UTC().Truncate(time.Millisecond)
	out := make([]core.PutResult, len(ops))
	for i, op := range ops {
		out[i] = core.PutResult{MessageID: op.msg.ID, Topic: topic, QueueID: op.msg.QueueID,
			QueueOffset: op.msg.QueueOffset, StoredAt: op.msg.StoredAt}
		plan.delayedResult(i, &out[i], committedAt)
	}
	return out, nil
}

// traceProps holds a message's trace context as system properties.
func traceProps(pm *core.PutMessage) map[string]string {
	sp := map[string]string{core.PropTraceParent: pm.TraceParent}
	if pm.TraceState != "" {
		sp[core.PropTraceState] = pm.TraceState
	}
	return sp
}

func fnv32a(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
