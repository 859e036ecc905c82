package engine

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
	"github.com/mqgate/mqgate/core/store"
)

// SendMessageBack is the engine side of RocketMQ's sendMessageBack
// (SendMessageProcessor.asyncConsumerSendMsgBack, SPEC §6): a message that
// group failed to consume comes back later through %RETRY%<group>, or, once
// it has failed maxReconsumeTimes times (or when delayLevel < 0), goes to
// %DLQ%<group> for good.
//
// The original is looked up by commit log offset (msg as a fallback, e.g.
// after retention removed it); msg.ReconsumeTimes is the failed delivery's
// count. The retry copy gets reconsumeTimes+1 and waits delayLevel, or
// 3+reconsumeTimes when delayLevel is 0 (10 s, 30 s, 1 m, 2 m …), on the
// delay path; the dead-letter copy keeps the failed delivery's count. Both
// keep the original id (ORIGIN_MESSAGE_ID), topic (RETRY_TOPIC), tags,
// keys, properties and body. It returns once the copy is durably stored.
func (e *Engine) SendMessageBack(ctx context.Context, group string, msg *core.Message, delayLevel, maxReconsumeTimes int) error {
	return e.SendMessageBackSettled(ctx, group, msg, delayLevel, maxReconsumeTimes, nil)
}

// SendMessageBackSettled is SendMessageBack with settle (optional) run in
// the transaction that stores the copy: the consumer side records there
// that the failed message is finished, so a crash can never leave both the
// copy and an unfinished original (a duplicate retry or DLQ entry).
//
// If settle returns core.ErrGroupGone (the group that received msg was
// deleted), nothing is written and SendMessageBackSettled returns nil: a
// deleted group's late send-back must not recreate its %RETRY% / %DLQ%
// topics or put anything in them for a new group of the same name.
//
// Incarnations: the retry copy waits on the delay path stamped with the
// UID of %RETRY%<group> (created here, with one queue, if absent), and is
// moved there when due only if the topic still has that UID. Deleting the
// group removes %RETRY%<group>, so its pending retries are dropped when due
// and never reach a group created later under the same name (whose first
// send-back creates a new %RETRY% topic with a larger UID). The copy's
// transaction also checks the UID: a send-back racing with the group's
// deletion writes nothing, as with core.ErrGroupGone.
func (e *Engine) SendMessageBackSettled(ctx context.Context, group string, msg *core.Message, delayLevel, maxReconsumeTimes int, settle store.Hook) error {
	if msg == nil {
		return core.Errorf(core.EInvalid, "no message to send back")
	}
	return e.SendMessagesBack(ctx, group, nil, []SendBack{{Msg: msg, DelayLevel: delayLevel,
		MaxReconsumeTimes: maxReconsumeTimes, Settle: settle}})
}

// SendBack is one message of a SendMessagesBack batch: the failed
// delivery (its ReconsumeTimes is the failed delivery's count), the
// requested delay level (0: the engine decides, < 0: the DLQ), the group's
// maxReconsumeTimes and the settle hook (optional) that records the
// original as finished in the copy's transaction.
type SendBack struct {
	Msg               *core.Message
	DelayLevel        int
	MaxReconsumeTimes int
	Settle            store.Hook
}

// maxSendBackBatch bounds the copies of one SendMessagesBack transaction;
// a larger batch is committed in several (each one group commit).
const maxSendBackBatch = 1024

// SendMessagesBack is SendMessageBackSettled for many failed messages of
// one group: every copy goes in ONE store request (one transaction, one
// fsync, shared with whatever else the group commit holds), and each
// copy's settle hook runs in that transaction, in order, after the
// appends. Copy and settlement still commit together, or neither does.
//
// guard (optional) runs once, first: core.ErrGroupGone from it (the
// group's incarnation was deleted) drops the whole batch — nothing is
// written, nil is returned. A settle hook answering core.ErrGroupGone
// drops only its own copy: the request is retried without it (hooks may
// run more than once, store.Hook), so one stale item never costs the
// others. Checking the group once in guard keeps the common case (the
// whole batch belongs to one incarnation) to one pass.
//
// It returns nil once every copy not dropped is durably stored; any other
// error means none of them was.
func (e *Engine) SendMessagesBack(ctx context.Context, group string, guard store.Hook, backs []SendBack) error {
	if !core.ValidName(group) {
		return core.FieldError("group", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	for len(backs) > 0 {
		n := min(len(backs), maxSendBackBatch)
		if err := e.sendBackBatch(ctx, group, guard, backs[:n]); err != nil {
			return err
		}
		backs = backs[n:]
	}
	return nil
}

// settleGone is a settle hook's core.ErrGroupGone, naming its item.
type settleGone struct{ item int }

func (g settleGone) Error() string { return "send-back settle: group gone" }

// sendBackBatch commits one batch of SendMessagesBack.
func (e *Engine) sendBackBatch(ctx context.Context, group string, guard store.Hook, backs []SendBack) (err error) {
	for _, b := range backs {
		if b.Msg == nil {
			return core.Errorf(core.EInvalid, "no message to send back")
		}
	}
	// The originals, looked up by commit log offset in one read
	// transaction (msg itself as the fallback, e.g. after retention).
	origs := make([]*core.Message, len(backs))
	err = e.view(func(tx store.ReadTx) error {
		for i, b := range backs {
			origs[i] = b.Msg
			if stored, err := tx.MessageAt(b.Msg.CommitLogOffset); err == nil && stored != nil && stored.ID == b.Msg.ID {
				origs[i] = stored
			}
		}
		return nil
	})
	if err != nil && core.ErrorCode(err) == core.EUnavailable {
		return err
	}
	now := time.Now().UTC()
	type item struct {
		op     putOp
		settle store.Hook
		dlq    bool
		level  int // retry: the delay level queue index
		due    int64
		times  int
	}
	items := make([]item, 0, len(backs))
	var goneSettles []store.Hook // originals of a deleted topic: settled, no copy
	defer func() {
		if len(goneSettles) > 0 && err == nil {
			if gerr := e.CommitHook(ctx, chainHooks(goneSettles...)); gerr != nil && !errors.Is(gerr, core.ErrGroupGone) {
				err = gerr
			}
		}
	}()
	retry := core.RetryTopic(group)
	var retryUID uint64
	for i, b := range backs {
		originUID, gone, err := e.originIncarnation(origs[i], origs[i] != b.Msg)
		if err != nil {
			return err
		}
		if gone {
			// The message's topic was deleted: nothing of it may come
			// back (SPEC §8.9), so no copy; the original is still settled.
			e.sched.dropped.Add(1)
			goneSettles = append(goneSettles, b.Settle)
			continue
		}
		times := max(b.Msg.ReconsumeTimes, 0)
		m := copyForGroup(origs[i], now)
		if originUID != "" {
			m.SysProps[core.PropRetryTopicUID] = originUID
		}
		setLastReason(m, b.Msg) // the failed delivery's, not the original's
		out := policy.Retry(times, b.MaxReconsumeTimes, b.DelayLevel)
		if out.DeadLetter {
			m.ReconsumeTimes = times
			items = append(items, item{op: putOp{topic: core.DLQTopic(group), queueID: 0, msg: m},
				settle: b.Settle, dlq: true, times: times})
			continue
		}
		if retryUID == 0 {
			if retryUID, err = e.ensureGroupTopic(retry); err != nil {
				return err
			}
		}
		m.ReconsumeTimes = times + 1
		q := e.levelQueue(out.Level)
		due := dueMillis(now, e.opts.DelayLevels[q])
		m.SysProps[core.PropRealTopic] = retry
		m.SysProps[core.PropRealQueueID] = "0"
		m.SysProps[core.PropRealTopicUID] = strconv.FormatUint(retryUID, 10)
		m.SysProps[core.PropDelay] = strconv.Itoa(q + 1)
		items = append(items, item{op: putOp{topic: core.ScheduleTopic, queueID: q, msg: m, tagsCode: due,
			hasTagsCode: true, autoCreate: len(e.opts.DelayLevels)}, settle: b.Settle, level: q, due: due, times: times})
	}
	for len(items) > 0 {
		ops := make([]putOp, len(items))
		anyRetry := false
		for i := range items {
			ops[i] = items[i].op
			anyRetry = anyRetry || !items[i].dlq
		}
		hook := func(tx store.Tx) error {
			if guard != nil {
				if err := guard(tx); err != nil {
					return err
				}
			}
			if anyRetry {
				if err := retryGuard(retry, retryUID)(tx); err != nil {
					return err
				}
			}
			for i := range items {
				if items[i].settle == nil {
					continue
				}
				if err := items[i].settle(tx); err != nil {
					if errors.Is(err, core.ErrGroupGone) {
						return settleGone{item: i}
					}
					return err
				}
			}
			return nil
		}
		err := e.commit(ctx, ops, hook)
		var gone settleGone
		switch {
		case errors.As(err, &gone):
			e.groupGone(group, items[gone.item].op.msg)
			items = append(items[:gone.item], items[gone.item+1:]...)
			continue
		case errors.Is(err, core.ErrGroupGone):
			for _, it := range items {
				e.groupGone(group, it.op.msg)
			}
			return nil
		case err != nil:
			return err
		}
		for _, it := range items {
			if it.dlq {
				e.sched.deadLettered.Add(1)
				e.log.Info().Str("group", group).Str("msgId", it.op.msg.UserID()).Int("reconsumeTimes", it.times).
					Msg("message dead-lettered")
				if f := e.opts.DeadLettered; f != nil {
					f(group, it.op.msg)
				}
				continue
			}
			e.sched.levels[it.level].offer(it.due)
			e.sched.retried.Add(1)
		}
		return nil
	}
	return nil
}

// groupGone logs a send-back refused because its group was deleted.
func (e *Engine) groupGone(group string, m *core.Message) {
	e.sched.discarded.Add(1)
	e.log.Info().Str("group", group).Str("msgId", m.UserID()).
		Msg("send-back of a deleted group discarded")
}

// retryGuard fails the copy's transaction with core.ErrGroupGone unless
// the retry topic still has incarnation uid (DeleteSystemTopic ran since
// ensureGroupTopic: the group was deleted with this send-back in flight).
func retryGuard(topic string, uid uint64) store.Hook {
	return func(tx store.Tx) error {
		rec, ok, err := tx.GetTopic(topic)
		if err != nil {
			return err
		}
		if !ok || rec.UID != uid {
			return core.ErrGroupGone
		}
		return nil
	}
}

// ensureGroupTopic returns the incarnation of a %RETRY% / %DLQ% topic,
// creating it with one queue if absent (what the first put would do).
func (e *Engine) ensureGroupTopic(name string) (uid uint64, err error) {
	err = e.view(func(tx store.ReadTx) error {
		rec, ok, err := tx.GetTopic(name)
		uid = rec.UID
		if !ok {
			uid = 0
		}
		return err
	})
	if err != nil || uid != 0 {
		return uid, err
	}
	err = e.update(func(tx store.Tx) error {
		rec, ok, err := tx.GetTopic(name)
		if err != nil {
			return err
		}
		if !ok {
			rec, _, err = tx.PutTopic(store.TopicRecord{Name: name, Queues: 1,
				RetentionHours: core.DefaultRetentionHours, CreatedAt: time.Now().UTC().Truncate(time.Millisecond)})
		}
		uid = rec.UID
		return err
	})
	return uid, err
}

// copyForGroup makes the retry / dead-letter / redrive copy of a message:
// a fresh id of its own, ORIGIN_MESSAGE_ID and RETRY_TOPIC naming the
// original (set once, on the first copy), the user's content unchanged and
// the delay bookkeeping dropped.
func copyForGroup(orig *core.Message, now time.Time) *core.Message {
	sys := maps.Clone(orig.SysProps)
	if sys == nil {
		sys = map[string]string{}
	}
	for _, k := range scheduleProps {
		delete(sys, k)
	}
	sys[core.PropOriginMessageID] = orig.UserID()
	sys[core.PropRetryTopic] = orig.UserTopic()
	return &core.Message{
		ID:          newID(now),
		Body:        orig.Body,
		BodyIsText:  orig.BodyIsText,
		Tags:        orig.Tags,
		Keys:        orig.Keys,
		Properties:  maps.Clone(orig.Properties),
		SysProps:    sys,
		ShardingKey: orig.ShardingKey,
		BornAt:      orig.BornAt,
	}
}

// originIncarnation is the incarnation of orig's original topic as a
// RETRY_TOPIC_UID value ("" when unknown: a copy made before incarnations
// were recorded), and whether that incarnation is gone (the topic was
// deleted, maybe created again). stored says orig was read from the store;
// a message no longer there is of the current incarnation only if
// retention removed it (its offset is below its queue's min).
func (e *Engine) originIncarnation(orig *core.Message, stored bool) (uid string, gone bool, err error) {
	err = e.view(func(tx store.ReadTx) error {
		if v := orig.SysProps[core.PropRetryTopicUID]; v != "" {
			rec, ok, err := tx.GetTopic(orig.UserTopic())
			uid, gone = v, !ok || strconv.FormatUint(rec.UID, 10) != v
			return err
		}
		if core.IsSystemTopic(orig.Topic) {
			return nil
		}
		rec, ok, err := tx.GetTopic(orig.Topic)
		if err != nil || !ok {
			gone = !ok
			return err
		}
		mine, err := ofIncarnation(tx, orig, rec)
		if err == nil && !mine && !stored && orig.Topic == rec.Name {
			// No longer in the store: retention removed it from the
			// head of a queue of this incarnation (its offset is below
			// the queue's min), or it belonged to a deleted one whose
			// records the trash loop removed already.
			min, _, qerr := tx.QueueRange(rec.UID, orig.QueueID)
			mine, err = qerr == nil && orig.QueueOffset < min, qerr
		}
		if err != nil || !mine {
			gone = !mine
			return err
		}
		uid = strconv.FormatUint(rec.UID, 10)
		return nil
	})
	return uid, gone, err
}

// retryOfGoneTopic reports whether m, read from a %RETRY% topic, is a
// retry of a message whose topic incarnation was deleted since.
func retryOfGoneTopic(tx store.ReadTx, m *core.Message) (bool, error) {
	v := m.SysProps[core.PropRetryTopicUID]
	if v == "" {
		return false, nil
	}
	rec, ok, err := tx.GetTopic(m.UserTopic())
	return !ok || strconv.FormatUint(rec.UID, 10) != v, err
}
