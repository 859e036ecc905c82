package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
	"github.com/mqgate/mqgate/gateway"
	"github.com/mqgate/mqgate/gateway/webhook"
	"github.com/mqgate/mqgate/gateway/wire"
)

// Push (webhook) groups: every instance runs, per push group, up to
// push.maxInFlight workers that receive from the group's consumers (the
// same pull path as HTTP receives), POST the messages signed the Standard
// Webhooks way, and ack on 2xx or nack otherwise (a Retry-After of d picks
// the first delay level ≥ d). The consumer is shared by all instances, so
// each message is delivered once overall however many instances run; an
// instance that dies mid-POST leaves the lease to expire and JetStream
// redelivers it to any instance. Instances follow group changes through a
// watch on MQGATE_GROUPS.

// PushOptions configure the push runner.
type PushOptions struct {
	// AllowLoopback lets webhooks reach loopback addresses (tests).
	// Loopback, link-local and unspecified addresses are refused
	// otherwise.
	AllowLoopback bool
	// PollWait is how long one worker's receive waits (default 5 s).
	PollWait time.Duration
}

type pushRun struct {
	cfg    core.GroupConfig
	cancel context.CancelFunc
	done   chan struct{}
}

// StartPush starts following push groups; Close stops it.
func (b *Backend) StartPush(o PushOptions) error {
	if o.PollWait <= 0 {
		o.PollWait = 5 * time.Second
	}
	w, err := b.groups.WatchAll(context.Background())
	if err != nil {
		return mapErr(err)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer w.Stop()
		runs := map[string]*pushRun{}
		defer func() {
			for _, r := range runs {
				r.cancel()
				<-r.done
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
		r.cancel()
		<-r.done
		delete(runs, name)
	}
	if !live {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &pushRun{cfg: g.GroupConfig, cancel: cancel, done: make(chan struct{})}
	runs[name] = r
	go func() {
		defer close(r.done)
		b.runPush(ctx, g, o)
	}()
}

func equalPush(a, c core.GroupConfig) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(c)
	return bytes.Equal(x, y)
}

// runPush runs a push group's workers until ctx ends.
func (b *Backend) runPush(ctx context.Context, g core.Group, o PushOptions) {
	key, err := webhook.DecodeSecret(g.Push.Secret)
	if err != nil {
		b.log.Error().Err(err).Str("group", g.Name).Msg("push group: bad secret")
		return
	}
	timeout := time.Duration(max(g.Push.TimeoutSeconds, 1)) * time.Second
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext:         guardedDialer(o.AllowLoopback).DialContext,
		MaxIdleConnsPerHost: max(g.Push.MaxInFlight, 1),
	}}
	defer client.CloseIdleConnections()
	workers := min(max(g.Push.MaxInFlight, 1), 64)
	batch := min(max(g.Push.BatchSize, 1), gateway.MaxReceiveMessages)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				got, err := b.receive(ctx, g, gateway.ReceiveRequest{
					MaxMessages: batch, Wait: o.PollWait, Invisible: timeout + 5*time.Second,
				})
				if err != nil {
					select {
					case <-ctx.Done():
					case <-time.After(time.Second): // the cluster is unreachable: back off
					}
					continue
				}
				if len(got) > 0 {
					b.deliverPush(ctx, client, g, key, got)
				}
			}
		}()
	}
	wg.Wait()
}

// deliverPush POSTs one batch and settles it by the answer.
func (b *Backend) deliverPush(ctx context.Context, client *http.Client, g core.Group, key []byte, got []gateway.Received) {
	msgs := struct {
		Messages []wire.Message `json:"messages"`
	}{}
	handles := make([]string, len(got))
	for i, r := range got {
		msgs.Messages = append(msgs.Messages, wire.NewMessage(r.Message))
		handles[i] = r.ReceiptHandle
	}
	body, _ := json.Marshal(msgs)
	id := "msg_" + got[0].Message.UserID()
	if len(got) > 1 {
		id = fmt.Sprintf("batch_%s_%d", got[0].Message.UserID(), len(got))
	}
	ts := time.Now().Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.Push.URL, bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set(webhook.HeaderID, id)
	req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(key, id, ts, body))
	resp, err := client.Do(req)
	sctx, cancel := context.WithTimeout(context.Background(), b.opts.RequestTimeout)
	defer cancel()
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			if _, err := b.Ack(sctx, g.Name, handles); err != nil {
				b.log.Warn().Err(err).Str("group", g.Name).Msg("push: ack failed; redelivered after the lease")
			}
			return
		}
	}
	if ctx.Err() != nil {
		return // stopping: the leases expire and JetStream redelivers
	}
	level := 0
	if resp != nil {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			level = policy.LevelAtLeast(b.opts.DelayLevels, time.Duration(s)*time.Second)
		}
	}
	if _, err := b.Nack(sctx, g.Name, handles, level); err != nil {
		b.log.Warn().Err(err).Str("group", g.Name).Msg("push: nack failed; redelivered after the lease")
	}
}

// guardedDialer refuses loopback (unless allowed), link-local and
// unspecified addresses, checked on the resolved address at connect time.
func guardedDialer(allowLoopback bool) *net.Dialer {
	return &net.Dialer{Timeout: 10 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsMulticast() ||
			(ip.IsLoopback() && !allowLoopback) {
			return fmt.Errorf("webhook: address %s is not allowed", host)
		}
		return nil
	}}
}
