package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestWebhookKill9DuringPush: the gateway is killed with SIGKILL while
// pushing; after a restart on the same data dir, every message that had
// not been answered with a 2xx is pushed (at least once), and none is
// lost, with nothing but the stored group config to go on.
func TestWebhookKill9DuringPush(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 1000
	}
	dir := t.TempDir()
	s := startPushServer(t, dir)
	want(t, s.do(t, "PUT", "/v1/topics/crash", map[string]any{"queues": 4}), http.StatusCreated)
	// A slowish receiver, so that the kill lands in the middle of the
	// stream with requests in flight.
	rc := newReceiver(t, func(r *http.Request, _ []hookMsg) (int, http.Header) {
		select {
		case <-time.After(2 * time.Millisecond):
		case <-r.Context().Done():
		}
		return http.StatusOK, nil
	})
	putPushGroup(t, s, "crash", "crash", map[string]any{"url": rc.srv.URL, "secret": hookSecret, "maxInFlight": 8}, nil)
	publishN(t, s, "crash", "c", n, nil)
	checkFor(t, 20*time.Second, 5*time.Millisecond, func() error {
		if got := rc.ackedCount(); got < n/4 {
			return fmt.Errorf("%d of %d pushed before the kill", got, n)
		}
		return nil
	})
	s.kill()
	before := rc.ackedCount()
	if before == n {
		t.Fatalf("all %d messages were pushed before the kill: nothing tested", n)
	}

	s2 := startPushServer(t, dir)
	checkFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := rc.ackedCount(); got != n {
			return fmt.Errorf("%d of %d messages acknowledged by the receiver after the restart", got, n)
		}
		return nil
	})
	rc.mu.Lock()
	dups := 0
	for i := range n {
		k := rc.acked["c"+strconv.Itoa(i)]
		if k == 0 {
			t.Errorf("message c%d never acknowledged", i)
		}
		dups += k - 1
	}
	rc.mu.Unlock()
	rc.checkSignatures(t)
	if st := getGroup(t, s2, "crash").Status.Push; st == nil || st.Delivered == 0 {
		t.Fatalf("after restart status.push %+v", st)
	}
	t.Logf("%d of %d acknowledged before the kill; %d duplicate deliveries after the restart (at least once)", before, n, dups)
}
