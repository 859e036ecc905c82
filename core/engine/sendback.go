package engine

import (
	"context"
	"maps"
	"strconv"
	"time"

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
	now := time.Now().UTC()
	times := max(msg.ReconsumeTimes, 0)
	m := copyForGroup(orig, now)
	if times >= maxReconsumeTimes || delayLevel < 0 {
		m.ReconsumeTimes = times
		if err := e.commit(ctx, []putOp{{topic: core.DLQTopic(group), queueID: 0, msg: m}}, settle); err != nil {
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
	m.ReconsumeTimes = times + 1
	q := e.levelQueue(level)
	due := dueMillis(now, e.opts.DelayLevels[q])
	m.SysProps[core.PropRealTopic] = core.RetryTopic(group)
	m.SysProps[core.PropRealQueueID] = "0"
	m.SysProps[core.PropDelay] = strconv.Itoa(q + 1)
	op := putOp{topic: core.ScheduleTopic, queueID: q, msg: m, tagsCode: due, hasTagsCode: true,
		autoCreate: len(e.opts.DelayLevels)}
	if err := e.commit(ctx, []putOp{op}, settle); err != nil {
		return err
	}
	e.sched.levels[q].offer(due)
	e.sched.retried.Add(1)
	return nil
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
	for _, k := range []string{core.PropRealTopic, core.PropRealQueueID, core.PropDelay, core.PropDeliverAt} {
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
