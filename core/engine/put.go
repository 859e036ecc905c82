package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"time"
	"unicode/utf8"

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
	if err := validatePut(msgs); err != nil {
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

// validatePut checks a publish before it reaches the writer, so a bad
// message never costs a transaction and never fails anyone else's.
func validatePut(msgs []core.PutMessage) error {
	if len(msgs) == 0 {
		return core.FieldError("messages", "at least one message is required")
	}
	if len(msgs) > core.MaxBatch {
		return core.Errorf(core.ETooLarge, "a batch holds at most %d messages, got %d", core.MaxBatch, len(msgs))
	}
	total := 0
	for i := range msgs {
		m := &msgs[i]
		field := func(name string) string {
			if len(msgs) == 1 {
				return name
			}
			return fmt.Sprintf("messages[%d].%s", i, name)
		}
		if len(m.Body) > core.MaxMessageSize {
			return &core.Error{Code: core.ETooLarge, Field: field("body"),
				Message: fmt.Sprintf("the body has %d bytes; the limit is %d", len(m.Body), core.MaxMessageSize)}
		}
		if len(m.Body) == 0 {
			return core.FieldError(field("body"), "must not be empty")
		}
		total += len(m.Body)
		if utf8.RuneCountInString(m.Tags) > core.MaxTagsLen {
			return core.FieldError(field("tags"), "at most %d characters", core.MaxTagsLen)
		}
		if utf8.RuneCountInString(m.ShardingKey) > core.MaxKeyLen {
			return core.FieldError(field("shardingKey"), "at most %d characters", core.MaxKeyLen)
		}
		if len(m.Keys) > core.MaxKeys {
			return core.FieldError(field("keys"), "at most %d keys", core.MaxKeys)
		}
		for _, k := range m.Keys {
			if k == "" || utf8.RuneCountInString(k) > core.MaxKeyLen {
				return core.FieldError(field("keys"), "each key must have 1 to %d characters", core.MaxKeyLen)
			}
		}
		if len(m.Properties) > core.MaxProperties {
			return core.FieldError(field("properties"), "at most %d properties", core.MaxProperties)
		}
		for k, v := range m.Properties {
			if k == "" || utf8.RuneCountInString(k) > core.MaxPropertyNameLen {
				return core.FieldError(field("properties"), "property names must have 1 to %d characters", core.MaxPropertyNameLen)
			}
			if utf8.RuneCountInString(v) > core.MaxPropertyValueLen {
				return core.FieldError(field("properties"), "property values must have at most %d characters", core.MaxPropertyValueLen)
			}
		}
		if len(m.TraceParent) > core.MaxTraceParentLen {
			return core.FieldError(field("traceparent"), "at most %d characters", core.MaxTraceParentLen)
		}
		if len(m.TraceState) > core.MaxTraceStateLen || (m.TraceState != "" && m.TraceParent == "") {
			return core.FieldError(field("tracestate"), "at most %d characters, and only with a traceparent", core.MaxTraceStateLen)
		}
	}
	if len(msgs) > 1 && total > core.MaxMessageSize {
		return core.Errorf(core.ETooLarge, "a batch holds at most %d body bytes in all, got %d", core.MaxMessageSize, total)
	}
	return nil
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
