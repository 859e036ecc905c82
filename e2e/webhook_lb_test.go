package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestWebhookLoadBalancedWithFailures: three receivers behind a
// round-robin load balancer get 5,000 messages, every request signed so
// that it verifies against the secret; one of them answers 500 for its
// first two seconds, and the messages it refused come back through the
// retry topic: all 5,000 are acknowledged at least once, none lost.
func TestWebhookLoadBalancedWithFailures(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 1000
	}
	s := startPushServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/lb", map[string]any{"queues": 4}), http.StatusCreated)

	var failUntil atomic.Int64 // unix nanos; set at the first request
	var refused atomic.Int64
	flaky := func(r *http.Request, msgs []hookMsg) (int, http.Header) {
		now := time.Now().UnixNano()
		failUntil.CompareAndSwap(0, now+int64(2*time.Second))
		if now < failUntil.Load() {
			refused.Add(int64(len(msgs)))
			return http.StatusInternalServerError, nil
		}
		return http.StatusOK, nil
	}
	a, b, c := newReceiver(t, nil), newReceiver(t, flaky), newReceiver(t, nil)
	lb := roundRobin(t, a, b, c)

	putPushGroup(t, s, "lb", "lb", map[string]any{"url": lb.URL, "maxInFlight": 16, "timeoutSeconds": 10, "secret": hookSecret}, nil)
	start := time.Now()
	publishN(t, s, "lb", "m", n, nil)

	distinct := func() int {
		seen := map[string]bool{}
		for _, rc := range []*receiver{a, b, c} {
			rc.mu.Lock()
			for body := range rc.acked {
				seen[body] = true
			}
			rc.mu.Unlock()
		}
		return len(seen)
	}
	checkFor(t, 45*time.Second, 50*time.Millisecond, func() error {
		if got := distinct(); got != n {
			return fmt.Errorf("%d of %d messages acknowledged by a receiver", got, n)
		}
		return nil
	})
	el := time.Since(start)
	for _, rc := range []*receiver{a, b, c} {
		rc.checkSignatures(t)
	}
	if refused.Load() == 0 {
		t.Fatal("the flaky receiver refused nothing: the retry path was not exercised")
	}
	// Every body is one of ours (nothing invented), each of the three
	// receivers took a share.
	for i, rc := range []*receiver{a, b, c} {
		rc.mu.Lock()
		for body := range rc.acked {
			if k, err := strconv.Atoi(body[1:]); err != nil || k < 0 || k >= n {
				t.Errorf("unknown body %q", body)
			}
		}
		got := len(rc.acked)
		rc.mu.Unlock()
		if got == 0 {
			t.Errorf("receiver %d acknowledged nothing", i)
		}
	}
	// A receiver records a body before its answer reaches the pusher, which
	// counts the delivery only once it has read that answer: the counter
	// may trail the receivers by the answers still on the way.
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		g := getGroup(t, s, "lb")
		if p := g.Status.Push; p == nil || p.Failed == 0 || p.Delivered < uint64(n) ||
			p.LastSuccessAt == "" || p.LastErrorAt == "" || p.LastError == "" {
			return fmt.Errorf("status.push %+v", p)
		}
		return nil
	})
	var dup int
	for _, rc := range []*receiver{a, b, c} {
		for _, k := range rc.acked {
			dup += k
		}
	}
	t.Logf("%d messages to 3 receivers in %v (%.0f msg/s with the race detector); %d refused with 500 and redelivered; %d 2xx answers in all",
		n, el, float64(n)/el.Seconds(), refused.Load(), dup)
}
