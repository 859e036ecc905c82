package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestKeyLags: an ORDERLY group lists its keys oldest first with their
// depth; limit keeps the oldest; finished keys leave the list.
func TestKeyLags(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/kl", map[string]any{"queues": 2}), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/klg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "kl"}}, "consumeMode": "ORDERLY",
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	for _, k := range []string{"old", "old", "old"} {
		want(t, s.do(t, "POST", "/v1/topics/kl/messages", map[string]any{"body": k, "shardingKey": k}), http.StatusCreated)
	}
	// bornAt has millisecond precision: on a tie keys sort by name, so
	// "old" < "young" either way.
	want(t, s.do(t, "POST", "/v1/topics/kl/messages", map[string]any{"body": "young", "shardingKey": "young"}), http.StatusCreated)

	type keyLag struct {
		ShardingKey      string `json:"shardingKey"`
		Depth            int    `json:"depth"`
		OldestAgeSeconds int64  `json:"oldestAgeSeconds"`
		OldestBornAt     string `json:"oldestBornAt"`
		OldestMessageID  string `json:"oldestMessageId"`
	}
	keys := func(q string) []keyLag {
		var out struct {
			Keys []keyLag `json:"keys"`
		}
		r := s.do(t, "GET", "/v1/groups/klg/keys"+q, nil)
		want(t, r, http.StatusOK)
		r.JSON(t, &out)
		return out.Keys
	}
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		got := keys("")
		if len(got) != 2 || got[0].ShardingKey != "old" || got[0].Depth != 3 || got[1].ShardingKey != "young" || got[1].Depth != 1 ||
			got[0].OldestMessageID == "" || got[0].OldestBornAt == "" {
			return fmt.Errorf("keys = %+v, want old (3) then young (1)", got)
		}
		return nil
	})
	if got := keys("?limit=1"); len(got) != 1 || got[0].ShardingKey != "old" {
		t.Fatalf("limit=1: %+v", got)
	}
	want(t, s.do(t, "GET", "/v1/groups/klg/keys?limit=0", nil), http.StatusBadRequest)
	for range 4 {
		m := receiveWait(t, s, "klg")
		settle(t, s, "klg", "ack", m)
	}
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := keys(""); len(got) != 0 {
			return fmt.Errorf("keys after acking everything = %+v", got)
		}
		return nil
	})
}
