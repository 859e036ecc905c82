package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// The stream side of the streams mode, on the Go stream client
// (apiclient/stream): what a Go user of the streams would write.

func (c streamsConfig) client() *stream.Client {
	return &stream.Client{BaseURL: c.URL, Key: c.Key, HTTPClient: newClient(c.Producers+c.Consumers, c.Timeout)}
}

// firstErr keeps the first error of a case's goroutines.
type firstErr struct {
	mu  sync.Mutex
	n   int64
	msg string
}

func (f *firstErr) count() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *firstErr) add(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.msg == "" {
		f.msg = err.Error()
	}
}

// streamPublishCase: --producers publish streams, each with --window
// messages in flight (by default as many as the stream's limit lets the
// client send) and a confirm per message, until --count are stored (a
// publish that failed is not retried, so a failing run stores fewer).
func streamPublishCase(ctx context.Context, c streamsConfig, topic string) (StreamCase, error) {
	hc := newClient(1, c.Timeout)
	defer closeClient(hc)
	if err := ensureTopic(ctx, hc, c.URL, topic, c.Queues); err != nil {
		return StreamCase{}, fmt.Errorf("create topic: %w", err)
	}
	cl := c.client()
	defer closeClient(cl.HTTPClient)
	pubs := make([]*stream.Publisher, c.Producers)
	defer func() {
		for _, p := range pubs {
			if p != nil {
				p.Close()
			}
		}
	}()
	for i := range pubs {
		p, err := cl.PublishStream(ctx, topic, stream.PublishOptions{})
		if err != nil {
			return StreamCase{}, fmt.Errorf("open publish stream: %w", err)
		}
		pubs[i] = p
	}
	body := *randomMessage(rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2)), c.Size, false).Body
	var next, done atomic.Int64
	var fe firstErr
	lats := make([][]time.Duration, len(pubs))
	ends := make([]time.Time, len(pubs))
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex // guards lats and ends: each producer's confirms are collected by several goroutines
	for i, p := range pubs {
		wg.Go(func() {
			// Each publish in flight has its own confirm, taken by a
			// callback on the stream's reader (PublishAsync), so thousands
			// in flight cost no goroutine each. Publish waits while the
			// stream is at its limit; with --window a slot is also taken
			// per publish and given back when its confirm (or error) is in.
			slots := newSlots(c.Window)
			var inflight sync.WaitGroup
			defer inflight.Wait()
			for ctx.Err() == nil && next.Add(1) <= int64(c.Count) {
				if !slots.take(ctx) {
					return
				}
				t0 := time.Now()
				inflight.Add(1)
				err := p.PublishAsync(ctx, apiclient.PublishRequest{Body: &body}, func(_ apiclient.PublishResult, err error) {
					defer inflight.Done()
					defer slots.give()
					if err != nil {
						if ctx.Err() == nil {
							fe.add(err)
						}
						return
					}
					now := time.Now()
					mu.Lock()
					ends[i] = now
					lats[i] = append(lats[i], now.Sub(t0))
					mu.Unlock()
					done.Add(1)
				})
				if err != nil {
					inflight.Done()
					slots.give()
					if ctx.Err() == nil {
						fe.add(err)
					}
					if fe.count() > 1000 || p.Err() != nil {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	end := start
	var lat []time.Duration
	for i := range pubs {
		lat = append(lat, lats[i]...)
		if ends[i].After(end) {
			end = ends[i]
		}
	}
	el := end.Sub(start)
	sc := StreamCase{Messages: done.Load(), MsgsPerSec: rate(float64(done.Load()), el), Latency: summarize(lat),
		Errors: fe.n, FirstError: fe.msg, ElapsedSec: el.Seconds()}
	if done.Load() < int64(c.Count) {
		return sc, fmt.Errorf("%d of %d published (%s)", done.Load(), c.Count, fe.msg)
	}
	return sc, nil
}

// slots bounds the publishes a producer has in flight; nil has no bound
// of its own.
type slots chan struct{}

func newSlots(n int) slots {
	if n <= 0 {
		return nil
	}
	return make(slots, n)
}

// take waits for a slot; false when ctx ended first.
func (s slots) take(ctx context.Context) bool {
	if s == nil {
		return ctx.Err() == nil
	}
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s slots) give() {
	if s != nil {
		<-s
	}
}

// streamConsumeCase: --consumers consume streams on a new group of topic
// (which holds --count messages), one ack frame per message. Acks are
// pipelined, as AMQP's basic.ack per message is: the loop sends the ack
// and takes the next delivery; the ack's callback takes its result, and a
// message counts once its ack is answered ok.
func streamConsumeCase(ctx context.Context, c streamsConfig, topic, group string, framePerAck bool) (StreamCase, error) {
	hc := newClient(1, c.Timeout)
	defer closeClient(hc)
	if err := ensureGroup(ctx, hc, c.URL, group, topic); err != nil {
		return StreamCase{}, err
	}
	defer deleteGroup(hc, c.URL, group)
	cl := c.client()
	defer closeClient(cl.HTTPClient)
	cons := make([]*stream.Consumer, c.Consumers)
	defer func() {
		for _, s := range cons {
			if s != nil {
				s.Close()
			}
		}
	}()
	tr := newConsumeTracker(c.Count)
	var fe firstErr
	var deliveries atomic.Int64
	lats := make([][]time.Duration, len(cons))
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cons {
		s, err := cl.Consume(ctx, group, stream.ConsumeOptions{MaxOutstandingMessages: c.MaxOutstanding, OneFramePerAck: framePerAck})
		if err != nil {
			stop()
			wg.Wait()
			return StreamCase{}, fmt.Errorf("open consume stream: %w", err)
		}
		cons[i] = s
		// Each ack's result is taken by a callback on the stream's reader
		// (AckFunc), as a worker acking each message as it finishes would.
		var acks sync.WaitGroup
		wg.Go(func() {
			defer acks.Wait()
			for {
				m, err := s.Receive(rctx)
				if err != nil {
					if rctx.Err() == nil {
						fe.add(err)
					}
					return
				}
				deliveries.Add(1)
				e := tr.delivered(m.MessageId)
				sent := time.Now()
				acks.Add(1)
				s.AckFunc(func(rs []apiclient.HandleResult, err error) {
					defer acks.Done()
					switch {
					case err != nil:
						if rctx.Err() == nil {
							fe.add(err)
						}
					case len(rs) == 1 && rs[0].Status == "ok":
						lats[i] = append(lats[i], time.Since(sent))
						tr.ackedEntry(e)
					default:
						fe.add(fmt.Errorf("ack: %+v", rs))
					}
				}, m.ReceiptHandle)
			}
		})
	}
	var timeoutErr error
	select {
	case <-tr.done:
	case <-ctx.Done():
		timeoutErr = ctx.Err()
	}
	stop()
	wg.Wait()
	tr.mu.Lock()
	end := tr.doneAt
	if end.IsZero() {
		end = time.Now()
	}
	acked, unique := int64(tr.acked), int64(len(tr.seen))
	tr.mu.Unlock()
	var lat []time.Duration
	for _, l := range lats {
		lat = append(lat, l...)
	}
	el := end.Sub(start)
	sc := StreamCase{Messages: acked, MsgsPerSec: rate(float64(acked), el), Latency: summarize(lat),
		Missing: int64(c.Count) - acked, Duplicates: deliveries.Load() - unique, Errors: fe.n, FirstError: fe.msg, ElapsedSec: el.Seconds()}
	if timeoutErr != nil {
		return sc, fmt.Errorf("%d of %d acked: %w", acked, c.Count, timeoutErr)
	}
	return sc, nil
}

// streamLatencyCase: the latency mode's paced publisher (pacer.go)
// publishing over streams, and --consumers consume streams acking each
// delivery; latency is from just before the publish to the delivery.
func streamLatencyCase(ctx context.Context, c streamsConfig, topic string) (StreamCase, error) {
	hc := newClient(1, c.Timeout)
	defer closeClient(hc)
	if err := ensureTopic(ctx, hc, c.URL, topic, c.Queues); err != nil {
		return StreamCase{}, fmt.Errorf("create topic: %w", err)
	}
	if err := ensureGroup(ctx, hc, c.URL, topic, topic); err != nil {
		return StreamCase{}, err
	}
	defer deleteGroup(hc, c.URL, topic)
	cl := c.client()
	defer closeClient(cl.HTTPClient)

	tr := newLatencyTracker()
	var fe firstErr
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for range c.Consumers {
		s, err := cl.Consume(ctx, topic, stream.ConsumeOptions{MaxOutstandingMessages: c.MaxOutstanding})
		if err != nil {
			return StreamCase{}, fmt.Errorf("open consume stream: %w", err)
		}
		defer s.Close()
		wg.Go(func() {
			for {
				m, err := s.Receive(rctx)
				if err != nil {
					if rctx.Err() == nil {
						fe.add(err)
					}
					return
				}
				rm := receivedMessage{MessageID: m.MessageId}
				if m.Properties != nil {
					rm.Properties = *m.Properties
				}
				tr.received([]receivedMessage{rm}, time.Now())
				s.AckAsync(m.ReceiptHandle) // answered or failed by the stream; nobody waits
			}
		})
	}
	// A few publish streams shared by the pacer's publishers: each
	// stream takes many publishes in flight.
	pubs := make([]*stream.Publisher, 4)
	for i := range pubs {
		p, err := cl.PublishStream(ctx, topic, stream.PublishOptions{})
		if err != nil {
			return StreamCase{}, fmt.Errorf("open publish stream: %w", err)
		}
		defer p.Close()
		pubs[i] = p
	}
	var next atomic.Int64
	posters := func() poster { return streamPoster{pubs[int(next.Add(1))%len(pubs)]} }
	paced := publishAndDrain(ctx, posters, pacedLoad{url: c.URL, topic: topic, size: c.Size, rate: c.Rate,
		warmup: c.Warmup, duration: c.LatencyD, conc: 128, drain: c.Drain}, tr)
	stop()
	ps, received := newPacedStats(paced, tr.summary())
	var errs int64
	for _, n := range paced.errs {
		errs += n
	}
	first := paced.firstErr
	if first == "" {
		first = fe.msg
	}
	return StreamCase{Messages: received, MsgsPerSec: ps.PublishRate, Latency: ps.EndToEnd, Missing: ps.Missing,
		PublishLeg: &ps.PublishLatency, AfterPublish: &ps.AfterPublish,
		Duplicates: ps.Duplicates, Errors: errs + fe.n, FirstError: first}, nil
}

// streamPoster is the pacer's poster over a publish stream: the pacer's
// message is published with PublishWait and the confirm answered as a 201
// would be.
type streamPoster struct{ p *stream.Publisher }

func (s streamPoster) postJSON(ctx context.Context, _ string, in, out any) (int, error) {
	w, ok := in.(*wireMessage)
	if !ok {
		return 0, fmt.Errorf("streamPoster: want a *wireMessage, got %T", in)
	}
	m := apiclient.PublishRequest{Body: w.Body}
	if w.BodyBase64 != "" {
		raw, err := base64.StdEncoding.DecodeString(w.BodyBase64)
		if err != nil {
			return 0, err
		}
		m.BodyBase64 = &raw
	}
	if w.Tags != "" {
		m.Tags = &w.Tags
	}
	if len(w.Properties) > 0 {
		m.Properties = &w.Properties
	}
	if w.DelayLevel != 0 {
		m.DelayLevel = &w.DelayLevel
	}
	if w.DelaySeconds != 0 {
		m.DelaySeconds = &w.DelaySeconds
	}
	r, err := s.p.PublishWait(ctx, m)
	if err != nil {
		var pe *stream.ProblemError
		if errors.As(err, &pe) {
			return pe.Problem.Status, err
		}
		return 0, err
	}
	switch a := out.(type) {
	case nil:
	case *publishAnswer:
		a.MessageID = r.MessageId
	default:
		return 0, fmt.Errorf("streamPoster: want a *publishAnswer, got %T", out)
	}
	return http.StatusCreated, nil
}

func (streamPoster) close() {}
