package engine

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
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
	if !core.ValidName(group) {
		return core.FieldError("group", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	if msg == nil {
		return core.Errorf(core.EInvalid, "no message to send back")
	}
	orig := msg
	if stored, err := e.MessageAt(msg.CommitLogOffset); err == nil && stored.ID == msg.ID {
		orig = stored
	} else if core.ErrorCode(err) == core.EUnavailable {
		return err
	}
	originUID, gone, err := e.originIncarnation(orig, orig != msg)
	if err != nil {
		return err
	}
	if gone {
		// The message's topic was deleted: nothing of it may come back, so
		// no copy; the original is still settled.
		e.sched.dropped.Add(1)
		if settle == nil {
			return nil
		}
		if err := e.CommitHook(ctx, settle); err != nil && !errors.Is(err, core.ErrGroupGone) {
			return err
		}
		return nil
	}
	now := time.Now().UTC()
	times := max(msg.ReconsumeTimes, 0)
	m := copyForGroup(orig, now)
	if originUID != "" {
		m.SysProps[core.PropRetryTopicUID] = originUID
	}
	setLastReason(m, msg) // msg, not orig: the reason is the caller's
	if times >= maxReconsumeTimes || delayLevel < 0 {
		m.ReconsumeTimes = times
		err := e.commit(ctx, []putOp{{topic: core.DLQTopic(group), queueID: 0, msg: m}}, settle)
		if errors.Is(err, core.ErrGroupGone) {
			e.groupGone(group, m)
			return nil
		}
		if err != nil {
			return err
		}
		e.sched.deadLettered.Add(1)
		e.log.Info().Str("group", group).Str("msgId", m.UserID()).Int("reconsumeTimes", times).
			Msg("message dead-lettered")
		return nil
	}
	level := delayLevel
	if level == 0 {
		level = 3 + times
	}
	retry := core.RetryTopic(group)
	uid, err := e.ensureGroupTopic(retry)
	if err != nil {
		return err
	}
	m.ReconsumeTimes = times + 1
	q := e.levelQueue(level)
	due := dueMillis(now, e.opts.DelayLevels[q])
	m.SysProps[core.PropRealTopic] = retry
	m.SysProps[core.PropRealQueueID] = "0"
	m.SysProps[core.PropRealTopicUID] = strconv.FormatUint(uid, 10)
	m.SysProps[core.PropDelay] = strconv.Itoa(q + 1)
	op := putOp{topic: core.ScheduleTopic, queueID: q, msg: m, tagsCode: due, hasTagsCode: true,
		autoCreate: len(e.opts.DelayLevels)}
	err = e.commit(ctx, []putOp{op}, chainHooks(retryGuard(retry, uid), settle))
	if errors.Is(err, core.ErrGroupGone) {
		e.groupGone(group, m)
		return nil
	}
	if err != nil {
		return err
	}
	e.sched.levels[q].offer(due)
	e.sched.retried.Add(1)
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
	return func(tx *bolt.Tx) error {
		rec, ok, err := store.GetTopic(tx, topic)
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
	err = e.view(func(tx *bolt.Tx) error {
		rec, ok, err := store.GetTopic(tx, name)
		uid = rec.UID
		if !ok {
			uid = 0
		}
		return err
	})
	if err != nil || uid != 0 {
		return uid, err
	}
	err = e.update(func(tx *bolt.Tx) error {
		rec, ok, err := store.GetTopic(tx, name)
		if err != nil {
			return err
		}
		if !ok {
			rec, _, err = store.PutTopic(tx, store.TopicRecord{Name: name, Queues: 1,
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
// a message retention removed meanwhile is taken to be of the current
// incarnation.
func (e *Engine) originIncarnation(orig *core.Message, stored bool) (uid string, gone bool, err error) {
	err = e.view(func(tx *bolt.Tx) error {
		if v := orig.SysProps[core.PropRetryTopicUID]; v != "" {
			rec, ok, err := store.GetTopic(tx, orig.UserTopic())
			uid, gone = v, !ok || strconv.FormatUint(rec.UID, 10) != v
			return err
		}
		if core.IsSystemTopic(orig.Topic) {
			return nil
		}
		rec, ok, err := store.GetTopic(tx, orig.Topic)
		if err != nil || !ok {
			gone = !ok
			return err
		}
		if stored {
			mine, err := ofIncarnation(tx, orig, rec)
			if err != nil || !mine {
				gone = !mine
				return err
			}
		}
		uid = strconv.FormatUint(rec.UID, 10)
		return nil
	})
	return uid, gone, err
}

// retryOfGoneTopic reports whether m, read from a %RETRY% topic, is a
// retry of a message whose topic incarnation was deleted since.
func retryOfGoneTopic(tx *bolt.Tx, m *core.Message) (bool, error) {
	v := m.SysProps[core.PropRetryTopicUID]
	if v == "" {
		return false, nil
	}
	rec, ok, err := store.GetTopic(tx, m.UserTopic())
	return !ok || strconv.FormatUint(rec.UID, 10) != v, err
}
