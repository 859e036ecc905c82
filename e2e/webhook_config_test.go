package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestWebhookConfigChangesLive: push settings are validated at PUT; a
// new URL, removing push (back to receive) and adding it again all take
// effect without a restart.
func TestWebhookConfigChangesLive(t *testing.T) {
	s := startPushServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/live", map[string]any{"queues": 2}), http.StatusCreated)
	group := func(push map[string]any) map[string]any {
		b := map[string]any{"subscriptions": []map[string]any{{"topic": "live"}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}
		if push != nil {
			b["push"] = push
		}
		return b
	}

	// Bad push blocks are 400s naming the field.
	for field, push := range map[string]map[string]any{
		"push.url":       {"url": "ftp://example.com/x"},
		"push.secret":    {"url": "http://127.0.0.1:1/x", "secret": "whsec_???"},
		"push.batchSize": {"url": "http://127.0.0.1:1/x", "batchSize": 33},
	} {
		wantProblem(t, s.do(t, "PUT", "/v1/groups/live", group(push)), http.StatusBadRequest, field)
	}

	a, b := newReceiver(t, nil), newReceiver(t, nil)
	want(t, s.do(t, "PUT", "/v1/groups/live", group(map[string]any{"url": a.srv.URL, "secret": hookSecret, "batchSize": 8})), http.StatusCreated)
	g := getGroup(t, s, "live")
	if g.Push == nil || g.Push.BatchSize != 8 || !g.Push.HasSecret {
		t.Fatalf("push view %+v", g.Push)
	}
	wantProblem(t, s.do(t, "POST", "/v1/groups/live/receive", map[string]any{}), http.StatusConflict)
	publishN(t, s, "live", "a", 20, nil)
	waitAcked(t, a, 20)

	// A new URL: the next messages go there.
	want(t, s.do(t, "PUT", "/v1/groups/live", group(map[string]any{"url": b.srv.URL, "secret": hookSecret})), http.StatusOK)
	checkFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if st := getGroup(t, s, "live").Status.Push; st == nil || st.URL != b.srv.URL {
			return fmt.Errorf("status.push %+v: still on the old URL", st)
		}
		return nil
	})
	publishN(t, s, "live", "b", 20, nil)
	waitAcked(t, b, 20)
	if n := a.ackedCount(); n != 20 {
		t.Fatalf("old URL got %d messages after the change, want still 20", n)
	}

	// Push removed: a pull group again.
	want(t, s.do(t, "PUT", "/v1/groups/live", group(nil)), http.StatusOK)
	checkFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if st := getGroup(t, s, "live").Status.Push; st != nil {
			return fmt.Errorf("still pushing: %+v", st)
		}
		return nil
	})
	publishN(t, s, "live", "p", 3, nil)
	var got []recvMsg
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		got = append(got, receive(t, s, "live", map[string]any{"maxMessages": 32, "waitSeconds": 1})...)
		if len(got) < 3 {
			return fmt.Errorf("received %d of 3", len(got))
		}
		return nil
	})
	var handles []string
	for _, m := range got {
		handles = append(handles, m.ReceiptHandle)
	}
	ack(t, s, "live", handles...)
	if n := a.ackedCount() + b.ackedCount(); n != 40 {
		t.Fatalf("webhooks got %d messages, want 40 (none after push was removed)", n)
	}

	// Push again: new messages are pushed.
	want(t, s.do(t, "PUT", "/v1/groups/live", group(map[string]any{"url": a.srv.URL, "secret": hookSecret})), http.StatusOK)
	publishN(t, s, "live", "x", 5, nil)
	waitAcked(t, a, 25)
	for _, rc := range []*receiver{a, b} {
		rc.checkSignatures(t)
	}
}

func waitAcked(t *testing.T, rc *receiver, n int) {
	t.Helper()
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := rc.ackedCount(); got != n {
			return fmt.Errorf("receiver acknowledged %d of %d", got, n)
		}
		return nil
	})
}
