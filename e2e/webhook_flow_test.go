package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestWebhookRetryAfterAndHangingReceiver: a receiver answering 429 with
// Retry-After: 2 gets nothing more for two seconds; a receiver that hangs
// holds exactly maxInFlight requests and no more, while another group
// keeps being delivered.
func TestWebhookRetryAfterAndHangingReceiver(t *testing.T) {
	s := startPushServer(t, t.TempDir())
	for _, topic := range []string{"slow", "hang", "fast"} {
		want(t, s.do(t, "PUT", "/v1/topics/"+topic, map[string]any{"queues": 2}), http.StatusCreated)
	}

	// Retry-After: the first request is throttled.
	var mu sync.Mutex
	var throttledAt time.Time
	slow := newReceiver(t, func(*http.Request, []hookMsg) (int, http.Header) {
		mu.Lock()
		defer mu.Unlock()
		if throttledAt.IsZero() {
			throttledAt = time.Now()
			return http.StatusTooManyRequests, http.Header{"Retry-After": {"2"}}
		}
		return http.StatusOK, nil
	})

	// Hanging: requests block until the test ends.
	release := make(chan struct{})
	hang := newReceiver(t, func(r *http.Request, _ []hookMsg) (int, http.Header) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return http.StatusOK, nil
	})
	t.Cleanup(func() { close(release) }) // runs before the receivers close (LIFO)
	fast := newReceiver(t, nil)

	putPushGroup(t, s, "slow", "slow", map[string]any{"url": slow.srv.URL, "secret": hookSecret, "maxInFlight": 1}, nil)
	putPushGroup(t, s, "hang", "hang", map[string]any{"url": hang.srv.URL, "secret": hookSecret, "maxInFlight": 3, "timeoutSeconds": 60}, nil)
	putPushGroup(t, s, "fast", "fast", map[string]any{"url": fast.srv.URL, "secret": hookSecret}, nil)
	publishN(t, s, "slow", "s", 5, nil)
	publishN(t, s, "hang", "h", 50, nil)
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := hang.inFlight.Load(); n != 3 {
			return fmt.Errorf("hanging receiver holds %d requests, want 3", n)
		}
		return nil
	})
	publishN(t, s, "fast", "f", 200, nil)
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := fast.ackedCount(); n != 200 {
			return fmt.Errorf("fast group delivered %d of 200 while another hangs", n)
		}
		return nil
	})
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := slow.ackedCount(); n != 5 {
			return fmt.Errorf("throttled group delivered %d of 5", n)
		}
		return nil
	})

	if m := hang.maxInFlight.Load(); m != 3 {
		t.Fatalf("hanging receiver saw up to %d concurrent requests, maxInFlight is 3", m)
	}
	if st := getGroup(t, s, "hang").Status.Push; st == nil || st.InFlight != 3 {
		t.Fatalf("hang status.push %+v, want inFlight 3", st)
	}
	// Nothing reached the throttled receiver before its Retry-After ended.
	reqs := slow.requests()
	if len(reqs) < 2 || reqs[0].Status != http.StatusTooManyRequests {
		t.Fatalf("throttled receiver requests %+v", reqs)
	}
	if gap := reqs[1].At.Sub(reqs[0].At); gap < 2*time.Second {
		t.Fatalf("next request %v after a Retry-After of 2s", gap)
	}
	for _, rc := range []*receiver{slow, hang, fast} {
		rc.checkSignatures(t)
	}
}
