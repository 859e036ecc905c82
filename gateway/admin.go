package gateway

import (
	"context"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/groups"
)

// Registry is what Admin needs of *groups.Registry.
type Registry interface {
	GroupSource
	Put(cfg core.GroupConfig) (core.Group, bool, error)
	Delete(name string) error
	// SetPaused pauses or resumes a group (core.Group.Paused).
	SetPaused(name string, paused bool) (core.Group, error)
	Progress(group, consumerID string) (map[core.MessageQueue]core.Progress, error)
	ResetOffsets(eng groups.OffsetSearcher, group, consumerID, topic string, position core.ConsumeFromWhere, ts time.Time) (map[core.MessageQueue]int64, error)
}

// Queues is what Admin needs of the engine (*engine.Engine).
type Queues interface {
	groups.OffsetSearcher
	// DeleteSystemTopic removes %RETRY%g / %DLQ%g; an absent one is not
	// an error. (The user-facing DeleteTopic refuses system topics.)
	DeleteSystemTopic(name string) error
}

// Admin implements core.GroupService over the embedded registry and engine; Service
// supplies what is in flight.
type Admin struct {
	Registry Registry
	Engine   Queues
	Service  core.ConsumeService
	// CheckPushURL, when set, refuses a push.url that webhook delivery
	// could never reach (webhook.URLChecker: the network guard), so the
	// PUT answers 400 instead of the group failing at every delivery.
	CheckPushURL func(ctx context.Context, url string) error
}

var _ core.GroupService = (*Admin)(nil)

// PutGroup implements core.GroupService. The gateway follows the change through the
// registry's watch (no restart).
func (a *Admin) PutGroup(ctx context.Context, cfg core.GroupConfig) (core.Group, bool, error) {
	if cfg.Push != nil && a.CheckPushURL != nil {
		if err := a.CheckPushURL(ctx, cfg.Push.URL); err != nil {
			return core.Group{}, false, err
		}
	}
	return a.Registry.Put(cfg)
}

// PauseGroup pauses (paused true) or resumes a group and answers once
// the gateway applied it (pause.go): a receive or push after the answer
// sees the new state. Pausing a paused group changes nothing.
func (a *Admin) PauseGroup(ctx context.Context, name string, paused bool) (core.Group, error) {
	g, err := a.Registry.SetPaused(name, paused)
	if err != nil {
		return core.Group{}, err
	}
	if s, ok := a.Service.(interface {
		SyncGroup(ctx context.Context, group string) error
	}); ok {
		if err := s.SyncGroup(ctx, name); err != nil {
			return core.Group{}, err
		}
	}
	return g, nil
}

// Group implements core.GroupService.
func (a *Admin) Group(ctx context.Context, name string) (core.Group, error) {
	return a.Registry.Get(name)
}

// GroupList implements core.GroupService.
func (a *Admin) GroupList(ctx context.Context) ([]core.Group, error) { return a.Registry.List() }

// DeleteGroup implements core.GroupService: the group, its offsets, and its retry and
// dead-letter topics.
func (a *Admin) DeleteGroup(ctx context.Context, name string) error {
	if err := a.Registry.Delete(name); err != nil {
		return err
	}
	for _, t := range []string{core.RetryTopic(name), core.DLQTopic(name)} {
		if err := a.Engine.DeleteSystemTopic(t); err != nil {
			return err
		}
	}
	return nil
}

// groupConsumer loads group and says whose offsets a request means: a
// BROADCASTING group keeps offsets per consumer (where RocketMQ's
// LocalFileOffsetStore keeps them on each client), so consumerID is
// required there; a CLUSTERING group's belong to the group
// (RemoteBrokerOffsetStore), so it is ignored.
func (a *Admin) groupConsumer(group, consumerID string) (core.Group, string, error) {
	g, err := a.Registry.Get(group)
	if err != nil {
		return core.Group{}, "", err
	}
	if g.MessageModel != core.Broadcasting {
		return g, "", nil
	}
	if consumerID == "" {
		return core.Group{}, "", core.FieldError("consumerId", "is required for a BROADCASTING group")
	}
	return g, consumerID, nil
}

// Offsets implements core.GroupService.
func (a *Admin) Offsets(ctx context.Context, group, consumerID string) ([]core.QueueOffset, error) {
	g, consumerID, err := a.groupConsumer(group, consumerID)
	if err != nil {
		return nil, err
	}
	committed, err := a.Registry.Progress(group, consumerID)
	if err != nil {
		return nil, err
	}
	live := a.live(ctx, group, consumerID)
	topics := make([]string, 0, len(g.Subscriptions)+1)
	for _, s := range g.Subscriptions {
		topics = append(topics, s.Topic)
	}
	if g.MessageModel != core.Broadcasting {
		topics = append(topics, core.RetryTopic(group))
	}
	var out []core.QueueOffset
	for _, name := range topics {
		t, err := a.Engine.Topic(name)
		if core.ErrorCode(err) == core.ENotFound {
			continue // deleted, or a retry topic not yet needed
		} else if err != nil {
			return nil, err
		}
		for id := 0; id < t.Queues; id++ {
			mq := core.MessageQueue{Topic: name, QueueID: id}
			p, ok := committed[mq]
			if ok && p.TopicUID != 0 && t.UID != 0 && p.TopicUID != t.UID {
				ok = false // a position in a deleted namesake of the topic
			}
			qo, err := a.queueOffset(mq, p, ok, live)
			if err != nil {
				return nil, err
			}
			out = append(out, qo)
		}
	}
	return out, nil
}

// queueOffset is one queue's row: the committed offset (a queue without
// one is consumed from its first offset), the lag — messages at or above
// it not yet finished, so acknowledgements above the committed offset
// count — and what the live client holds.
func (a *Admin) queueOffset(mq core.MessageQueue, p core.Progress, ok bool, live map[core.MessageQueue]core.QueueStatus) (core.QueueOffset, error) {
	lo, hi, err := a.Engine.QueueOffsets(mq)
	if err != nil {
		return core.QueueOffset{}, err
	}
	c := p.Offset
	if !ok || c < lo {
		c = lo
	}
	lag := max(hi-c, 0)
	if ok {
		for _, r := range p.Done {
			if from, to := max(r.From, c), min(r.To, hi); to > from {
				lag -= to - from
			}
		}
	}
	st := live[mq]
	return core.QueueOffset{Queue: mq, Committed: c, Max: hi, Lag: lag, InFlight: st.InFlight, Buffered: st.Buffered}, nil
}

// live is what the client of (group, consumerID) holds, by queue.
func (a *Admin) live(ctx context.Context, group, consumerID string) map[core.MessageQueue]core.QueueStatus {
	out := map[core.MessageQueue]core.QueueStatus{}
	if a.Service == nil {
		return out
	}
	st, err := a.Service.GroupStatus(ctx, group)
	if err != nil {
		return out
	}
	for _, c := range st.Clients {
		if consumerID != "" && c.ClientID != consumerID {
			continue
		}
		for _, q := range c.Queues {
			out[q.Queue] = q
		}
	}
	return out
}

// ResetOffsets implements core.GroupService.
func (a *Admin) ResetOffsets(ctx context.Context, group, consumerID, topic string, position core.ConsumeFromWhere, ts time.Time) ([]core.QueueOffset, error) {
	g, consumerID, err := a.groupConsumer(group, consumerID)
	if err != nil {
		return nil, err
	}
	subscribed := topic == core.RetryTopic(group)
	for _, s := range g.Subscriptions {
		subscribed = subscribed || s.Topic == topic
	}
	if !subscribed {
		return nil, core.FieldError("topic", "group %q does not subscribe to %q", group, topic)
	}
	set, err := a.Registry.ResetOffsets(a.Engine, group, consumerID, topic, position, ts)
	if err != nil {
		return nil, err
	}
	if e, ok := a.Service.(*Embedded); ok {
		// Answer once this gateway's client dropped the old ProcessQueues:
		// a receive after the answer gets none of their messages.
		e.awaitRebalance(ctx, group, consumerID)
	}
	out := make([]core.QueueOffset, 0, len(set))
	for id := 0; id < len(set); id++ {
		mq := core.MessageQueue{Topic: topic, QueueID: id}
		qo, err := a.queueOffset(mq, core.Progress{Offset: set[mq]}, true, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, qo)
	}
	return out, nil
}
