package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Growth fences (SPEC §8.8): growing a topic from N to M queues moves a
// sharding key whose FNV-1a hash mod M differs from mod N to another
// subject, and each queue of an ORDERLY group is its own consumer, so
// nothing in JetStream orders the key's new queue after its old one.
//
// At growth the topic stream's metadata gains a fence (mqgate.fences):
// the old queue count, the stream's last sequence before the new layout
// and when. An ORDERLY lease of a message past a fence whose key lived
// in another queue before it (its old queue: hash mod the fence's
// count) hands it out only once the group's consumer of that old queue
// has nothing of its own left below the message: the first message on
// the old queue's subject past that consumer's ack floor is at or after
// the message (or there is none). Until then the message goes back with
// a NAK of fenceWait (the queue's consumer, MaxAckPending 1, keeps the
// queue behind it; the server's timer brings it back, no instance polls),
// and the return is counted in the leases bucket (f.<stream>.<consumer
// hex>.<seq>) so it is not taken for a failure: reconsumeTimes is the
// delivery count minus 1 minus the fence returns.
//
// The check is dynamic (the old queue's floor against this message's
// sequence), so it also covers publishes an instance made with the old
// layout just after the growth (topics are cached for topicTTL). Once a
// check passes for a message stored well after the growth (fenceSettle),
// every later one of that old queue passes without a read: the old
// layout can no longer be written to. That holds until an offsets reset
// moves the consumers' ack floors back, so a remembered pass is good only
// for the reset count it was made under (ruleSet.Resets, which the reset
// bumps before it recreates the consumers and every ORDERLY lease call
// reads from the leader): a delivery of a reset consumer is always
// checked again, on every instance.
//
// A queue added by growth is consumed by groups that subscribed before
// it from its first message (SPEC §8.7): its consumer delivers all.

const (
	metaFences = "mqgate.fences"
	// fenceWait is how long a fenced message waits before the server
	// brings it back for another check.
	fenceWait = 250 * time.Millisecond
	// fenceSettle: messages stored this long after a growth can no longer
	// be behind an old-layout publish of a stale instance (topicTTL, plus
	// clock skew between gateways and servers).
	fenceSettle = 5 * time.Second
)

// fence is one growth of a topic.
type fence struct {
	Queues int    `json:"queues"` // the queue count before it
	Seq    uint64 `json:"seq"`    // the stream's last sequence before it
	At     int64  `json:"at"`     // unix ms
}

func parseFences(meta map[string]string) []fence {
	var fs []fence
	if v := meta[metaFences]; v != "" {
		_ = json.Unmarshal([]byte(v), &fs)
	}
	return fs
}

// withFences carries the current stream's fences into cfg and, when cfg
// grows the topic from old queues, adds one at last (PutTopic).
func withFences(cfg *jsapi.StreamConfig, cur *jsapi.StreamInfo, old, queues int) {
	fs := parseFences(cur.Config.Metadata)
	if queues > old {
		fs = append(fs, fence{Queues: old, Seq: cur.State.LastSeq, At: time.Now().UnixMilli()})
	}
	if len(fs) > 0 {
		raw, _ := json.Marshal(fs)
		cfg.Metadata[metaFences] = string(raw)
	}
}

// fenceState caches fence checks that passed for good, by group,
// consumer, topic, fence and old queue: the reset count they passed under.
type fenceState struct {
	mu     sync.Mutex
	passed map[string]uint64
}

func (f *fenceState) ok(k string, resets uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.passed[k]
	return ok && n == resets
}

func (f *fenceState) pass(k string, resets uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.passed == nil {
		f.passed = map[string]uint64{}
	}
	f.passed[k] = resets
}

func keyQueue(key string, queues int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(queues))
}

// fenced reports whether an ORDERLY delivery of m (on its queue's own
// subject) must wait for another queue of its key. Past a fence a key's
// messages are in its queue after the growth, or (published by an
// instance that had the old layout cached) in its queue before it: each
// waits until the other of the two has nothing left below it. Only
// lower sequences are waited for, so the lowest held message always
// passes: no two queues wait on each other. rules is what the lease call
// read for (g, consumerID); without them (unreadable) every check is
// made, none remembered.
func (b *Backend) fenced(ctx context.Context, g core.Group, consumerID string, rules *ruleSet, views *topicViews, p pulled, m *core.Message) bool {
	if p.ref.queue < 0 || m.ShardingKey == "" {
		return false
	}
	if _, q := subjectQueue(p.msg.Subject); q != p.ref.queue {
		return false // a redriven copy
	}
	seq := uint64(m.QueueOffset)
	c, err := b.topicView(p.ref.topic, seq, views)
	if err != nil || len(c.fences) == 0 {
		return false
	}
	for i, f := range c.fences {
		if seq <= f.Seq {
			break
		}
		after := c.t.Queues
		if i+1 < len(c.fences) {
			after = c.fences[i+1].Queues
		}
		for _, other := range []int{keyQueue(m.ShardingKey, f.Queues), keyQueue(m.ShardingKey, after)} {
			if other == p.ref.queue {
				continue
			}
			// Named by incarnations too: a topic or group deleted and made
			// again starts with no passed fences.
			ck := fmt.Sprintf("%s/%d/%s/%s/%d/%d/%d/%d", g.Name, g.Incarnation, consumerID, p.ref.topic, c.t.UID, i, p.ref.queue, other)
			if rules != nil && b.fences.ok(ck, rules.Resets) {
				continue
			}
			ref := consumerRef{p.ref.topic, p.ref.stream, consumerName(g.Name, consumerID, other), other}
			done, err := b.oldQueueDone(ctx, ref, seq)
			if err != nil {
				b.log.Warn().Err(err).Str("group", g.Name).Str("topic", p.ref.topic).Msg("growth fence check failed; the message waits")
				return true
			}
			if !done {
				return true
			}
			if rules != nil && m.StoredAt.After(time.UnixMilli(f.At).Add(fenceSettle)) {
				b.fences.pass(ck, rules.Resets)
			}
		}
	}
	return false
}

// topicViews are the topic views read again for one lease call's fence
// checks and fence return counts. A cached view (topicTTL) can miss a
// growth made through another instance since it was read, and with it
// the fence a message may be behind: a test saw a key's later message,
// published to its old queue by an instance with the old layout cached,
// handed out before its earlier one in the new queue (and a fence return
// counted as a failure). A growth after the read has a fence past
// the view's last sequence, so only a delivery stored after it needs the
// topic read again. The reads (one per topic) start with the lease call,
// beside its claims (startViews), and the first fence check that needs
// one waits for it.
type topicViews struct {
	wg   sync.WaitGroup
	read map[string]*topicRead
}

type topicRead struct {
	c   cachedTopic
	err error
}

// startViews reads again the topics of the ORDERLY deliveries in items
// that carry a sharding key and are newer than their cached views.
func (b *Backend) startViews(items []pulled) *topicViews {
	v := &topicViews{read: map[string]*topicRead{}}
	for _, p := range items {
		if p.ref.queue < 0 || p.msg.Header.Get(hSharding) == "" || v.read[p.ref.topic] != nil {
			continue
		}
		meta, ok := parseAck(p.msg.Reply)
		if !ok {
			continue
		}
		if c, err := b.cachedTopicInfo(p.ref.topic); err != nil || meta.sseq <= c.lastSeq {
			continue
		}
		r := &topicRead{}
		v.read[p.ref.topic] = r
		v.wg.Go(func() { r.c, r.err = b.loadTopic(p.ref.topic) })
	}
	return v
}

// topicView is the cached view of topic, read again (through views, when
// given) if the message at seq is newer than it.
func (b *Backend) topicView(topic string, seq uint64, views *topicViews) (cachedTopic, error) {
	c, err := b.cachedTopicInfo(topic)
	if err == nil && seq > c.lastSeq {
		c, err = views.get(b, topic)
	}
	return c, err
}

// get is topic's view read for this lease call (read now if startViews
// did not start it).
func (v *topicViews) get(b *Backend, topic string) (cachedTopic, error) {
	if v != nil {
		v.wg.Wait()
		if r := v.read[topic]; r != nil {
			return r.c, r.err
		}
	}
	return b.loadTopic(topic)
}

// wait ends the reads (lease returns only after them).
func (v *topicViews) wait() {
	if v != nil {
		v.wg.Wait()
	}
}

// oldQueueDone reports whether ref's consumer has settled every message
// of its queue below seq.
func (b *Backend) oldQueueDone(ctx context.Context, ref consumerRef, seq uint64) (bool, error) {
	h, err := b.head(ctx, ref)
	if err != nil {
		return false, err
	}
	if h.floor+1 >= seq {
		return true, nil
	}
	m, err := b.leaderMsg(ctx, ref.stream, msgGet{Seq: h.floor + 1, NextBySubj: queueSubject(ref.topic, ref.queue)})
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		return true, nil
	} else if err != nil {
		return false, mapErr(err)
	}
	return m.Sequence >= seq, nil
}

// fenceKey counts the fence returns of one message on one consumer.
func fenceKey(stream, consumer string, seq uint64) string {
	return fenceKeys(stream, consumer) + "." + strconv.FormatUint(seq, 10)
}

// fenceKeys is what the fence return keys of one consumer begin with.
func fenceKeys(stream, consumer string) string {
	return fmt.Sprintf("f.%s.%x", stream, consumer)
}

// fenceReturns is how many of a delivery's earlier deliveries were fence
// returns (0 unless it was delivered again on a grown topic).
func (b *Backend) fenceReturns(ctx context.Context, meta ackMeta, views *topicViews) int {
	if _, orderly := consumerQueue(meta.consumer); meta.delivered <= 1 || !orderly {
		return 0
	}
	if c, _ := b.topicView(strings.TrimPrefix(meta.stream, "MQ_"), meta.sseq, views); len(c.fences) == 0 {
		return 0
	}
	v, found, err := b.leaderGet(ctx, "KV_"+leasesBucket, "$KV."+leasesBucket+"."+fenceKey(meta.stream, meta.consumer, meta.sseq))
	if err != nil || !found {
		return 0
	}
	n, _ := strconv.Atoi(string(v))
	return min(n, int(meta.delivered)-1)
}

// forgetFenceReturns drops the fence returns counted on refs' consumers
// (an offsets reset: their delivery counts start again, and returns
// counted before would be taken off failures after).
func (b *Backend) forgetFenceReturns(ctx context.Context, refs []consumerRef) {
	filters := make([]string, len(refs))
	for i, ref := range refs {
		filters[i] = fenceKeys(ref.stream, ref.name) + ".*"
	}
	lister, err := b.leases.ListKeysFiltered(ctx, filters...)
	if err == nil {
		var keys []string
		for k := range lister.Keys() {
			keys = append(keys, k)
		}
		for _, k := range keys {
			if err = b.leases.Purge(ctx, k); err != nil {
				break
			}
		}
	}
	if err != nil && !errors.Is(err, jsapi.ErrNoKeysFound) {
		b.log.Warn().Err(err).Msg("forgetting growth-fence returns at a reset; some retries may count short")
	}
}

// holdAtFence sends a fenced delivery back for fenceWait, counting the
// return (n returns before this one).
func (b *Backend) holdAtFence(ctx context.Context, p pulled, meta ackMeta, n int) {
	if _, err := b.leases.Put(ctx, fenceKey(meta.stream, meta.consumer, meta.sseq), []byte(strconv.Itoa(n+1))); err != nil {
		b.log.Warn().Err(err).Msg("counting a growth-fence return")
	}
	b.requestAll(ctx, []string{p.msg.Reply}, nakDelay(fenceWait))
}

// grownQueue reports whether ref's queue was added to t by a growth
// after g was created: its consumer then starts at the queue's first
// message, not at consumeFrom (SPEC §8.7).
func grownQueue(g core.Group, fences []fence, ref consumerRef) bool {
	if ref.queue < 0 {
		return false
	}
	grown := false
	for _, f := range fences { // the last growth past the queue's id made it
		if ref.queue >= f.Queues {
			grown = g.CreatedAt.Before(time.UnixMilli(f.At))
		}
	}
	return grown
}
