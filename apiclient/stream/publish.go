package stream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	json "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/apiclient"
)

// PublishOptions are a publish stream's query parameters; zero values
// leave the server's defaults (1000 messages, 16 MiB).
type PublishOptions struct {
	MaxUnconfirmedMessages int
	MaxUnconfirmedBytes    int
}

// Publisher is an open publish stream. Publish may be called from many
// goroutines; each call waits while the stream is at the server's limit of
// unconfirmed messages or bytes, so the socket never holds more than the
// server will read.
type Publisher struct {
	*conn
	topic string
	win   window
}

// PublishStream opens a publish stream on topic.
func (c *Client) PublishStream(ctx context.Context, topic string, o PublishOptions) (*Publisher, error) {
	q := url.Values{}
	setInt(q, "maxUnconfirmedMessages", o.MaxUnconfirmedMessages)
	setInt(q, "maxUnconfirmedBytes", o.MaxUnconfirmedBytes)
	s, err := c.dial(ctx, "/v1/topics/"+url.PathEscape(topic)+"/stream", q)
	if err != nil {
		return nil, err
	}
	if s.open.Topic == "" {
		s.open.Topic = topic
	}
	p := &Publisher{conn: s, topic: s.open.Topic}
	p.win.init(int64(s.open.MaxUnconfirmedMessages), int64(s.open.MaxUnconfirmedBytes))
	s.onFrame = func(*frame) {}
	s.onEnd = func(error) { p.win.release(0, 0) }
	s.start()
	return p, nil
}

// Topic is the topic the stream publishes to.
func (p *Publisher) Topic() string { return p.topic }

// Limits are the server's limits on unconfirmed messages and bytes.
func (p *Publisher) Limits() (messages, bytes int) {
	return int(p.win.maxN), int(p.win.maxB)
}

type publishFrame struct {
	Type     string                     `json:"type"`
	ID       string                     `json:"id"`
	Message  *apiclient.PublishRequest  `json:"message,omitempty"`
	Messages []apiclient.PublishRequest `json:"messages,omitempty"`
}

// Confirm is the answer to one publish frame: one result per message.
type Confirm = Future[[]apiclient.PublishResult]

// Publish sends one message and returns its confirm, which completes once
// the message is durable (or with a *ProblemError for a bad message, or
// an error wrapping ErrNotConfirmed if the stream ends first). It waits
// while the stream is at its flow limit; the error is ctx's or the
// stream's.
func (p *Publisher) Publish(ctx context.Context, m apiclient.PublishRequest) (*Confirm, error) {
	return p.publish(ctx, publishFrame{Type: "publish", Message: &m}, 1)
}

// PublishBatch sends an atomic batch (all or nothing, as the REST batch).
func (p *Publisher) PublishBatch(ctx context.Context, ms []apiclient.PublishRequest) (*Confirm, error) {
	return p.publish(ctx, publishFrame{Type: "publish", Messages: ms}, len(ms))
}

// PublishWait publishes one message and waits for its confirm.
func (p *Publisher) PublishWait(ctx context.Context, m apiclient.PublishRequest) (apiclient.PublishResult, error) {
	c, err := p.Publish(ctx, m)
	if err != nil {
		return apiclient.PublishResult{}, err
	}
	return oneResult(c.Wait(ctx))
}

// PublishAsync sends one message like Publish, and calls done with its
// result instead of returning a confirm: once the message is durable, or
// with a *ProblemError, or an error wrapping ErrNotConfirmed if the stream
// ends first. done runs on the stream's reader and must not block; a
// producer with thousands of publishes in flight needs no goroutine (nor
// Confirm) per publish this way. The error is Publish's: when it is not
// nil, done is never called.
func (p *Publisher) PublishAsync(ctx context.Context, m apiclient.PublishRequest, done func(apiclient.PublishResult, error)) error {
	return p.send(ctx, publishFrame{Type: "publish", Message: &m}, 1, func(rs []apiclient.PublishResult, err error) {
		done(oneResult(rs, err))
	})
}

// oneResult is the result of a one-message publish's confirm.
func oneResult(rs []apiclient.PublishResult, err error) (apiclient.PublishResult, error) {
	if err != nil {
		return apiclient.PublishResult{}, err
	}
	if len(rs) != 1 {
		return apiclient.PublishResult{}, fmt.Errorf("stream: confirm has %d results for one message", len(rs))
	}
	return rs[0], nil
}

func (p *Publisher) publish(ctx context.Context, f publishFrame, n int) (*Confirm, error) {
	c := newFuture[[]apiclient.PublishResult]()
	if err := p.send(ctx, f, n, c.complete); err != nil {
		return nil, err
	}
	return c, nil
}

// send writes f (n messages) once the window has room for it and calls
// done with its results when the answer (or the stream's end) is in.
func (p *Publisher) send(ctx context.Context, f publishFrame, n int, done func([]apiclient.PublishResult, error)) error {
	id := p.newID()
	f.ID = id
	b, err := encodePublishFrame(&f)
	if err != nil {
		return err
	}
	size := int64(len(b))
	if err := p.win.acquire(ctx, p.done, int64(n), size); err != nil {
		if errors.Is(err, errWindowClosed) {
			return p.err
		}
		return err
	}
	err = p.sendRaw(id, b, func(a *frame, err error) {
		p.win.release(int64(n), size)
		var rs []apiclient.PublishResult
		switch {
		case err == nil && a.fastResults:
			rs = a.confirms
		case err == nil:
			err = json.Unmarshal(a.Results, &rs)
		case !errors.As(err, new(*ProblemError)):
			err = fmt.Errorf("%w (%w)", ErrNotConfirmed, err)
		}
		done(rs, err)
	})
	if err != nil {
		p.win.release(int64(n), size)
		return err
	}
	return nil
}

// Close ends the stream with a normal close (1000) once the server has
// answered it. Publishes still unconfirmed fail with ErrNotConfirmed: wait
// for the confirms first (Flush) to know every one was stored.
func (p *Publisher) Close() error { return p.close() }

// Flush waits until every publish sent so far is answered.
func (p *Publisher) Flush(ctx context.Context) error {
	if err := p.win.drain(ctx, p.done); errors.Is(err, errWindowClosed) {
		return p.err
	} else {
		return err
	}
}

var errWindowClosed = errors.New("stream ended")

// window is the client's copy of the server's flow limits: the messages
// and bytes sent and not yet answered.
type window struct {
	mu         sync.Mutex
	n, b       int64
	maxN, maxB int64
	changed    chan struct{} // closed and replaced on a release that has waiters
	waiting    bool          // someone holds changed and waits on it
}

func (w *window) init(maxN, maxB int64) {
	if maxN <= 0 {
		maxN = 1000
	}
	if maxB <= 0 {
		maxB = 16 << 20
	}
	w.maxN, w.maxB, w.changed = maxN, maxB, make(chan struct{})
}

// acquire waits until n messages of b bytes fit (a frame larger than the
// byte limit fits when nothing else is out, so it never stalls).
func (w *window) acquire(ctx context.Context, done <-chan struct{}, n, b int64) error {
	for {
		w.mu.Lock()
		if w.n == 0 || (w.n+n <= w.maxN && w.b+b <= w.maxB) {
			w.n += n
			w.b += b
			w.mu.Unlock()
			return nil
		}
		ch := w.changed
		w.waiting = true
		w.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return errWindowClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (w *window) release(n, b int64) {
	w.mu.Lock()
	w.n -= n
	w.b -= b
	if w.waiting {
		close(w.changed)
		w.changed, w.waiting = make(chan struct{}), false
	}
	w.mu.Unlock()
}

// drain waits until nothing is out.
func (w *window) drain(ctx context.Context, done <-chan struct{}) error {
	for {
		w.mu.Lock()
		if w.n == 0 {
			w.mu.Unlock()
			return nil
		}
		ch := w.changed
		w.waiting = true
		w.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return errWindowClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
