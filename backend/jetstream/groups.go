package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// A group's config is a key of the MQGATE_GROUPS bucket; its position in
// each subscribed topic is one durable pull consumer (CONCURRENTLY) or one
// per queue (ORDERLY, MaxAckPending 1) on the topic's stream, per
// consumerId for BROADCASTING. Its dead letters are the stream MQD_<group>.

type groupCache struct {
	mu sync.Mutex
	m  map[string]cachedGroup
}

type cachedGroup struct {
	g  core.Group
	at time.Time
}

// groupTTL: a group changed through another instance is seen by this
// one's receives within it.
const groupTTL = time.Second

func (b *Backend) gcache() *groupCache {
	b.gc.mu.Lock()
	if b.gc.m == nil {
		b.gc.m = map[string]cachedGroup{}
	}
	b.gc.mu.Unlock()
	return &b.gc
}

// PutGroup implements core.GroupService.
func (b *Backend) PutGroup(ctx context.Context, cfg core.GroupConfig) (core.Group, bool, error) {
	cfg, err := core.NormalizeGroup(cfg)
	if err != nil {
		return core.Group{}, false, err
	}
	b.mu.Lock()
	check := b.checkPushURL
	b.mu.Unlock()
	if cfg.Push != nil && check != nil {
		// The webhook network guard, as on the embedded gateway: a URL no
		// delivery could reach is refused now (400), not at every POST.
		if err := check(ctx, cfg.Push.URL); err != nil {
			return core.Group{}, false, err
		}
	}
	ctx, cancel := b.ctx(ctx)
	defer cancel()
	now := time.Now().UTC()
	g := core.Group{GroupConfig: cfg, CreatedAt: now, UpdatedAt: now}
	created := true
	old, err := b.Group(ctx, cfg.Name)
	if err == nil {
		created = false
		g.CreatedAt, g.Incarnation = old.CreatedAt, old.Incarnation
		g.Paused, g.PausedAt = old.Paused, old.PausedAt // pause and resume change these, not a PUT
		if old.ConsumeMode != cfg.ConsumeMode || old.MessageModel != cfg.MessageModel {
			// The consumers change shape: drop the old ones.
			b.deleteConsumers(ctx, old)
		}
	} else if core.ErrorCode(err) != core.ENotFound {
		return core.Group{}, false, err
	} else {
		g.Incarnation = uint64(now.UnixNano())
	}
	raw, _ := json.Marshal(g)
	if _, err := b.groups.Put(ctx, cfg.Name, raw); err != nil {
		return core.Group{}, false, mapErr(err)
	}
	b.gcache().forget(cfg.Name)
	// The DLQ stream now, not at the first dead letter: creating an R3
	// stream can take seconds on a loaded cluster, and a nack waiting for
	// it timed out (503) in the fault run's first seconds. Should this
	// fail, the first dead letter creates it.
	if err := b.ensureDLQ(ctx, cfg.Name); err != nil {
		b.log.Warn().Err(err).Str("group", cfg.Name).Msg("DLQ stream not created yet; the first dead letter creates it")
	}
	if g.MessageModel == core.Clustering {
		for _, s := range g.Subscriptions {
			if err := b.ensureConsumers(ctx, g, "", s.Topic); err != nil && core.ErrorCode(err) != core.ENotFound {
				return core.Group{}, false, err
			}
		}
	}
	return g, created, nil
}

func (c *groupCache) forget(name string) {
	c.mu.Lock()
	delete(c.m, name)
	c.mu.Unlock()
}

// Group implements core.GroupService.
func (b *Backend) Group(ctx context.Context, name string) (core.Group, error) {
	if !core.ValidName(name) {
		return core.Group{}, core.Errorf(core.ENotFound, "group %q not found", name)
	}
	// From the stream leader: a group just created through another
	// instance is seen at once (a direct get may be served by a follower).
	v, found, err := b.leaderGet(ctx, "KV_"+groupsBucket, "$KV."+groupsBucket+"."+name)
	if err != nil {
		return core.Group{}, err
	}
	if !found || len(v) == 0 { // absent, or a delete marker
		return core.Group{}, core.Errorf(core.ENotFound, "group %q not found", name)
	}
	var g core.Group
	if err := json.Unmarshal(v, &g); err != nil {
		return core.Group{}, err
	}
	return g, nil
}

// cachedGroup is Group through a short cache (the receive path).
func (b *Backend) cachedGroup(ctx context.Context, name string) (core.Group, error) {
	c := b.gcache()
	c.mu.Lock()
	e, ok := c.m[name]
	c.mu.Unlock()
	if ok && time.Since(e.at) < groupTTL {
		return e.g, nil
	}
	g, err := b.Group(ctx, name)
	if err != nil {
		return g, err
	}
	c.mu.Lock()
	c.m[name] = cachedGroup{g, time.Now()}
	c.mu.Unlock()
	return g, nil
}

// GroupList implements core.GroupService.
func (b *Backend) GroupList(ctx context.Context) ([]core.Group, error) {
	keys, err := b.groups.ListKeys(ctx)
	if err != nil {
		return nil, mapErr(err)
	}
	var names []string
	for k := range keys.Keys() {
		names = append(names, k)
	}
	var out []core.Group
	for _, n := range names {
		g, err := b.Group(ctx, n)
		if core.ErrorCode(err) == core.ENotFound {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	sortGroups(out)
	return out, nil
}

func sortGroups(gs []core.Group) {
	for i := 1; i < len(gs); i++ {
		for j := i; j > 0 && gs[j].Name < gs[j-1].Name; j-- {
			gs[j], gs[j-1] = gs[j-1], gs[j]
		}
	}
}

// DeleteGroup implements core.GroupService: the config, every consumer and
// the dead-letter stream.
func (b *Backend) DeleteGroup(ctx context.Context, name string) error {
	g, err := b.Group(ctx, name)
	if err != nil {
		return err
	}
	if err := b.groups.Delete(ctx, name); err != nil {
		return mapErr(err)
	}
	b.gcache().forget(name)
	b.deleteConsumers(ctx, g)
	if err := b.js.DeleteStream(ctx, dlqStream(name)); err != nil && !errors.Is(err, jsapi.ErrStreamNotFound) {
		return mapErr(err)
	}
	b.ensured.Delete(dlqStream(name)) // a group made again gets its DLQ again
	b.forgetTimeline(ctx, name)
	b.forgetOrderly(ctx, name)
	return nil
}

// deleteConsumers removes every consumer of g on its topics' streams
// (also BROADCASTING consumers created by any instance).
func (b *Backend) deleteConsumers(ctx context.Context, g core.Group) {
	for _, s := range g.Subscriptions {
		st, err := b.stream(ctx, topicStream(s.Topic))
		if err != nil {
			continue
		}
		l := st.ConsumerNames(ctx)
		var names []string
		for n := range l.Name() {
			if n == g.Name || strings.HasPrefix(n, g.Name+"~") {
				names = append(names, n)
			}
		}
		for _, n := range names {
			_ = st.DeleteConsumer(ctx, n)
			b.ensured.Delete(topicStream(s.Topic) + "/" + n)
		}
	}
}

// consumerRef is one durable consumer a receive pulls from.
type consumerRef struct {
	topic  string
	stream string
	name   string
	queue  int // -1: every queue
}

// subscribedConsumers lists the consumers of (g, consumerID) on every
// topic it subscribes to; a subscribed topic that does not exist (yet, or
// any more) has none.
func (b *Backend) subscribedConsumers(g core.Group, consumerID string) ([]consumerRef, error) {
	var refs []consumerRef
	for _, s := range g.Subscriptions {
		t, err := b.cachedTopic(s.Topic)
		if core.ErrorCode(err) == core.ENotFound {
			continue
		} else if err != nil {
			return nil, err
		}
		refs = append(refs, b.consumersOf(g, consumerID, t)...)
	}
	return refs, nil
}

// consumersOf lists the consumers of (g, consumerID) on topic.
func (b *Backend) consumersOf(g core.Group, consumerID string, t core.Topic) []consumerRef {
	if g.ConsumeMode != core.Orderly {
		return []consumerRef{{t.Name, topicStream(t.Name), consumerName(g.Name, consumerID, -1), -1}}
	}
	out := make([]consumerRef, t.Queues)
	for q := range out {
		out[q] = consumerRef{t.Name, topicStream(t.Name), consumerName(g.Name, consumerID, q), q}
	}
	return out
}

// consumerConfig is the durable consumer of ref for g.
func (b *Backend) consumerConfig(g core.Group, ref consumerRef) jsapi.ConsumerConfig {
	cc := jsapi.ConsumerConfig{
		Durable:       ref.name,
		AckPolicy:     jsapi.AckExplicitPolicy,
		AckWait:       time.Duration(max(g.InvisibleSeconds, 1)) * time.Second,
		MaxDeliver:    -1, // the gateway dead-letters (maxReconsumeTimes)
		MaxAckPending: 10000,
		MaxWaiting:    4096,
		Replicas:      b.opts.Replicas,
		Metadata:      map[string]string{"mqgate.group": g.Name},
	}
	if ref.queue < 0 {
		cc.FilterSubjects = []string{queueWildcard(ref.topic), redriveSubject(ref.topic, g.Name)}
		if g.Push != nil {
			// maxInFlight bounds the group as a whole, not each
			// instance: the durable is shared by every gateway, and
			// JetStream counts its unacknowledged messages across all
			// of them (a feeder holds one batch until it is answered).
			cc.MaxAckPending = max(g.Push.MaxInFlight, 1) * max(g.Push.BatchSize, 1)
		}
	} else {
		cc.MaxAckPending = 1 // ORDERLY: one message of the queue out at a time
		cc.FilterSubjects = []string{queueSubject(ref.topic, ref.queue)}
		if ref.queue == 0 {
			cc.FilterSubjects = append(cc.FilterSubjects, redriveSubject(ref.topic, g.Name))
		}
	}
	switch g.ConsumeFrom {
	case core.ConsumeFromFirstOffset:
		cc.DeliverPolicy = jsapi.DeliverAllPolicy
	case core.ConsumeFromTimestamp:
		cc.DeliverPolicy = jsapi.DeliverByStartTimePolicy
		ts := g.ConsumeTimestamp
		cc.OptStartTime = &ts
	default:
		cc.DeliverPolicy = jsapi.DeliverNewPolicy
	}
	return cc
}

// ensureConsumers creates (or updates) the consumers of (g, consumerID)
// on topic; ENotFound when the topic does not exist yet.
func (b *Backend) ensureConsumers(ctx context.Context, g core.Group, consumerID, topic string) error {
	t, err := b.cachedTopic(topic)
	if err != nil {
		return err
	}
	for _, ref := range b.consumersOf(g, consumerID, t) {
		if err := b.ensureConsumer(ctx, g, ref, true); err != nil {
			return err
		}
	}
	return nil
}

// ensureConsumer creates or updates one consumer unless this instance
// already did for this group revision.
func (b *Backend) ensureConsumer(ctx context.Context, g core.Group, ref consumerRef, force bool) error {
	key := ref.stream + "/" + ref.name
	if v, ok := b.ensured.Load(key); ok && !force && v.(time.Time).Equal(g.UpdatedAt) {
		return nil
	}
	// Create-or-update is idempotent: retried like a read (a rejoining
	// node answers 10008 until it knows the leader).
	err := b.retryRead(ctx, func(ctx context.Context) error {
		cc := b.consumerConfig(g, ref)
		if grownQueue(g, b.topicFences(ref.topic), ref) {
			// A queue added after the group subscribed: from its first
			// message (SPEC §8.7; fence.go).
			cc.DeliverPolicy, cc.OptStartTime = jsapi.DeliverAllPolicy, nil
		}
		_, err := b.js.CreateOrUpdateConsumer(ctx, ref.stream, cc)
		var ae *jsapi.APIError
		if errors.As(err, &ae) && ae.ErrorCode == errCodeConsumerCreate {
			// Where an existing consumer starts cannot be updated, and
			// need not be: it was set when it was made, or by an offsets
			// reset since (a consumeFrom changed later applies to new
			// consumers only, as on embedded). Keep it.
			if c, ierr := b.js.Consumer(ctx, ref.stream, ref.name); ierr == nil {
				cur := c.CachedInfo().Config
				cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = cur.DeliverPolicy, cur.OptStartSeq, cur.OptStartTime
				_, err = b.js.CreateOrUpdateConsumer(ctx, ref.stream, cc)
			}
		}
		return err
	})
	if err != nil {
		if errors.Is(err, jsapi.ErrStreamNotFound) {
			return core.Errorf(core.ENotFound, "topic %q not found", ref.topic)
		}
		return mapErr(err)
	}
	b.ensured.Store(key, g.UpdatedAt)
	return nil
}

// Offsets implements core.GroupService from consumer info: Committed is the
// ack floor (a stream sequence), Max the stream's last sequence, Lag the
// messages not yet delivered plus those delivered and unacknowledged.
func (b *Backend) Offsets(ctx context.Context, group, consumerID string) ([]core.QueueOffset, error) {
	g, consumerID, err := b.groupConsumer(ctx, group, consumerID)
	if err != nil {
		return nil, err
	}
	var out []core.QueueOffset
	for _, s := range g.Subscriptions {
		t, err := b.Topic(s.Topic)
		if core.ErrorCode(err) == core.ENotFound {
			continue
		} else if err != nil {
			return nil, err
		}
		rows, err := b.offsetRows(ctx, g, consumerID, t)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// offsetRows are the rows of (g, consumerID) on t: one per queue, from
// the queue's consumer (ORDERLY) or the topic's one consumer
// (CONCURRENTLY: offsets.go).
func (b *Backend) offsetRows(ctx context.Context, g core.Group, consumerID string, t core.Topic) ([]core.QueueOffset, error) {
	var out []core.QueueOffset
	for _, ref := range b.consumersOf(g, consumerID, t) {
		if ref.queue < 0 {
			return b.queueRows(ctx, g, ref, t)
		}
		qo, err := b.consumerOffset(ctx, g, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, qo)
	}
	return out, nil
}

func (b *Backend) consumerOffset(ctx context.Context, g core.Group, ref consumerRef) (core.QueueOffset, error) {
	q := max(ref.queue, 0)
	qo := core.QueueOffset{Queue: core.MessageQueue{Topic: ref.topic, QueueID: q}}
	if err := b.ensureConsumer(ctx, g, ref, false); err != nil {
		return qo, err
	}
	c, err := b.consumer(ctx, ref.stream, ref.name)
	if err != nil {
		return qo, mapErr(err)
	}
	ci := c.CachedInfo()
	qo.Committed = int64(ci.AckFloor.Stream)
	qo.Lag = int64(ci.NumPending) + int64(ci.NumAckPending)
	qo.Max = int64(ci.Delivered.Stream) + int64(ci.NumPending)
	qo.InFlight = ci.NumAckPending
	return qo, nil
}

func (b *Backend) groupConsumer(ctx context.Context, group, consumerID string) (core.Group, string, error) {
	g, err := b.Group(ctx, group)
	if err != nil {
		return g, "", err
	}
	if g.MessageModel != core.Broadcasting {
		return g, "", nil
	}
	if consumerID == "" {
		return core.Group{}, "", core.FieldError("consumerId", "is required for a BROADCASTING group")
	}
	if !core.ValidName(consumerID) {
		return core.Group{}, "", core.FieldError("consumerId", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	return g, consumerID, nil
}

// ResetOffsets implements core.GroupService: each consumer of the group on
// topic is reset to the stream sequence of position (JetStream consumer
// reset, nats-server ≥ 2.14); messages it had delivered and not yet had
// acknowledged are forgotten. An ORDERLY group's reset is counted first,
// so that no instance trusts a growth-fence check made before it
// (fence.go).
func (b *Backend) ResetOffsets(ctx context.Context, group, consumerID, topic string, position core.ConsumeFromWhere, ts time.Time) ([]core.QueueOffset, error) {
	g, consumerID, err := b.groupConsumer(ctx, group, consumerID)
	if err != nil {
		return nil, err
	}
	subscribed := false
	for _, s := range g.Subscriptions {
		subscribed = subscribed || s.Topic == topic
	}
	if !subscribed {
		return nil, core.FieldError("topic", "group %q does not subscribe to %q", group, topic)
	}
	t, err := b.Topic(topic)
	if err != nil {
		return nil, err
	}
	st, err := b.stream(ctx, topicStream(topic))
	if err != nil {
		return nil, mapErr(err)
	}
	si := st.CachedInfo()
	seq := si.State.LastSeq + 1
	switch position {
	case core.ConsumeFromFirstOffset:
		seq = si.State.FirstSeq
	case core.ConsumeFromTimestamp:
		seq = b.seqAt(ctx, st, ts, si.State.LastSeq+1)
	}
	refs := b.consumersOf(g, consumerID, t)
	if g.ConsumeMode == core.Orderly {
		err := kvUpdate(ctx, b, rulesKey(group, consumerID), func(rs *ruleSet, _ bool) bool {
			rs.Resets++
			return true
		})
		if err != nil {
			return nil, err
		}
		b.forgetFenceReturns(ctx, refs)
	}
	for _, ref := range refs {
		cc := b.consumerConfig(g, ref)
		// Recreate from the sequence: a consumer's deliver policy must
		// admit the position it is reset to.
		_ = st.DeleteConsumer(ctx, ref.name)
		cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = jsapi.DeliverByStartSequencePolicy, max(seq, 1), nil
		if _, err := b.js.CreateOrUpdateConsumer(ctx, ref.stream, cc); err != nil {
			return nil, mapErr(err)
		}
		b.ensured.Store(ref.stream+"/"+ref.name, g.UpdatedAt)
	}
	return b.offsetRows(ctx, g, consumerID, t)
}

// seqAt is the first sequence stored at or after ts (end when none).
func (b *Backend) seqAt(ctx context.Context, st jsapi.Stream, ts time.Time, end uint64) uint64 {
	lo, hi := st.CachedInfo().State.FirstSeq, end
	for lo < hi { // binary search over stored timestamps
		mid := lo + (hi-lo)/2
		m, err := st.GetMsg(ctx, mid, jsapi.WithGetMsgSubject(topicSubjects(strings.TrimPrefix(st.CachedInfo().Config.Name, "MQ_"))))
		if err != nil {
			return end
		}
		if m.Time.Before(ts) {
			lo = m.Sequence + 1
		} else {
			hi = mid
		}
	}
	return lo
}
