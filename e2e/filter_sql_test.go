package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSQLFilterGroup runs a group with filterType SQL92 against the real
// binary: a bad expression is a 400 naming the position, the group shows
// its filterType, and receive hands out exactly the matching messages
// (missing properties and type mismatches never match).
func TestSQLFilterGroup(t *testing.T) {
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 2}), http.StatusCreated)

	p := wantProblem(t, s.do(t, "PUT", "/v1/groups/eu", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders", "filterType": "SQL92", "filter": "a > 5 AND b = "}},
	}), http.StatusBadRequest, "subscriptions[0].filter")
	if len(p.Errors) != 1 || !strings.HasPrefix(p.Errors[0].Message, "at 15: expected a value") {
		t.Fatalf("problem %+v: want the position of the error", p)
	}
	wantProblem(t, s.do(t, "PUT", "/v1/groups/eu", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders", "filterType": "XPATH", "filter": "a"}},
	}), http.StatusBadRequest, "subscriptions[0].filterType")

	expr := "a > 5 AND region IN ('eu','us') AND b IS NOT NULL"
	r := s.do(t, "PUT", "/v1/groups/eu", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders", "filterType": "SQL92", "filter": expr}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	var g struct {
		Subscriptions []struct {
			Topic, Filter, FilterType string
		} `json:"subscriptions"`
	}
	r.JSON(t, &g)
	if len(g.Subscriptions) != 1 || g.Subscriptions[0].FilterType != "SQL92" || g.Subscriptions[0].Filter != expr {
		t.Fatalf("group %s: want filterType SQL92 and the expression", r.Body)
	}
	want(t, s.do(t, "PUT", "/v1/groups/all", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), http.StatusCreated)
	r = s.do(t, "GET", "/v1/groups/all", nil)
	if !strings.Contains(string(r.Body), `"filterType":"TAG"`) {
		t.Fatalf("a tag group shows filterType TAG: %s", r.Body)
	}

	msgs := []map[string]any{
		{"body": "match-1", "properties": map[string]string{"a": "10", "region": "eu", "b": "x"}},
		{"body": "match-2", "properties": map[string]string{"a": "6.5", "region": "us", "b": ""}},
		{"body": "low", "properties": map[string]string{"a": "5", "region": "eu", "b": "x"}},
		{"body": "no-b", "properties": map[string]string{"a": "10", "region": "eu"}},
		{"body": "no-a", "properties": map[string]string{"region": "eu", "b": "x"}},
		{"body": "text-a", "properties": map[string]string{"a": "ten", "region": "eu", "b": "x"}},
		{"body": "region-apac", "properties": map[string]string{"a": "10", "region": "apac", "b": "x"}},
		{"body": "nothing"},
	}
	want(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": msgs}), http.StatusCreated)

	// The unfiltered group sees all 8, so every message is readable; the
	// SQL group must then see exactly the two matches and nothing more.
	var all []string
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, m := range receive(t, s, "all", map[string]any{"maxMessages": 32, "waitSeconds": 1}) {
			all = append(all, m.Body)
		}
		if len(all) < len(msgs) {
			return fmt.Errorf("unfiltered group received %d of %d", len(all), len(msgs))
		}
		return nil
	})
	var got []string
	var handles []string
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, m := range receive(t, s, "eu", map[string]any{"maxMessages": 32, "waitSeconds": 1}) {
			got = append(got, m.Body)
			handles = append(handles, m.ReceiptHandle)
		}
		if len(got) < 2 {
			return fmt.Errorf("SQL group received %v", got)
		}
		return nil
	})
	ack(t, s, "eu", handles...)
	if extra := receive(t, s, "eu", map[string]any{"maxMessages": 32, "waitSeconds": 1}); len(extra) > 0 {
		got = append(got, extra[0].Body)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"match-1", "match-2"}) {
		t.Fatalf("SQL group received %v, want [match-1 match-2]", got)
	}
}
