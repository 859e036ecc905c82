package e2e

import (
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
