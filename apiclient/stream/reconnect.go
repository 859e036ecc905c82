package stream

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// Reconnect is a consume stream's policy for opening a new stream when
// the one in use ends without Close: a network drop, a server restart or
// shutdown (1001), an idle cut (4008), an internal error (1011). It does
// not reconnect after an end that another stream would meet again: the
// group deleted (4000), the key revoked (1008), a refused upgrade other
// than 429 and 503.
//
// Deliveries already taken in stay queued for Receive; their handles are
// ordinary receipt handles, valid on the new stream and on REST until
// their leases end, and the deliveries not settled by then come again,
// as after any lost lease. Settlements pending when the stream ended fail
// (they may or may not have been applied); settle again to know. The
// new stream opens with the limits in force (a Flow change carries over).
type Reconnect struct {
	// MinDelay and MaxDelay bound the wait before each attempt, doubled
	// from MinDelay after each failed one, with jitter (defaults 100 ms
	// and 5 s). A 429 or 503 waits at least its Retry-After.
	MinDelay, MaxDelay time.Duration
	// MaxAttempts gives up after this many failed attempts in a row; the
	// Consumer then ends with the last error. 0: never give up.
	MaxAttempts int
	// OnReconnect, when set, is called after each new stream opened, with
	// why the last one ended.
	OnReconnect func(lastErr error)
}

// streamEnded is the stream's onEnd: the Consumer ends with err, or a
// reconnect starts.
func (c *Consumer) streamEnded(err error) {
	c.mu.Lock()
	again := !c.closing && c.opts.Reconnect != nil && reconnectable(err)
	if again {
		c.redials.Add(1)
	}
	c.mu.Unlock()
	if !again {
		c.finish(err)
		return
	}
	go c.redial(err)
}

// reconnectable reports whether a stream that ended with err may be
// opened again.
func reconnectable(err error) bool {
	var ce *ClosedError
	if errors.As(err, &ce) {
		switch ce.Code {
		case int(websocket.StatusPolicyViolation), int(websocket.StatusMessageTooBig), 4000, int(websocket.StatusNormalClosure):
			return false
		}
		return true
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusTooManyRequests || he.StatusCode == http.StatusServiceUnavailable || he.StatusCode >= 500
	}
	return !errors.Is(err, ErrClosed)
}

// redial opens a new stream until one opens, the policy gives up, or
// Close.
func (c *Consumer) redial(ended error) {
	defer c.redials.Done()
	lastErr := ended
	r := c.opts.Reconnect
	minD, maxD := r.MinDelay, r.MaxDelay
	if minD <= 0 {
		minD = 100 * time.Millisecond
	}
	if maxD < minD {
		maxD = max(5*time.Second, minD)
	}
	delay := minD
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for attempt := 1; ; attempt++ {
		wait := delay/2 + rand.N(delay/2+1)
		var he *HTTPError
		if errors.As(lastErr, &he) && he.RetryAfter > wait {
			wait = he.RetryAfter
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-c.life.Done():
			return // Close finishes the Consumer
		}
		s, err := c.cl.dial(c.life, c.path, c.query())
		if err == nil {
			c.mu.Lock()
			closing := c.closing
			if !closing {
				c.reconnects++
			}
			c.mu.Unlock()
			if closing {
				s.ws.CloseNow()
				s.cancel()
				return
			}
			c.use(s)
			if r.OnReconnect != nil {
				r.OnReconnect(ended)
			}
			return
		}
		if c.life.Err() != nil {
			return
		}
		lastErr = err
		if !reconnectable(err) || r.MaxAttempts > 0 && attempt >= r.MaxAttempts {
			c.finish(err)
			return
		}
		delay = min(delay*2, maxD)
	}
}

// query is the stream's query for a new stream: the options given, with
// the limits in force.
func (c *Consumer) query() url.Values {
	q := url.Values{}
	if c.opts.ConsumerID != "" {
		q.Set("consumerId", c.opts.ConsumerID)
	}
	setInt(q, "invisibleSeconds", c.opts.InvisibleSeconds)
	c.mu.Lock()
	l := c.limits
	c.mu.Unlock()
	if l.MaxOutstandingMessages > 0 {
		q.Set("maxOutstandingMessages", strconv.Itoa(l.MaxOutstandingMessages))
	}
	if l.MaxOutstandingBytes > 0 {
		q.Set("maxOutstandingBytes", strconv.Itoa(l.MaxOutstandingBytes))
	}
	return q
}
