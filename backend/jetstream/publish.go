package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// Put implements core.TopicService. A batch is one JetStream atomic batch
// (Nats-Batch-Id / -Sequence / -Commit): all of it is stored or none.
// A delayed message (delayLevel, deliverAt) is a schedule message on
// mq.<topic>.s.<id> (Nats-Schedule: @at …, Nats-Schedule-Target: its
// queue subject): the server stores it in the queue when due, never
// before. Messages carrying a DedupID are idempotent (dedup.go).
func (b *Backend) Put(ctx context.Context, topic string, msgs []core.PutMessage) ([]core.PutResult, error) {
	if core.IsSystemTopic(topic) {
		return nil, core.Errorf(core.EForbidden, "%q is a system topic", topic)
	}
	t, err := b.cachedTopic(topic)
	if err != nil {
		return nil, err
	}
	// The one check of a publish's limits (core/validate.go), the
	// embedded engine's: the same messages are refused in the same words.
	if err := core.ValidatePut(msgs, time.Now(), b.opts.MaxDelay); err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if m.DedupID != "" {
			return b.putIdempotent(ctx, t, msgs)
		}
	}
	return b.putNew(ctx, t, msgs, true)
}

// putNew stores msgs as one atomic batch, with their index entries and,
// for those with a DedupID, their dedup entries. With coalesce, the
// batch may carry other publishes of the topic too (coalesce.go).
func (b *Backend) putNew(ctx context.Context, t core.Topic, msgs []core.PutMessage, coalesce bool) ([]core.PutResult, error) {
	topic := t.Name
	now := time.Now().UTC()
	out := make([]core.PutResult, len(msgs))
	nm := make([]*nats.Msg, len(msgs))
	for i, m := range msgs {
		id := newID(now)
		q := b.chooseQueue(t, m.ShardingKey)
		msg := nats.NewMsg(queueSubject(topic, q))
		msg.Data = m.Body
		encodeHeaders(msg.Header, id, m, now)
		res := core.PutResult{MessageID: id, Topic: topic, QueueID: q, StoredAt: now}
		due := b.dueAt(m, now)
		if !due.IsZero() {
			msg.Subject = scheduleSubject(topic, id)
			msg.Header.Set("Nats-Schedule", "@at "+due.UTC().Format(time.RFC3339Nano))
			msg.Header.Set("Nats-Schedule-Target", queueSubject(topic, q))
			msg.Header.Set(hDeliverAt, strconv.FormatInt(due.UnixMilli(), 10))
			res.QueueID, res.QueueOffset, res.DeliverAt = -1, -1, due
		}
		nm[i], out[i] = msg, res
	}
	// Each message is followed, in the same atomic batch, by its index
	// entries: mqi.<topic>.i.<id> and mqi.<topic>.k.<key hash>, whose payload
	// is how many sequences back the message is.
	all := make([]*nats.Msg, 0, 2*len(nm))
	pos := make([]int, len(nm))
	for i, m := range nm {
		pos[i] = len(all)
		all = append(all, m)
		all = append(all, indexMsg(idSubject(topic, out[i].MessageID), 1))
		seen := map[string]bool{}
		for _, k := range msgs[i].Keys {
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			all = append(all, indexMsg(keySubject(topic, k), len(all)-pos[i]))
		}
		if msgs[i].DedupID != "" {
			all = append(all, dedupEntry(topic, &msgs[i], out[i], len(all)-pos[i]))
		}
	}
	if len(all) > b.opts.MaxAtomicBatch {
		return nil, core.Errorf(core.ETooLarge, "this batch needs %d JetStream messages with its index entries; the configured atomic batch limit is %d (raise jetstream.limits.batch.max_msgs on the servers and --nats-max-batch)", len(all), b.opts.MaxAtomicBatch)
	}
	var first uint64
	var err error
	if coalesce {
		first, err = b.publishCoalesced(ctx, topicStream(topic), all)
	} else {
		var last uint64
		last, err = b.publishBatch(ctx, all)
		first = last - uint64(len(all)) + 1
	}
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].QueueOffset == 0 {
			out[i].QueueOffset = int64(first + uint64(pos[i]))
		}
		if msgs[i].ShardingKey != "" {
			b.log.Debug().Str("id", out[i].MessageID).Int("queue", out[i].QueueID).
				Int64("sseq", out[i].QueueOffset).Str("dedup", msgs[i].DedupID).Msg("keyed publish stored")
		}
	}
	return out, nil
}

func indexMsg(subject string, back int) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = []byte(strconv.Itoa(back))
	return m
}

// idSubject and keySubject are a message's index entries in its topic's
// stream, under indexSubjects (no consumer filter matches them). Keys are hashed:
// they may hold any character.
func idSubject(topic, id string) string { return "mqi." + topic + ".i." + id }

func keySubject(topic, key string) string {
	h := sha256.Sum256([]byte(key))
	return "mqi." + topic + ".k." + hex.EncodeToString(h[:20])
}

func publishErr(err error) error {
	if e := mapErr(err); e != err {
		return e
	}
	return core.Errorf(core.EUnavailable, "publish not confirmed by JetStream: %v", err)
}

// dueAt is when a delayed message is due (zero: now); ValidatePut has
// checked its delay fields.
func (b *Backend) dueAt(m core.PutMessage, now time.Time) time.Time {
	switch {
	case m.DelayLevel > 0:
		// A level above the last is the last, as on the embedded engine.
		return now.Add(policy.LevelDelay(b.opts.DelayLevels, m.DelayLevel))
	case m.DeliverAt.After(now):
		return m.DeliverAt
	}
	return time.Time{}
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
//
// A commit that no stream answered at all ("no responders": no leader is
// subscribed, as while a stream elects one, e.g. after a partition heals)
// reached no stream, so the batch was not stored and cannot be: it is
// sent again, as a new batch, with the reads' backoff (at most
// readRetryFor). Any other failure (a timeout, an error answer) may
// follow a stored batch and is never retried here.
func (b *Backend) publishBatch(ctx context.Context, msgs []*nats.Msg) (uint64, error) {
	deadline := time.Now().Add(readRetryFor)
	wait := readRetryFirst
	for {
		seq, err := b.publishBatchOnce(ctx, msgs)
		if !errors.Is(err, errNoStream) {
			return seq, err
		}
		if time.Now().Add(wait).After(deadline) {
			return 0, publishErr(nats.ErrNoResponders)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, publishErr(nats.ErrNoResponders)
		case <-b.stop:
			t.Stop()
			return 0, publishErr(nats.ErrNoResponders)
		case <-t.C:
		}
		wait = min(2*wait, readRetryMax)
	}
}

// errNoStream: a batch commit no stream received (publishBatch retries it).
var errNoStream = errors.New("no stream answered the batch commit")

func (b *Backend) publishBatchOnce(ctx context.Context, msgs []*nats.Msg) (uint64, error) {
	id := nats.NewInbox()[len(nats.InboxPrefix):]
	for i, m := range msgs {
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		if i == len(msgs)-1 {
			m.Header.Set("Nats-Batch-Commit", "1")
			break
		}
		m.Header.Del("Nats-Batch-Commit") // a batch resent in parts (coalesce.go)
		if err := b.nc.PublishMsg(m); err != nil {
			return 0, publishErr(err)
		}
	}
	rctx, cancel := b.ctx(ctx)
	defer cancel()
	resp, err := b.nc.RequestMsgWithContext(rctx, msgs[len(msgs)-1])
	if errors.Is(err, nats.ErrNoResponders) {
		return 0, errNoStream
	} else if err != nil {
		return 0, publishErr(err)
	}
	var a batchAck
	if err := json.Unmarshal(resp.Data, &a); err != nil {
		return 0, publishErr(fmt.Errorf("batch ack: %w", err))
	}
	if a.Error != nil {
		switch a.Error.ErrCode {
		case errCodeBatchDuplicate:
			return 0, errDuplicate
		case errCodeDuplicateInProcess:
			return 0, errDuplicateInProcess
		}
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
