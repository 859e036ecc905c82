package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Dead letters of group g are the stream MQD_<g> (subject mqd.<g>), one
// message per dead letter with the original's headers plus its topic,
// queue and reconsume times. A dead letter's Nats-Msg-Id names the
// delivery it came from (stream, consumer, sequence), so two instances
// dead-lettering the same message race into one copy. Redrive publishes it
// back to mq.<topic>.r.<g>, a subject only g's consumers of the topic
// match, with reconsume times reset, and deletes it from the DLQ.

func (b *Backend) ensureDLQ(ctx context.Context, group string) error {
	key := dlqStream(group)
	if _, ok := b.ensured.Load(key); ok {
		return nil
	}
	err := b.retryRead(ctx, func(ctx context.Context) error { // idempotent
		_, err := b.js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{
			Name: dlqStream(group), Subjects: []string{dlqSubject(group)}, Storage: jsapi.FileStorage,
			Replicas: b.opts.Replicas, Duplicates: dedupWindow, AllowDirect: true,
		})
		return err
	})
	if err != nil {
		return mapErr(err)
	}
	b.ensured.Store(key, time.Time{})
	return nil
}

// deadLetter copies a delivered message to the DLQ, then terminates it on
// its consumer (a crash between the two leaves the original to be
// redelivered and dead-lettered again: the copy's id deduplicates).
func (b *Backend) deadLetter(ctx context.Context, group string, m *nats.Msg, meta ackMeta, times int, reason string) error {
	if err := b.ensureDLQ(ctx, group); err != nil {
		return err
	}
	d := nats.NewMsg(dlqSubject(group))
	d.Data = m.Data
	for k, v := range m.Header {
		if len(k) > 5 && k[:5] == "Nats-" {
			continue
		}
		d.Header[k] = v
	}
	topic, q := subjectQueue(m.Subject)
	d.Header.Set(hTopic, topic)
	if q >= 0 {
		d.Header.Set(hQueue, strconv.Itoa(q))
	}
	d.Header.Set(hReconsume, strconv.Itoa(times))
	// The failure that dead-lettered it; none clears a reason the
	// message brought (a redriven copy's).
	d.Header.Del(hReason)
	if reason != "" {
		d.Header.Set(hReason, reason)
	}
	d.Header.Set(hOrigin, strconv.FormatUint(meta.sseq, 10))
	d.Header.Set(jsapi.MsgIDHeader, fmt.Sprintf("%s:%s:%d", meta.stream, meta.consumer, meta.sseq))
	if _, err := b.js.PublishMsg(ctx, d); err != nil {
		return publishErr(err)
	}
	if errs := b.requestAll(ctx, []string{m.Reply}, []byte("+TERM dead-lettered")); errs[0] != nil {
		return errs[0]
	}
	return nil
}

// deadLetterLease reads the leased message back from its stream and dead-letters it.
func (b *Backend) deadLetterLease(ctx context.Context, group string, l lease, times int, reason string) error {
	// From the stream leader, not a direct get: a replica catching up
	// answers 404 for a message it has not applied yet, and taking that
	// for "gone" would TERM the message with no DLQ copy (a loss).
	raw, err := b.leaderMsg(ctx, l.meta.stream, msgGet{Seq: l.sseq})
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		// Gone by retention (the leader has applied everything it
		// delivered): nothing to keep; end its deliveries.
		b.requestAll(ctx, []string{l.reply}, []byte("+TERM gone"))
		return nil
	} else if err != nil {
		return mapErr(err)
	}
	m := &nats.Msg{Subject: raw.Subject, Header: raw.Header, Data: raw.Data, Reply: l.reply}
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	return b.deadLetter(ctx, group, m, l.meta, times, reason)
}

// DLQMessages implements core.DeadLetterService; the cursor is a DLQ stream sequence.
func (b *Backend) DLQMessages(group, cursor string, limit int) ([]*core.Message, string, error) {
	from := uint64(1)
	if cursor != "" {
		n, err := strconv.ParseUint(cursor, 10, 64)
		if err != nil || n == 0 {
			return nil, "", core.FieldError("cursor", "is not a cursor of this DLQ")
		}
		from = n
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	st, err := b.stream(ctx, dlqStream(group))
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		return nil, "", nil
	} else if err != nil {
		return nil, "", mapErr(err)
	}
	var out []*core.Message
	seq := from
	for len(out) < limit {
		raw, err := st.GetMsg(ctx, seq, jsapi.WithGetMsgSubject(dlqSubject(group)))
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			return out, "", nil
		} else if err != nil {
			return nil, "", mapErr(err)
		}
		out = append(out, decodeMessage(raw.Subject, raw.Header, raw.Data, raw.Sequence, raw.Time))
		seq = raw.Sequence + 1
	}
	if _, err := st.GetMsg(ctx, seq, jsapi.WithGetMsgSubject(dlqSubject(group))); err != nil {
		return out, "", nil
	}
	return out, strconv.FormatUint(seq, 10), nil
}

// DLQDepth implements core.DeadLetterService.
func (b *Backend) DLQDepth(group string) (int64, error) {
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	st, err := b.stream(ctx, dlqStream(group))
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, mapErr(err)
	}
	return int64(st.CachedInfo().State.Msgs), nil
}

// Redrive is RedriveIDs counting what went.
func (b *Backend) Redrive(ctx context.Context, group string, ids []string) (int, error) {
	moved, err := b.RedriveIDs(ctx, group, ids)
	return len(moved), err
}

// RedriveIDs implements core.DeadLetterService.
func (b *Backend) RedriveIDs(ctx context.Context, group string, ids []string) (moved []string, err error) {
	if _, err := b.stream(ctx, dlqStream(group)); errors.Is(err, jsapi.ErrStreamNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, mapErr(err)
	}
	for seq := uint64(1); ; {
		// From the leader: a lagging replica's 404 would end the
		// redrive early.
		raw, err := b.leaderMsg(ctx, dlqStream(group), msgGet{Seq: seq, NextBySubj: dlqSubject(group)})
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			return moved, nil
		} else if err != nil {
			return moved, mapErr(err)
		}
		seq = raw.Sequence + 1
		id := raw.Header.Get(hID)
		if len(ids) > 0 && !slices.Contains(ids, id) {
			continue
		}
		took, err := b.redriveOne(ctx, group, raw)
		if err != nil {
			return moved, err
		}
		if !took {
			continue // another redrive (or a job) took it
		}
		moved = append(moved, id)
	}
}

// redriveOne sends dead letter raw of group back to its topic's redrive
// subject with reconsume times reset, then deletes it from the DLQ; false
// when it was gone already (another redrive took it). The copy's
// Nats-Msg-Id names the dead letter's DLQ sequence, so two redrives of
// one dead letter (by ids, by a job, a job resumed after its owner died)
// store one copy.
func (b *Backend) redriveOne(ctx context.Context, group string, raw *jsapi.RawStreamMsg) (bool, error) {
	topic := raw.Header.Get(hTopic)
	if _, err := b.cachedTopic(topic); err != nil {
		return false, err // a deleted topic takes no redrive (ENotFound), now or at a retry
	}
	m := nats.NewMsg(redriveSubject(topic, group))
	m.Data = raw.Data
	for k, v := range raw.Header {
		switch k {
		case hReconsume, hOrigin, hTopic:
			continue
		}
		if len(k) > 5 && k[:5] == "Nats-" {
			continue
		}
		m.Header[k] = v
	}
	m.Header.Set(jsapi.MsgIDHeader, fmt.Sprintf("redrive:%s:%d", group, raw.Sequence))
	if _, err := b.js.PublishMsg(ctx, m); err != nil {
		return false, publishErr(err)
	}
	return b.deleteMsg(ctx, dlqStream(group), raw.Sequence)
}

// Message implements core.TopicService through the id index entry published
// with the message (mqi.<topic>.i.<id>). A delayed message is found as
// its schedule until it is due; once moved to its queue it is not (the
// schedule is purged and the moved copy is not indexed).
func (b *Backend) Message(topic, id string) (*core.Message, error) {
	if _, err := b.Topic(topic); err != nil {
		return nil, err
	}
	notFound := core.Errorf(core.ENotFound, "message %q not found in topic %q", id, topic)
	if !core.ValidName(id) {
		return nil, notFound
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	st, err := b.stream(ctx, topicStream(topic))
	if err != nil {
		return nil, mapErr(err)
	}
	idx, err := st.GetLastMsgForSubject(ctx, idSubject(topic, id))
	if errors.Is(err, jsapi.ErrMsgNotFound) { // stored before indexSubjects?
		idx, err = st.GetLastMsgForSubject(ctx, legacyIndexSubject(idSubject(topic, id)))
	}
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		return nil, notFound
	} else if err != nil {
		return nil, mapErr(err)
	}
	m, err := b.indexed(ctx, st, idx)
	if err != nil || m == nil {
		return nil, notFoundOr(err, notFound)
	}
	return m, nil
}

func notFoundOr(err, nf error) error {
	if err != nil {
		return err
	}
	return nf
}

// indexed reads the message an index entry points at (nil when gone).
func (b *Backend) indexed(ctx context.Context, st jsapi.Stream, idx *jsapi.RawStreamMsg) (*core.Message, error) {
	back, err := strconv.ParseUint(string(idx.Data), 10, 64)
	if err != nil || back == 0 || back >= idx.Sequence {
		return nil, nil
	}
	raw, err := st.GetMsg(ctx, idx.Sequence-back)
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, mapErr(err)
	}
	return decodeMessage(raw.Subject, raw.Header, raw.Data, raw.Sequence, raw.Time), nil
}

// MessagesByKey implements core.TopicService through the key index entries
// (mqi.<topic>.k.<hash>): the newest limit messages, oldest first.
func (b *Backend) MessagesByKey(topic, key string, limit int) ([]*core.Message, error) {
	if _, err := b.Topic(topic); err != nil {
		return nil, err
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	st, err := b.stream(ctx, topicStream(topic))
	if err != nil {
		return nil, mapErr(err)
	}
	// Entries stored before indexSubjects first (they are all older).
	subj := keySubject(topic, key)
	var out []*core.Message
	for _, subj := range []string{legacyIndexSubject(subj), subj} {
		for seq := uint64(1); ; {
			idx, err := st.GetMsg(ctx, seq, jsapi.WithGetMsgSubject(subj))
			if errors.Is(err, jsapi.ErrMsgNotFound) {
				break
			} else if err != nil {
				return nil, mapErr(err)
			}
			seq = idx.Sequence + 1
			m, err := b.indexed(ctx, st, idx)
			if err != nil {
				return nil, err
			}
			if m == nil || !slices.Contains(m.Keys, key) { // a hash collision
				continue
			}
			out = append(out, m)
			if len(out) > limit {
				out = out[1:]
			}
		}
	}
	return out, nil
}

// GetMessages implements core.TopicService (browse): offsets are stream
// sequences; the queue's messages from offset on, through its subject.
func (b *Backend) GetMessages(mq core.MessageQueue, offset int64, maxN int, filter core.Filter) (core.GetResult, error) {
	t, err := b.Topic(mq.Topic)
	if err != nil {
		return core.GetResult{}, err
	}
	if mq.QueueID < 0 || mq.QueueID >= t.Queues {
		return core.GetResult{}, core.FieldError("queueId", "must be between 0 and %d", t.Queues-1)
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	st, err := b.stream(ctx, topicStream(mq.Topic))
	if err != nil {
		return core.GetResult{}, mapErr(err)
	}
	ss := st.CachedInfo().State
	res := core.GetResult{Status: core.NoNewMsg, MinOffset: int64(ss.FirstSeq), MaxOffset: int64(ss.LastSeq) + 1,
		NextOffset: max(offset, int64(ss.FirstSeq)), TopicUID: t.UID}
	seq := uint64(max(offset, 1))
	for len(res.Messages) < maxN {
		raw, err := st.GetMsg(ctx, seq, jsapi.WithGetMsgSubject(queueSubject(mq.Topic, mq.QueueID)))
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			break
		} else if err != nil {
			return core.GetResult{}, mapErr(err)
		}
		seq = raw.Sequence + 1
		res.NextOffset = int64(seq)
		m := decodeMessage(raw.Subject, raw.Header, raw.Data, raw.Sequence, raw.Time)
		if !filter.All() && !filter.MatchTags(m.Tags) {
			continue
		}
		res.Messages = append(res.Messages, m)
	}
	if len(res.Messages) > 0 {
		res.Status = core.Found
	}
	return res, nil
}
