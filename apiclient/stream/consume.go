package stream

import (
	"context"
	"net/url"
	"strconv"
	"sync"

	"github.com/mqgate/mqgate/apiclient"
)

// ConsumeOptions are a consume stream's query parameters; zero values
// leave the server's defaults.
type ConsumeOptions struct {
	// ConsumerID names the consumer (required for BROADCASTING groups).
	ConsumerID string
	// InvisibleSeconds is the lease of each delivery (default: the group's).
	InvisibleSeconds int
	// MaxOutstandingMessages and MaxOutstandingBytes bound the deliveries
	// out and not yet settled on the stream (defaults 1000 and 10 MiB).
	MaxOutstandingMessages int
	MaxOutstandingBytes    int
	// OneFramePerAck sends every ack in a frame of its own. By default
	// the acks given while the stream's writer is busy go out together,
	// in one frame (ackgather.go); each still gets its own results.
	OneFramePerAck bool
	// Reconnect, when set, opens a new stream whenever the stream ends
	// without Close (reconnect.go); nil: the first end is the Consumer's.
	Reconnect *Reconnect
}

// Limits are a consume stream's flow limits in force.
type Limits struct {
	MaxOutstandingMessages int
	MaxOutstandingBytes    int
}

// Consumer is an open consume stream. Deliveries are queued as they
// arrive (the server's flow limits bound the queue) and taken with
// Receive; settlements may be sent from any goroutine.
type Consumer struct {
	cl               *Client
	path             string
	opts             ConsumeOptions
	group            string
	invisibleSeconds int

	mu     sync.Mutex
	cur    *conn // the stream in use (the last one, once ended)
	queue  []apiclient.ReceivedMessage
	ready  chan struct{} // has a token while queue is not empty
	empty  string
	limits Limits

	// The Consumer's own end, past every reconnect (reconnect.go).
	closing    bool
	reconnects int
	life       context.Context // ends at Close: stops a reconnect
	stop       context.CancelFunc
	redials    sync.WaitGroup
	endOnce    sync.Once
	err        error
	done       chan struct{}
}

// Consume opens a consume stream on group.
func (c *Client) Consume(ctx context.Context, group string, o ConsumeOptions) (*Consumer, error) {
	q := url.Values{}
	if o.ConsumerID != "" {
		q.Set("consumerId", o.ConsumerID)
	}
	setInt(q, "invisibleSeconds", o.InvisibleSeconds)
	setInt(q, "maxOutstandingMessages", o.MaxOutstandingMessages)
	setInt(q, "maxOutstandingBytes", o.MaxOutstandingBytes)
	path := "/v1/groups/" + url.PathEscape(group) + "/stream"
	s, err := c.dial(ctx, path, q)
	if err != nil {
		return nil, err
	}
	if s.open.Group == "" {
		s.open.Group = group
	}
	life, stop := context.WithCancel(context.Background())
	cs := &Consumer{cl: c, path: path, opts: o, group: s.open.Group, invisibleSeconds: s.open.InvisibleSeconds,
		ready: make(chan struct{}, 1), life: life, stop: stop, done: make(chan struct{})}
	cs.use(s)
	return cs, nil
}

// use makes s the stream in use and starts it.
func (c *Consumer) use(s *conn) {
	c.mu.Lock()
	c.cur = s
	c.limits = Limits{MaxOutstandingMessages: s.open.MaxOutstandingMessages, MaxOutstandingBytes: s.open.MaxOutstandingBytes}
	c.mu.Unlock()
	s.onFrame = c.onFrame
	s.onEnd = c.streamEnded
	s.start()
}

// current is the stream in use.
func (c *Consumer) current() *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// finish ends the Consumer with err (the first call wins).
func (c *Consumer) finish(err error) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
		c.signal()
	})
}

// Done is closed when the Consumer has ended (with Reconnect: when it
// gave up, or after Close); Err then says why.
func (c *Consumer) Done() <-chan struct{} { return c.done }

// Err is why the Consumer ended (ErrClosed after Close), nil while it runs.
func (c *Consumer) Err() error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	default:
		return nil
	}
}

// LastError is the last error frame of the stream in use that answered
// no frame of this client's.
func (c *Consumer) LastError() *ProblemError { return c.current().LastError() }

// StreamID is the server's name of the stream in use.
func (c *Consumer) StreamID() string { return c.current().StreamID() }

// Reconnects is how many times a new stream was opened (Reconnect).
func (c *Consumer) Reconnects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconnects
}

func setInt(q url.Values, k string, v int) {
	if v != 0 {
		q.Set(k, strconv.Itoa(v))
	}
}

func (c *Consumer) onFrame(f *frame) {
	c.mu.Lock()
	switch f.Type {
	case "messages":
		c.queue = append(c.queue, f.Messages...)
		c.empty = ""
	case "empty":
		if f.Empty != nil {
			c.empty = f.Empty.Reason
		}
	}
	c.mu.Unlock()
	c.signal()
}

func (c *Consumer) signal() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// Receive returns the next delivery, waiting for one. Once the stream has
// ended it still returns the deliveries already queued, then the stream's
// error (ErrClosed after Close); their handles stay valid on REST until
// their leases end.
func (c *Consumer) Receive(ctx context.Context) (apiclient.ReceivedMessage, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue[0] = apiclient.ReceivedMessage{}
			c.queue = c.queue[1:]
			more := len(c.queue) > 0
			c.mu.Unlock()
			if more {
				c.signal()
			}
			return m, nil
		}
		c.mu.Unlock()
		select {
		case <-c.done:
			c.mu.Lock()
			n, err := len(c.queue), c.err
			c.mu.Unlock()
			if n == 0 {
				return apiclient.ReceivedMessage{}, err
			}
		case <-c.ready:
		case <-ctx.Done():
			return apiclient.ReceivedMessage{}, ctx.Err()
		}
	}
}

// TryReceive returns a delivery already queued, without waiting; ok is
// false when none is.
func (c *Consumer) TryReceive() (m apiclient.ReceivedMessage, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return m, false
	}
	m = c.queue[0]
	c.queue[0] = apiclient.ReceivedMessage{}
	c.queue = c.queue[1:]
	return m, true
}

// Empty is the reason of the server's last empty frame (NO_MESSAGES,
// PAUSED, ...) since the last delivery, "" when none.
func (c *Consumer) Empty() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.empty
}

// Limits are the flow limits in force (the open frame's, then the last
// flow answer's).
func (c *Consumer) Limits() Limits {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limits
}

// InvisibleSeconds is the lease the stream gives each delivery.
func (c *Consumer) InvisibleSeconds() int { return c.invisibleSeconds }

// Group is the group the stream consumes.
func (c *Consumer) Group() string { return c.group }

// NackOptions are a nack's optional fields.
type NackOptions struct {
	// DelayLevel: 0 lets the engine decide, -1 dead-letters now, 1..18.
	DelayLevel int
	// Reason is recorded on the message's timeline.
	Reason string
}

type settleFrame struct {
	Type             string   `json:"type"`
	ID               string   `json:"id"`
	ReceiptHandles   []string `json:"receiptHandles"`
	DelayLevel       *int     `json:"delayLevel,omitempty"`
	Reason           string   `json:"reason,omitempty"`
	InvisibleSeconds int      `json:"invisibleSeconds,omitempty"`
}

// settle sends one settlement frame and returns its future.
func (c *Consumer) settle(f settleFrame) *Future[[]apiclient.HandleResult] {
	fut := newFuture[[]apiclient.HandleResult]()
	c.settleFunc(f, fut.complete)
	return fut
}

// settleFunc sends one settlement frame; done gets its results, or the
// error of a frame that could not be sent or was not answered.
func (c *Consumer) settleFunc(f settleFrame, done func([]apiclient.HandleResult, error)) {
	s := c.current()
	var err error
	if f.Type == "ack" && !c.opts.OneFramePerAck && len(f.ReceiptHandles) > 0 && len(f.ReceiptHandles) <= maxAckHandles {
		err = s.sendAck(f.ReceiptHandles, done)
	} else {
		err = s.sendSettle(f, done)
	}
	if err != nil {
		done(nil, err)
	}
}

// AckFunc sends an ack of 1..100 handles like AckAsync and calls done
// with one result per handle instead of returning a future. done runs on
// the stream's reader (or at once, on this goroutine, when the frame
// could not be sent) and must not block; a worker that acks each message
// as it finishes needs no goroutine waiting per ack this way.
func (c *Consumer) AckFunc(done func([]apiclient.HandleResult, error), handles ...string) {
	c.settleFunc(settleFrame{Type: "ack", ReceiptHandles: handles}, done)
}

// AckAsync sends an ack of 1..100 handles; the future gets one result per
// handle, in order (ok, expired or invalid).
func (c *Consumer) AckAsync(handles ...string) *Future[[]apiclient.HandleResult] {
	return c.settle(settleFrame{Type: "ack", ReceiptHandles: handles})
}

// NackAsync sends a nack of 1..100 handles.
func (c *Consumer) NackAsync(o NackOptions, handles ...string) *Future[[]apiclient.HandleResult] {
	f := settleFrame{Type: "nack", ReceiptHandles: handles, Reason: o.Reason}
	if o.DelayLevel != 0 {
		f.DelayLevel = &o.DelayLevel
	}
	return c.settle(f)
}

// ExtendAsync sends an extend of 1..100 handles' leases to
// invisibleSeconds from now.
func (c *Consumer) ExtendAsync(invisibleSeconds int, handles ...string) *Future[[]apiclient.HandleResult] {
	return c.settle(settleFrame{Type: "extend", ReceiptHandles: handles, InvisibleSeconds: invisibleSeconds})
}

// Ack acks handles and waits for their results.
func (c *Consumer) Ack(ctx context.Context, handles ...string) ([]apiclient.HandleResult, error) {
	return c.AckAsync(handles...).Wait(ctx)
}

// Nack nacks handles and waits for their results.
func (c *Consumer) Nack(ctx context.Context, o NackOptions, handles ...string) ([]apiclient.HandleResult, error) {
	return c.NackAsync(o, handles...).Wait(ctx)
}

// Extend extends handles' leases and waits for their results.
func (c *Consumer) Extend(ctx context.Context, invisibleSeconds int, handles ...string) ([]apiclient.HandleResult, error) {
	return c.ExtendAsync(invisibleSeconds, handles...).Wait(ctx)
}

// Flow changes the stream's flow limits (a zero field keeps its value)
// and returns the limits now in force.
func (c *Consumer) Flow(ctx context.Context, l Limits) (Limits, error) {
	type flowFrame struct {
		Type                   string `json:"type"`
		ID                     string `json:"id"`
		MaxOutstandingMessages int    `json:"maxOutstandingMessages,omitempty"`
		MaxOutstandingBytes    int    `json:"maxOutstandingBytes,omitempty"`
	}
	fut := newFuture[Limits]()
	err := c.current().send(func(id string) any {
		return flowFrame{Type: "flow", ID: id, MaxOutstandingMessages: l.MaxOutstandingMessages, MaxOutstandingBytes: l.MaxOutstandingBytes}
	}, func(a *frame, err error) {
		var got Limits
		if err == nil {
			got = Limits{MaxOutstandingMessages: a.MaxOutstandingMessages, MaxOutstandingBytes: a.MaxOutstandingBytes}
			c.mu.Lock()
			c.limits = got
			c.mu.Unlock()
		}
		fut.complete(got, err)
	})
	if err != nil {
		return Limits{}, err
	}
	return fut.Wait(ctx)
}

// Close ends the stream with a normal close (1000), and any reconnect.
// Deliveries not yet settled keep their leases, which run out as REST
// leases do; pending settlements fail with ErrClosed (they may or may not
// have been applied).
func (c *Consumer) Close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.stop()
	c.redials.Wait() // no stream opens from now on
	err := c.current().close()
	c.finish(ErrClosed)
	return err
}
