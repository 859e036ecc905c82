package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Put implements api.Engine. One message is one JetStream publish with
// Nats-Msg-Id = its id (a retried publish inside the dedup window is
// answered with the first copy). A batch is one JetStream atomic batch
// (Nats-Batch-Id / -Sequence / -Commit): all of it is stored or none.
// A delayed message (delayLevel, deliverAt) is a schedule message on
// mq.<topic>.s.<id> (Nats-Schedule: @at …, Nats-Schedule-Target: its
// queue subject): the server stores it in the queue when due, never
// before.
func (b *Backend) Put(ctx context.Context, topic string, msgs []core.PutMessage) ([]core.PutResult, error) {
	if len(msgs) == 0 {
		return nil, core.Errorf(core.EInvalid, "no messages")
	}
	if len(msgs) > core.MaxBatch {
		return nil, core.Errorf(core.ETooLarge, "at most %d messages in a batch", core.MaxBatch)
	}
	if core.IsSystemTopic(topic) {
		return nil, core.Errorf(core.EForbidden, "%q is a system topic", topic)
	}
	t, err := b.cachedTopic(topic)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	out := make([]core.PutResult, len(msgs))
	nm := make([]*nats.Msg, len(msgs))
	for i, m := range msgs {
		if len(m.Body) > core.MaxMessageSize {
			return nil, core.Errorf(core.ETooLarge, "message body exceeds %d bytes", core.MaxMessageSize)
		}
		id := newID(now)
		q := b.chooseQueue(t, m.ShardingKey)
		msg := nats.NewMsg(queueSubject(topic, q))
		msg.Data = m.Body
		encodeHeaders(msg.Header, id, m, now)
		msg.Header.Set(jsapi.MsgIDHeader, id)
		res := core.PutResult{MessageID: id, Topic: topic, QueueID: q, StoredAt: now}
		due, err := b.dueAt(m, now)
		if err != nil {
			return nil, err
		}
		if !due.IsZero() {
			msg.Subject = scheduleSubject(topic, id)
			msg.Header.Set("Nats-Schedule", "@at "+due.UTC().Format(time.RFC3339Nano))
			msg.Header.Set("Nats-Schedule-Target", queueSubject(topic, q))
			msg.Header.Set(hDeliverAt, strconv.FormatInt(due.UnixMilli(), 10))
			res.QueueID, res.QueueOffset, res.DeliverAt = -1, -1, due
		}
		nm[i], out[i] = msg, res
	}
	if len(nm) == 1 {
		ack, err := b.js.PublishMsg(ctx, nm[0])
		if err != nil {
			return nil, publishErr(err)
		}
		if out[0].QueueOffset == 0 {
			out[0].QueueOffset = int64(ack.Sequence)
		}
		return out, nil
	}
	last, err := b.publishBatch(ctx, nm)
	if err != nil {
		return nil, err
	}
	first := last - uint64(len(nm)) + 1
	for i := range out {
		if out[i].QueueOffset == 0 {
			out[i].QueueOffset = int64(first + uint64(i))
		}
	}
	return out, nil
}

func publishErr(err error) error {
	if e := mapErr(err); e != err {
		return e
	}
	return core.Errorf(core.EUnavailable, "publish not confirmed by JetStream: %v", err)
}

// dueAt is when a delayed message is due (zero: now).
func (b *Backend) dueAt(m core.PutMessage, now time.Time) (time.Time, error) {
	switch {
	case m.DelayLevel != 0:
		if m.DelayLevel < 1 || m.DelayLevel > len(b.opts.DelayLevels) {
			return time.Time{}, core.FieldError("delayLevel", "must be between 1 and %d", len(b.opts.DelayLevels))
		}
		return now.Add(b.opts.DelayLevels[m.DelayLevel-1]), nil
	case !m.DeliverAt.IsZero():
		if m.DeliverAt.After(now.Add(b.opts.MaxDelay)) {
			return time.Time{}, core.FieldError("deliverAt", "must be at most %s ahead", b.opts.MaxDelay)
		}
		if !m.DeliverAt.After(now) {
			return time.Time{}, nil
		}
		return m.DeliverAt, nil
	}
	return time.Time{}, nil
}

// chooseQueue hashes a sharding key (FNV-1a mod the queue count, as the
// embedded engine) or goes round-robin.
func (b *Backend) chooseQueue(t core.Topic, key string) int {
	if key != "" {
		h := fnv.New32a()
		h.Write([]byte(key))
		return int(h.Sum32() % uint32(t.Queues))
	}
	b.mu.Lock()
	n := b.rr[t.Name]
	b.rr[t.Name] = n + 1
	b.mu.Unlock()
	return int(n % uint32(t.Queues))
}

// batchAck is the answer to a batch's commit message.
type batchAck struct {
	Stream string `json:"stream"`
	Seq    uint64 `json:"seq"`
	Count  int    `json:"count"`
	Error  *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// publishBatch publishes msgs as one atomic batch and returns the stream
// sequence of the last one (the batch is contiguous).
func (b *Backend) publishBatch(ctx context.Context, msgs []*nats.Msg) (uint64, error) {
	id := nats.NewInbox()[len(nats.InboxPrefix):]
	for i, m := range msgs {
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		if i == len(msgs)-1 {
			m.Header.Set("Nats-Batch-Commit", "1")
			break
		}
		if err := b.nc.PublishMsg(m); err != nil {
			return 0, publishErr(err)
		}
	}
	rctx, cancel := b.ctx(ctx)
	defer cancel()
	resp, err := b.nc.RequestMsgWithContext(rctx, msgs[len(msgs)-1])
	if err != nil {
		return 0, publishErr(err)
	}
	var a batchAck
	if err := json.Unmarshal(resp.Data, &a); err != nil {
		return 0, publishErr(fmt.Errorf("batch ack: %w", err))
	}
	if a.Error != nil {
		if a.Error.Code == 400 {
			return 0, core.Errorf(core.EInvalid, "batch refused: %s", a.Error.Description)
		}
		return 0, core.Errorf(core.EUnavailable, "batch not stored: %s", a.Error.Description)
	}
	if a.Count != len(msgs) {
		return 0, core.Errorf(core.EUnavailable, "batch stored %d of %d messages", a.Count, len(msgs))
	}
	return a.Seq, nil
}
