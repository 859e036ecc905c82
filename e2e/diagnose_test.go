package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// emptyInfo is the "empty" of a receive answer (API.md "Receive
// diagnostics").
type emptyInfo struct {
	Reason        string   `json:"reason"`
	NextVisibleAt string   `json:"nextVisibleAt"`
	BlockedKeys   []string `json:"blockedKeys"`
}

// receiveEmpty receives once without waiting and returns the messages and
// the empty diagnosis.
func receiveEmpty(t *testing.T, s *server, group string) ([]orderlyMsg, *emptyInfo) {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/receive", map[string]any{"maxMessages": 4, "invisibleSeconds": 30})
	want(t, r, http.StatusOK)
	var out struct {
		Messages []orderlyMsg `json:"messages"`
		Empty    *emptyInfo   `json:"empty"`
	}
	r.JSON(t, &out)
	if len(out.Messages) > 0 && out.Empty != nil {
		t.Errorf("a receive with messages has empty %+v", out.Empty)
	}
	return out.Messages, out.Empty
}

// wantReason polls empty receives until one answers reason (the consumer
// pulls and settles asynchronously) and returns its diagnosis.
func wantReason(t *testing.T, s *server, group, reason string) emptyInfo {
	t.Helper()
	var got emptyInfo
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		msgs, e := receiveEmpty(t, s, group)
		if len(msgs) > 0 {
			t.Fatalf("receive of %s: unexpected messages %+v", group, msgs)
		}
		if e == nil || e.Reason != reason {
			return fmt.Errorf("empty = %+v, want reason %s", e, reason)
		}
		got = *e
		return nil
	})
	return got
}

func receiveWait(t *testing.T, s *server, group string) orderlyMsg {
	t.Helper()
	var got []orderlyMsg
	checkFor(t, 10*time.Second, time.Millisecond, func() error {
		r := s.do(t, "POST", "/v1/groups/"+group+"/receive", map[string]any{"waitSeconds": 2, "invisibleSeconds": 30})
		want(t, r, http.StatusOK)
		var out struct {
			Messages []orderlyMsg `json:"messages"`
		}
		r.JSON(t, &out)
		if len(out.Messages) == 0 {
			return fmt.Errorf("no message yet")
		}
		got = out.Messages
		return nil
	})
	return got[0]
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return at
}

// TestReceiveEmptyReasons: every empty receive says why, for each cause the
// gateway can tell apart.
func TestReceiveEmptyReasons(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/diag", map[string]any{"queues": 1}), http.StatusCreated)
	for g, mode := range map[string]string{"plain": "CONCURRENTLY", "seq": "ORDERLY"} {
		r := s.do(t, "PUT", "/v1/groups/"+g, map[string]any{
			"subscriptions": []map[string]any{{"topic": "diag"}}, "consumeMode": mode,
			"consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
		})
		if r.Status == http.StatusServiceUnavailable {
			t.Skip("this binary has no gateway wired")
		}
		want(t, r, http.StatusCreated)
	}

	t.Run("NO_SUBSCRIPTION_MATCH", func(t *testing.T) {
		want(t, s.do(t, "PUT", "/v1/groups/orphan", map[string]any{
			"subscriptions": []map[string]any{{"topic": "no-such-topic"}},
		}), http.StatusCreated)
		wantReason(t, s, "orphan", "NO_SUBSCRIPTION_MATCH")
	})

	t.Run("NO_MESSAGES", func(t *testing.T) {
		e := wantReason(t, s, "plain", "NO_MESSAGES")
		if e.NextVisibleAt != "" || len(e.BlockedKeys) != 0 {
			t.Errorf("NO_MESSAGES with %+v", e)
		}
	})

	t.Run("NOT_VISIBLE_YET", func(t *testing.T) {
		want(t, s.do(t, "POST", "/v1/topics/diag/messages", map[string]any{"body": "a", "shardingKey": "k1"}), http.StatusCreated)
		m := receiveWait(t, s, "plain")
		e := wantReason(t, s, "plain", "NOT_VISIBLE_YET")
		if got, w := parseTime(t, e.NextVisibleAt), parseTime(t, m.InvisibleUntil); !got.Equal(w) {
			t.Errorf("nextVisibleAt %v, want the lease end %v", got, w)
		}
		// The group status says the same.
		var g struct {
			Status struct {
				Empty *emptyInfo `json:"empty"`
			} `json:"status"`
		}
		s.do(t, "GET", "/v1/groups/plain", nil).JSON(t, &g)
		if g.Status.Empty == nil || g.Status.Empty.Reason != "NOT_VISIBLE_YET" {
			t.Errorf("group status empty = %+v, want NOT_VISIBLE_YET", g.Status.Empty)
		}
	})

	t.Run("KEYS_BLOCKED", func(t *testing.T) {
		want(t, s.do(t, "POST", "/v1/topics/diag/messages", map[string]any{"body": "b", "shardingKey": "k1"}), http.StatusCreated)
		// seq holds a (k1) and b (k1) on its one queue; a is out.
		m := receiveWait(t, s, "seq")
		if m.Body != "a" {
			t.Fatalf("first orderly message %q, want a", m.Body)
		}
		e := wantReason(t, s, "seq", "KEYS_BLOCKED")
		if !slices.Equal(e.BlockedKeys, []string{"k1"}) {
			t.Errorf("blockedKeys %v, want [k1]", e.BlockedKeys)
		}
		if got, w := parseTime(t, e.NextVisibleAt), parseTime(t, m.InvisibleUntil); !got.Equal(w) {
			t.Errorf("nextVisibleAt %v, want the lease end %v", got, w)
		}
		// A nack suspends the queue (1 s): still blocked, until the
		// suspension ends.
		nacked := time.Now()
		want(t, s.do(t, "POST", "/v1/groups/seq/nack", map[string]any{"receiptHandles": []string{m.ReceiptHandle}}), http.StatusOK)
		checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			msgs, e := receiveEmpty(t, s, "seq")
			if len(msgs) > 0 {
				t.Fatalf("a suspended queue handed out %+v", msgs)
			}
			if e == nil || e.Reason != "KEYS_BLOCKED" || e.NextVisibleAt == "" {
				return fmt.Errorf("empty = %+v, want KEYS_BLOCKED with nextVisibleAt", e)
			}
			if at := parseTime(t, e.NextVisibleAt); at.Before(nacked) || at.After(nacked.Add(5*time.Second)) {
				t.Errorf("nextVisibleAt %v is not the suspension end (nack at %v)", at, nacked)
			}
			return nil
		})
		again := receiveWait(t, s, "seq")
		if again.Body != "a" || again.ReconsumeTimes != 1 {
			t.Fatalf("after the suspension got %q reconsumeTimes %d, want a 1", again.Body, again.ReconsumeTimes)
		}
	})

	t.Run("PAUSED", func(t *testing.T) {
		// plain holds b, takeable: paused, it is not handed out.
		want(t, s.do(t, "POST", "/v1/groups/plain/pause", nil), http.StatusOK)
		wantReason(t, s, "plain", "PAUSED")
		want(t, s.do(t, "POST", "/v1/groups/plain/resume", nil), http.StatusOK)
		if m := receiveWait(t, s, "plain"); m.Body != "b" {
			t.Fatalf("after resume got %q, want b", m.Body)
		}
	})
}
