package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestGroupLagMetrics checks the per-group lag and oldest-unacked age
// gauges on /metrics follow publishing and acking.
func TestGroupLagMetrics(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 2)
	r := s.do(t, "PUT", "/v1/groups/billing", map[string]any{
		"subscriptions": []map[string]string{{"topic": "orders"}},
		"consumeFrom":   map[string]string{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("no gateway wired")
	}
	want(t, r, http.StatusCreated)
	for i := range 3 {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint("m", i)}), http.StatusCreated)
	}
	gauge := func(name string) (float64, bool) {
		body := string(s.do(t, "GET", "/metrics", nil).Body)
		m := regexp.MustCompile(`(?m)^` + name + `\{group="billing",topic="orders"\} (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			return 0, false
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v, true
	}
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if v, ok := gauge("mqgate_group_lag"); !ok || v != 3 {
			return fmt.Errorf("mqgate_group_lag %v (present %v), want 3", v, ok)
		}
		if v, ok := gauge("mqgate_group_oldest_unacked_age_seconds"); !ok || v <= 0 {
			return fmt.Errorf("oldest unacked age %v (present %v), want > 0", v, ok)
		}
		return nil
	})
	// Receive and ack everything: the lag goes to 0.
	var handles []string
	checkFor(t, 10*time.Second, 0, func() error {
		var got struct {
			Messages []struct{ ReceiptHandle string }
		}
		s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{"maxMessages": 10, "waitSeconds": 1}).JSON(t, &got)
		for _, m := range got.Messages {
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) < 3 {
			return fmt.Errorf("received %d of 3", len(handles))
		}
		return nil
	})
	want(t, s.do(t, "POST", "/v1/groups/billing/ack", map[string]any{"receiptHandles": handles}), http.StatusOK)
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if v, _ := gauge("mqgate_group_lag"); v != 0 {
			return fmt.Errorf("lag %v after acking all", v)
		}
		if v, _ := gauge("mqgate_group_oldest_unacked_age_seconds"); v != 0 {
			return fmt.Errorf("oldest age %v after acking all", v)
		}
		return nil
	})
	body := string(s.do(t, "GET", "/metrics", nil).Body)
	if !regexp.MustCompile(`(?m)^mqgate_group_lag_series_dropped 0$`).MatchString(body) {
		t.Fatal("no mqgate_group_lag_series_dropped 0")
	}
}

// TestGroupLagFilteredTail: a tail the group's filter skips, published
// while a matching message is leased, is finished once that message is
// acked: the committed offset moves past it and the lag gauges read 0
// (they stayed at 5 and a growing age, issue 23 item 3).
func TestGroupLagFilteredTail(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 1)
	r := s.do(t, "PUT", "/v1/groups/billing", map[string]any{
		"subscriptions": []map[string]string{{"topic": "orders", "filter": "red"}},
		"consumeFrom":   map[string]string{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("no gateway wired")
	}
	want(t, r, http.StatusCreated)
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "r0", "tags": "red"}), http.StatusCreated)
	var got struct {
		Messages []struct{ ReceiptHandle string }
	}
	s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{"maxMessages": 10, "waitSeconds": 5}).JSON(t, &got)
	if len(got.Messages) != 1 {
		t.Fatalf("received %d, want 1", len(got.Messages))
	}
	for i := range 5 {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint("b", i), "tags": "blue"}), http.StatusCreated)
	}
	// Nothing matching is waiting: a receive finds nothing (the pull has
	// read the blue tail with r0 still leased).
	var none struct{ Messages []json.RawMessage }
	s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{"maxMessages": 10, "waitSeconds": 1}).JSON(t, &none)
	if len(none.Messages) != 0 {
		t.Fatalf("received %d blue messages", len(none.Messages))
	}
	want(t, s.do(t, "POST", "/v1/groups/billing/ack", map[string]any{"receiptHandles": []string{got.Messages[0].ReceiptHandle}}), http.StatusOK)
	gauge := func(name string) float64 {
		body := string(s.do(t, "GET", "/metrics", nil).Body)
		m := regexp.MustCompile(`(?m)^` + name + `\{group="billing",topic="orders"\} (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			return -1
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		var offs struct {
			Offsets []struct {
				Topic           string
				CommittedOffset int64
				Lag             int64
			}
		}
		s.do(t, "GET", "/v1/groups/billing/offsets", nil).JSON(t, &offs)
		for _, o := range offs.Offsets {
			if o.Topic == "orders" && (o.CommittedOffset != 6 || o.Lag != 0) {
				return fmt.Errorf("orders: committed %d, lag %d; want 6, 0", o.CommittedOffset, o.Lag)
			}
		}
		if v := gauge("mqgate_group_lag"); v != 0 {
			return fmt.Errorf("mqgate_group_lag %v, want 0", v)
		}
		if v := gauge("mqgate_group_oldest_unacked_age_seconds"); v != 0 {
			return fmt.Errorf("oldest unacked age %v, want 0", v)
		}
		return nil
	})
}
