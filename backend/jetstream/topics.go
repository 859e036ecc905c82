package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// A topic is a stream MQ_<topic> over mq.<topic>.>: queue q is the subject
// mq.<topic>.<q>, so one sharding key stays on one subject, in order. Its
// queue count and retention live in the stream's metadata.

const (
	metaQueues    = "mqgate.queues"
	metaRetention = "mqgate.retention_hours"
	// dedupWindow is the duplicate window of the DLQ streams (their
	// copies are named by delivery, so two instances racing to
	// dead-letter one delivery store one copy).
	dedupWindow = 2 * time.Minute
)

// topicCache keeps topic metadata for publishes; a change made through
// another instance is seen within topicTTL.
type topicCache struct {
	mu sync.Mutex
	m  map[string]cachedTopic
}

type cachedTopic struct {
	t      core.Topic
	fences []fence // growth fences (fence.go)
	// lastSeq is the stream's last sequence when it was read: a growth
	// after the read has a fence past it, so only a message stored
	// after lastSeq can be behind a fence this view lacks (fenced).
	lastSeq uint64
	at      time.Time
}

const topicTTL = time.Second

func (b *Backend) streamConfig(cfg core.TopicConfig) jsapi.StreamConfig {
	maxAge := time.Duration(cfg.RetentionHours) * time.Hour
	return jsapi.StreamConfig{
		Name:      topicStream(cfg.Name),
		Subjects:  []string{topicSubjects(cfg.Name), indexSubjects(cfg.Name)},
		Retention: jsapi.LimitsPolicy,
		MaxAge:    maxAge,
		Storage:   jsapi.FileStorage,
		Replicas:  b.opts.Replicas,
		// Idempotency keys (dedup.go): JetStream refuses a batch holding
		// a dedup entry already stored within this window.
		Duplicates:         min(b.opts.DedupWindow, maxAge),
		AllowMsgSchedules:  true,
		AllowAtomicPublish: true,
		AllowDirect:        true,
		Metadata: map[string]string{
			metaQueues:    strconv.Itoa(cfg.Queues),
			metaRetention: strconv.Itoa(cfg.RetentionHours),
		},
	}
}

// PutTopic implements core.TopicService.
func (b *Backend) PutTopic(cfg core.TopicConfig) (core.Topic, bool, error) {
	if err := userTopic(cfg.Name); err != nil {
		return core.Topic{}, false, err
	}
	if cfg.Queues == 0 {
		cfg.Queues = core.DefaultQueues
	}
	if cfg.Queues < 1 || cfg.Queues > core.MaxQueues {
		return core.Topic{}, false, core.FieldError("queues", "must be between 1 and %d", core.MaxQueues)
	}
	if cfg.RetentionHours == 0 {
		cfg.RetentionHours = core.DefaultRetentionHours
	}
	if cfg.RetentionHours < 0 {
		return core.Topic{}, false, core.FieldError("retentionHours", "must be positive")
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	created := false
	s, err := b.js.CreateStream(ctx, b.streamConfig(cfg))
	switch {
	case err == nil:
		created = true
	case errors.Is(err, jsapi.ErrStreamNameAlreadyInUse):
		old, err := b.Topic(cfg.Name)
		if err != nil {
			return core.Topic{}, false, err
		}
		if cfg.Queues < old.Queues {
			return core.Topic{}, false, core.FieldError("queues", "cannot shrink a topic from %d to %d queues", old.Queues, cfg.Queues)
		}
		sc := b.streamConfig(cfg)
		cur, err := b.stream(ctx, topicStream(cfg.Name))
		if err != nil {
			return core.Topic{}, false, mapErr(err)
		}
		// Fences are kept, and a growth adds one (fence.go).
		withFences(&sc, cur.CachedInfo(), old.Queues, cfg.Queues)
		if s, err = b.js.UpdateStream(ctx, sc); err != nil {
			return core.Topic{}, false, mapErr(err)
		}
	default:
		return core.Topic{}, false, mapErr(err)
	}
	b.forgetTopic(cfg.Name)
	t := topicOf(cfg.Name, s.CachedInfo())
	return t, created, nil
}

func topicOf(name string, si *jsapi.StreamInfo) core.Topic {
	q, _ := strconv.Atoi(si.Config.Metadata[metaQueues])
	r, _ := strconv.Atoi(si.Config.Metadata[metaRetention])
	return core.Topic{
		TopicConfig: core.TopicConfig{Name: name, Queues: max(q, 1), RetentionHours: r},
		CreatedAt:   si.Created.UTC(),
		UID:         uint64(si.Created.UnixNano()),
	}
}

// Topic implements core.TopicService.
func (b *Backend) Topic(name string) (core.Topic, error) {
	c, err := b.topicInfo(name)
	return c.t, err
}

// topicInfo is Topic with its growth fences and the stream's last
// sequence, read now.
func (b *Backend) topicInfo(name string) (cachedTopic, error) {
	if core.IsSystemTopic(name) || !core.ValidName(name) {
		return cachedTopic{}, core.Errorf(core.ENotFound, "topic %q not found", name)
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	s, err := b.stream(ctx, topicStream(name))
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		return cachedTopic{}, core.Errorf(core.ENotFound, "topic %q not found", name)
	} else if err != nil {
		return cachedTopic{}, mapErr(err)
	}
	si := s.CachedInfo()
	return cachedTopic{t: topicOf(name, si), fences: parseFences(si.Config.Metadata), lastSeq: si.State.LastSeq, at: time.Now()}, nil
}

// cachedTopic is Topic through a short cache (the publish path).
func (b *Backend) cachedTopic(name string) (core.Topic, error) {
	c, err := b.cachedTopicInfo(name)
	return c.t, err
}

// topicFences are the cached topic's growth fences (none when it is gone).
func (b *Backend) topicFences(name string) []fence {
	c, _ := b.cachedTopicInfo(name)
	return c.fences
}

func (b *Backend) cachedTopicInfo(name string) (cachedTopic, error) {
	b.topics.mu.Lock()
	c, ok := b.topics.m[name]
	b.topics.mu.Unlock()
	if ok && time.Since(c.at) < topicTTL {
		return c, nil
	}
	return b.loadTopic(name)
}

// loadTopic reads a topic into the cache, whatever its age there.
func (b *Backend) loadTopic(name string) (cachedTopic, error) {
	c, err := b.topicInfo(name)
	if err != nil {
		return c, err
	}
	if err := b.ensureIndexSubjects(c.t); err != nil {
		return cachedTopic{t: c.t}, err
	}
	b.topics.mu.Lock()
	if b.topics.m == nil {
		b.topics.m = map[string]cachedTopic{}
	}
	b.topics.m[name] = c
	b.topics.mu.Unlock()
	return c, nil
}

// ensureIndexSubjects adds indexSubjects to the stream of a topic created
// before them (once per topic incarnation per instance): publishes store
// their index entries there.
func (b *Backend) ensureIndexSubjects(t core.Topic) error {
	key := fmt.Sprintf("%s/%d", t.Name, t.UID)
	if _, ok := b.indexReady.Load(key); ok {
		return nil
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	s, err := b.stream(ctx, topicStream(t.Name))
	if err != nil {
		return mapErr(err)
	}
	cfg := s.CachedInfo().Config
	if !slices.Contains(cfg.Subjects, indexSubjects(t.Name)) {
		cfg.Subjects = append(cfg.Subjects, indexSubjects(t.Name))
		if _, err := b.js.UpdateStream(ctx, cfg); err != nil {
			return mapErr(err)
		}
		b.log.Info().Str("topic", t.Name).Msg("topic stream: index entries now go under " + indexSubjects(t.Name))
	}
	b.indexReady.Store(key, true)
	return nil
}

func (b *Backend) forgetTopic(name string) {
	b.topics.mu.Lock()
	delete(b.topics.m, name)
	b.topics.mu.Unlock()
}

// Topics implements core.TopicService.
func (b *Backend) Topics() ([]core.Topic, error) {
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	var out []core.Topic
	l := b.js.ListStreams(ctx, jsapi.WithStreamListSubject("mq.>"))
	for si := range l.Info() {
		name, ok := strings.CutPrefix(si.Config.Name, "MQ_")
		if !ok || !core.ValidName(name) {
			continue
		}
		out = append(out, topicOf(name, si))
	}
	if err := l.Err(); err != nil {
		return nil, mapErr(err)
	}
	slices.SortFunc(out, func(a, b core.Topic) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteTopic implements core.TopicService.
func (b *Backend) DeleteTopic(name string) error {
	if err := userTopic(name); err != nil {
		return err
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	b.forgetTopic(name)
	if err := b.js.DeleteStream(ctx, topicStream(name)); errors.Is(err, jsapi.ErrStreamNotFound) {
		return core.Errorf(core.ENotFound, "topic %q not found", name)
	} else if err != nil {
		return mapErr(err)
	}
	return nil
}

// TopicStats implements core.TopicService. Offsets are stream sequences, shared
// by the topic's queues: a queue's MinOffset is 0 and MaxOffset the number
// of messages on its subject.
func (b *Backend) TopicStats(name string) (core.TopicStats, error) {
	t, err := b.Topic(name)
	if err != nil {
		return core.TopicStats{}, err
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	s, err := b.stream(ctx, topicStream(name))
	if err != nil {
		return core.TopicStats{}, mapErr(err)
	}
	si, err := s.Info(ctx, jsapi.WithSubjectFilter(queueWildcard(name)))
	if err != nil {
		return core.TopicStats{}, mapErr(err)
	}
	var st core.TopicStats
	for q := 0; q < t.Queues; q++ {
		n := int64(si.State.Subjects[queueSubject(name, q)])
		st.Queues = append(st.Queues, core.QueueStats{QueueID: q, MaxOffset: n})
		st.Messages += n
	}
	return st, nil
}

// CorruptMessages implements core.TopicService: JetStream checks its own
// checksums and never hands out a corrupt message, so there is nothing
// set aside to list.
func (b *Backend) CorruptMessages(topic string) ([]core.CorruptMessage, error) {
	if _, err := b.Topic(topic); err != nil {
		return nil, err
	}
	return nil, nil
}
