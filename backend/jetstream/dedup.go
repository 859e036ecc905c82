package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Idempotent publish (Idempotency-Key, a batch entry's deduplicationId),
// with the embedded engine's semantics (core/engine/dedup.go).
//
// A message carrying a DedupID is followed in its atomic batch by a dedup
// entry on mqi.<topic>.d.<h>, h = SHA-256 of (topic, DedupID), whose
// Nats-Msg-Id is h: the stream's duplicate window (the topic's
// --dedup-window) makes JetStream itself refuse a second batch holding
// the same h, atomically and on every instance, so two publishes of one
// key never both store. The entry records the original result (message
// id, queue, born time, due time; its payload is how many sequences back
// the message is, so the offset follows from the entry's own sequence)
// and the request's hash. Being in the same batch as the message, it is
// stored with it or not at all: there is no second write for a crashed
// gateway to leave out.
//
// A refused batch (10201: a Nats-Msg-Id already stored) makes Put read
// the entries of its keys from the stream leader: a key found within the
// window answers its original result (Replayed), or 422 if the hash
// differs; the others are published again without the replayed ones. A
// key whose first publish is still being stored (10158, or no entry yet)
// is waited for with backoff, up to dedupWaitFor, then 409.

// hDedupHash is the request hash on a dedup entry (hex).
const hDedupHash = "Mq-Dedup-Hash"

// dedupWaitFor bounds how long a publish waits for a concurrent one with
// the same key to be stored.
const dedupWaitFor = 5 * time.Second

var (
	errDuplicate          = errors.New("jetstream: batch holds a stored Nats-Msg-Id")
	errDuplicateInProcess = errors.New("jetstream: a Nats-Msg-Id of the batch is being stored")
)

func dedupHashID(topic, id string) string {
	h := sha256.New()
	h.Write([]byte(topic))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return hex.EncodeToString(h.Sum(nil)[:20])
}

func dedupSubject(topic, id string) string { return "mqi." + topic + ".d." + dedupHashID(topic, id) }

// dedupEntry is the dedup entry of m, stored back sequences after it.
func dedupEntry(topic string, m *core.PutMessage, res core.PutResult, back int) *nats.Msg {
	d := nats.NewMsg(dedupSubject(topic, m.DedupID))
	d.Header.Set(jsapi.MsgIDHeader, dedupHashID(topic, m.DedupID))
	d.Header.Set(hDedupHash, hex.EncodeToString(m.DedupHash[:]))
	d.Header.Set(hID, res.MessageID)
	d.Header.Set(hQueue, strconv.Itoa(res.QueueID))
	d.Header.Set(hBorn, strconv.FormatInt(res.StoredAt.UnixMilli(), 10))
	if !res.DeliverAt.IsZero() {
		d.Header.Set(hDeliverAt, strconv.FormatInt(res.DeliverAt.UnixMilli(), 10))
	}
	d.Data = []byte(strconv.Itoa(back))
	return d
}

// replayOf rebuilds the original result from a dedup entry; ok is false
// for an entry that does not parse.
func replayOf(topic string, e *jsapi.RawStreamMsg) (res core.PutResult, hash string, ok bool) {
	q, err1 := strconv.Atoi(e.Header.Get(hQueue))
	born, err2 := strconv.ParseInt(e.Header.Get(hBorn), 10, 64)
	back, err3 := strconv.ParseUint(string(e.Data), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || back == 0 || back >= e.Sequence {
		return core.PutResult{}, "", false
	}
	res = core.PutResult{MessageID: e.Header.Get(hID), Topic: topic, QueueID: q,
		QueueOffset: int64(e.Sequence - back), StoredAt: time.UnixMilli(born).UTC(), Replayed: true}
	if v, err := strconv.ParseInt(e.Header.Get(hDeliverAt), 10, 64); err == nil && v != 0 {
		res.QueueID, res.QueueOffset, res.DeliverAt = -1, -1, time.UnixMilli(v).UTC()
	}
	return res, e.Header.Get(hDedupHash), true
}

func dedupMismatch(topic, id string) error {
	return core.Errorf(core.EUnprocessable,
		"idempotency key %q was used on topic %q with a different request within the dedup window", id, topic)
}

// putIdempotent is Put for a batch with DedupIDs.
func (b *Backend) putIdempotent(ctx context.Context, t core.Topic, msgs []core.PutMessage) ([]core.PutResult, error) {
	out := make([]core.PutResult, len(msgs))
	// An id repeated inside the batch is stored once: the later entry is
	// a replay of the earlier (422 if they differ).
	alias := map[int]int{}
	first := map[string]int{}
	var fresh []int
	for i := range msgs {
		m := &msgs[i]
		if m.DedupID != "" {
			if j, seen := first[m.DedupID]; seen {
				if msgs[j].DedupHash != m.DedupHash {
					return nil, dedupMismatch(t.Name, m.DedupID)
				}
				alias[i] = j
				continue
			}
			first[m.DedupID] = i
		}
		fresh = append(fresh, i)
	}
	window, err := b.dedupWindowOf(ctx, t)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(dedupWaitFor)
	wait := 10 * time.Millisecond
	for len(fresh) > 0 {
		batch := make([]core.PutMessage, len(fresh))
		for k, i := range fresh {
			batch[k] = msgs[i]
		}
		stored, err := b.putNew(ctx, t, batch, false)
		if err == nil {
			for k, i := range fresh {
				out[i] = stored[k]
			}
			break
		}
		if !errors.Is(err, errDuplicate) && !errors.Is(err, errDuplicateInProcess) {
			return nil, err
		}
		// Some key of the batch is stored (or being stored): answer the
		// stored ones, publish the rest again.
		var rest []int
		found := false
		for _, i := range fresh {
			m := &msgs[i]
			if m.DedupID == "" {
				rest = append(rest, i)
				continue
			}
			res, ok, err := b.lookupDedup(ctx, t.Name, m, window)
			if err != nil {
				return nil, err
			}
			if ok {
				out[i], found = res, true
				continue
			}
			rest = append(rest, i)
		}
		fresh = rest
		if found {
			continue // publish the rest at once
		}
		// Nothing readable yet: the other publish is still being stored.
		if time.Now().Add(wait).After(deadline) {
			return nil, core.Errorf(core.EConflict, "an idempotent publish with the same key is in progress; retry")
		}
		if err := b.sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
	for i, j := range alias { // j < i, answered above
		out[i] = out[j]
		out[i].Replayed = true
	}
	return out, nil
}

// lookupDedup reads m's dedup entry from the stream leader: the original
// result when the entry is within the window, 422 when its hash differs.
func (b *Backend) lookupDedup(ctx context.Context, topic string, m *core.PutMessage, window time.Duration) (core.PutResult, bool, error) {
	e, err := b.leaderMsg(ctx, topicStream(topic), msgGet{LastBySubj: dedupSubject(topic, m.DedupID)})
	if errors.Is(err, jsapi.ErrMsgNotFound) { // stored before indexSubjects?
		e, err = b.leaderMsg(ctx, topicStream(topic), msgGet{LastBySubj: legacyIndexSubject(dedupSubject(topic, m.DedupID))})
	}
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		return core.PutResult{}, false, nil
	} else if err != nil {
		return core.PutResult{}, false, mapErr(err)
	}
	// An entry older than the stream's window is forgotten (the store
	// would take the key again).
	if time.Since(e.Time) >= window {
		return core.PutResult{}, false, nil
	}
	res, hash, ok := replayOf(topic, e)
	if !ok {
		return core.PutResult{}, false, nil
	}
	if hash != hex.EncodeToString(m.DedupHash[:]) {
		return core.PutResult{}, false, dedupMismatch(topic, m.DedupID)
	}
	b.log.Debug().Str("id", res.MessageID).Int64("sseq", res.QueueOffset).Str("dedup", m.DedupID).
		Msg("idempotent publish replayed")
	return res, true, nil
}

// dedupWindowOf is the duplicate window of t's stream, first widened to
// --dedup-window (at most the retention) if the stream has less: a topic
// created before idempotency keys were kept on JetStream has the old
// 2-minute window, and a repeat after it would be stored again. The
// window only grows, so instances with different --dedup-window
// settle on the largest instead of flapping. Checked once per topic
// incarnation per instance.
func (b *Backend) dedupWindowOf(ctx context.Context, t core.Topic) (time.Duration, error) {
	key := fmt.Sprintf("%s/%d", t.Name, t.UID)
	if v, ok := b.windows.Load(key); ok {
		return v.(time.Duration), nil
	}
	rctx, cancel := b.ctx(ctx)
	defer cancel()
	st, err := b.stream(rctx, topicStream(t.Name))
	if err != nil {
		return 0, mapErr(err)
	}
	cfg := st.CachedInfo().Config
	want := b.opts.DedupWindow
	if cfg.MaxAge > 0 {
		want = min(want, cfg.MaxAge)
	}
	if cfg.Duplicates < want {
		cfg.Duplicates = want
		if _, err := b.js.UpdateStream(rctx, cfg); err != nil {
			return 0, mapErr(err)
		}
		b.log.Info().Str("topic", t.Name).Dur("window", want).Msg("idempotency: widened the topic stream's duplicate window to --dedup-window")
	}
	b.windows.Store(key, cfg.Duplicates)
	return cfg.Duplicates, nil
}

// sleep waits d, or until ctx ends or the backend closes.
func (b *Backend) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return core.Errorf(core.EUnavailable, "publish abandoned: %v", ctx.Err())
	case <-b.stop:
		return core.ErrClosed
	}
}
