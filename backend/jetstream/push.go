package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// Push (webhook) groups: every instance runs, per push group, the same
// webhook.Pusher as the embedded gateway (Standard Webhooks signing, the
// network guard with --webhook-allow-loopback / --webhook-allow-cidr /
// --webhook-deny-cidr, Retry-After pauses, the mqgate_webhook_* metrics,
// the push state in group status), fed by up to push.maxInFlight feeders
// that receive from the group's consumers (the same pull path as HTTP
// receives). The pusher acks on 2xx and nacks otherwise through this
// backend's Ack / Nack (policy.Retry: delay levels, DLQ). The consumers
// are shared by all instances, so each message is delivered once overall
// however many instances run; maxInFlight bounds the group as a whole
// (the shared consumer's MaxAckPending is maxInFlight × batchSize, which
// JetStream enforces across instances); an instance that dies mid-POST leaves the lease to expire and
// JetStream redelivers it to any instance. Instances follow group changes
// through a watch on MQGATE_GROUPS.

// PushOptions configure the push runner.
type PushOptions struct {
	// Webhook are the gateway-wide webhook settings, the embedded
	// gateway's: network guard (AllowLoopback, AllowCIDRs, DenyCIDRs),
	// Registerer for the metrics, Logger. DelayLevelFor defaults to
	// policy.LevelAtLeast over the backend's delay levels.
	Webhook webhook.Options
	// PollWait is how long one feeder's receive waits (default 5 s).
	PollWait time.Duration
}

type pushRun struct {
	cfg    core.GroupConfig
	pusher *webhook.Pusher
	cancel context.CancelFunc
	done   chan struct{}
}

// StartPush starts following push groups; Close stops it. It also makes
// PutGroup refuse a push.url the guard would never let through (400), as
// the embedded gateway does.
func (b *Backend) StartPush(o PushOptions) error {
	if o.PollWait <= 0 {
		o.PollWait = 5 * time.Second
	}
	if o.Webhook.DelayLevelFor == nil {
		o.Webhook.DelayLevelFor = webhook.LevelAtLeast(b.opts.DelayLevels)
	}
	check, err := webhook.URLChecker(o.Webhook)
	if err != nil {
		return err
	}
	w, err := b.groups.WatchAll(context.Background())
	if err != nil {
		return mapErr(err)
	}
	b.mu.Lock()
	b.checkPushURL = check
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer w.Stop()
		runs := map[string]*pushRun{}
		defer func() {
			for name, r := range runs {
				b.stopPush(name, r)
			}
		}()
		for {
			select {
			case <-b.stop:
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil {
					continue // end of the initial values
				}
				b.pushUpdate(runs, e, o)
			}
		}
	}()
	return nil
}

func (b *Backend) pushUpdate(runs map[string]*pushRun, e jsapi.KeyValueEntry, o PushOptions) {
	name := e.Key()
	var g core.Group
	live := e.Operation() == jsapi.KeyValuePut && json.Unmarshal(e.Value(), &g) == nil && g.Push != nil
	if r := runs[name]; r != nil {
		if live && equalPush(r.cfg, g.GroupConfig) {
			return
		}
		b.stopPush(name, r)
		delete(runs, name)
	}
	if !live {
		return
	}
	p, err := webhook.New(name, *g.Push, o.Webhook)
	if err != nil {
		b.log.Error().Err(err).Str("group", name).Msg("push group: cannot start its webhook pusher")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &pushRun{cfg: g.GroupConfig, pusher: p, cancel: cancel, done: make(chan struct{})}
	runs[name] = r
	b.mu.Lock()
	b.pushers[name] = p
	b.mu.Unlock()
	go func() {
		defer close(r.done)
		b.feedPush(ctx, g, p, o)
	}()
}

// stopPush stops a group's feeders, then its pusher: requests in flight
// finish and are answered by their outcome; what the pusher still queued
// is left to its leases (see feedPush).
func (b *Backend) stopPush(name string, r *pushRun) {
	r.cancel()
	<-r.done
	b.mu.Lock()
	if b.pushers[name] == r.pusher {
		delete(b.pushers, name)
	}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.RequestTimeout+time.Duration(max(r.cfg.Push.TimeoutSeconds, 1))*time.Second)
	defer cancel()
	_ = r.pusher.Close(ctx)
}

func equalPush(a, c core.GroupConfig) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(c)
	return bytes.Equal(x, y)
}

// feedPush runs a push group's feeders until ctx ends. Each feeder
// receives one batch (push.batchSize) leased for the webhook timeout plus
// a margin, hands it to the pusher as one Delivery and waits until the
// pusher answered all of it, so at most maxInFlight batches are out per
// instance. Answers after ctx ended are applied only when they are acks:
// a nack then (the pusher closing) is left to the lease, which redelivers
// without counting a failure, as the embedded gateway redelivers from the
// committed offset.
func (b *Backend) feedPush(ctx context.Context, g core.Group, p *webhook.Pusher, o PushOptions) {
	timeout := time.Duration(max(g.Push.TimeoutSeconds, 1)) * time.Second
	feeders := min(max(g.Push.MaxInFlight, 1), 64)
	batch := min(max(g.Push.BatchSize, 1), gateway.MaxReceiveMessages)
	orderly := g.ConsumeMode == core.Orderly
	var wg sync.WaitGroup
	for i := 0; i < feeders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			backoff := time.NewTimer(0)
			<-backoff.C
			defer backoff.Stop()
			for ctx.Err() == nil {
				got, err := b.receive(ctx, g, core.ReceiveRequest{
					MaxMessages: batch, Wait: o.PollWait, Invisible: timeout + 5*time.Second,
				})
				if err != nil {
					backoff.Reset(time.Second) // the cluster is unreachable: back off
					select {
					case <-ctx.Done():
					case <-backoff.C:
					}
					continue
				}
				if len(got) == 0 {
					continue
				}
				done := b.pushDelivery(ctx, g.Name, orderly, got, p)
				select {
				case <-done:
				case <-ctx.Done():
				}
			}
		}()
	}
	wg.Wait()
}

// pushDelivery hands got to the pusher as one delivery (Deliver); the channel
// closes once every message is answered and settled.
func (b *Backend) pushDelivery(ctx context.Context, group string, orderly bool, got []core.Received, p *webhook.Pusher) <-chan struct{} {
	msgs := make([]*core.Message, len(got))
	for i, r := range got {
		msgs[i] = r.Message
	}
	type answer struct {
		ok     bool
		level  int
		reason string // the webhook's failure (core.PropLastReason)
	}
	var (
		mu      sync.Mutex
		answers = make([]*answer, len(got))
		left    atomic.Int32
		done    = make(chan struct{})
	)
	left.Store(int32(len(got)))
	mq := core.MessageQueue{Topic: msgs[0].UserTopic()}
	p.Deliver(group, mq, orderly, msgs, func(i int, ok bool, level int, reason string) {
		mu.Lock()
		if i < 0 || i >= len(answers) || answers[i] != nil {
			mu.Unlock()
			return
		}
		answers[i] = &answer{ok, level, reason}
		mu.Unlock()
		if left.Add(-1) != 0 {
			return
		}
		// Every message answered: settle in one ack and one nack per
		// level and reason.
		type nackKey struct {
			level  int
			reason string
		}
		var acks []string
		nacks := map[nackKey][]string{}
		for i, a := range answers {
			if a.ok {
				acks = append(acks, got[i].ReceiptHandle)
			} else if ctx.Err() == nil {
				k := nackKey{a.level, core.ClipReason(a.reason)}
				nacks[k] = append(nacks[k], got[i].ReceiptHandle)
			}
		}
		sctx, cancel := context.WithTimeout(context.Background(), b.opts.RequestTimeout)
		defer cancel()
		if len(acks) > 0 {
			if _, err := b.Ack(sctx, group, acks); err != nil {
				b.log.Warn().Err(err).Str("group", group).Msg("push: ack failed; redelivered after the lease")
			}
		}
		for k, hs := range nacks {
			if _, err := b.Nack(sctx, group, hs, k.level, k.reason); err != nil {
				b.log.Warn().Err(err).Str("group", group).Msg("push: nack failed; redelivered after the lease")
			}
		}
		close(done)
	})
	return done
}

// pushStatus is this instance's webhook state of group (nil when it runs
// no pusher for it).
func (b *Backend) pushStatus(group string) *core.PushStatus {
	b.mu.Lock()
	p := b.pushers[group]
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	s := p.Status()
	return &s
}
