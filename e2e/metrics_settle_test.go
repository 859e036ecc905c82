package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestSettleMetrics: a receive and an ack of the real binary show in the
// consumption series the dashboard and alerts use: deliveries, acks and
// nacks by group, the publish→ack and delivery→settle histograms, and the
// data directory's file system and the store's commit health.
func TestSettleMetrics(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 1)
	r := s.do(t, "PUT", "/v1/groups/billing", map[string]any{
		"subscriptions": []map[string]string{{"topic": "orders"}},
		"consumeFrom":   map[string]string{"position": "FIRST_OFFSET"},
	})
	want(t, r, http.StatusCreated)
	for i := range 2 {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint("m", i)}), http.StatusCreated)
	}
	// A receive may answer with the first message alone (leased from then
	// on), so the two are gathered over the receives.
	var got struct {
		Messages []struct{ ReceiptHandle string }
	}
	checkFor(t, 10*time.Second, 0, func() error {
		var one struct {
			Messages []struct{ ReceiptHandle string }
		}
		s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{"maxMessages": 2, "waitSeconds": 1}).JSON(t, &one)
		got.Messages = append(got.Messages, one.Messages...)
		if len(got.Messages) < 2 {
			return fmt.Errorf("received %d of 2", len(got.Messages))
		}
		return nil
	})
	time.Sleep(50 * time.Millisecond) // a publish→ack time well above 0
	want(t, s.do(t, "POST", "/v1/groups/billing/ack", map[string]any{"receiptHandles": []string{got.Messages[0].ReceiptHandle}}), http.StatusOK)
	want(t, s.do(t, "POST", "/v1/groups/billing/nack", map[string]any{"receiptHandles": []string{got.Messages[1].ReceiptHandle}}), http.StatusOK)

	m := scrape(t, s)
	for series, wantV := range map[string]float64{
		`mqgate_settled_messages_total{group="billing",result="acked"}`:           1,
		`mqgate_settled_messages_total{group="billing",result="nacked"}`:          1,
		`mqgate_publish_to_ack_seconds_count{group="billing"}`:                    1,
		`mqgate_delivery_to_settle_seconds_count{group="billing",result="acked"}`: 1,
		`mqgate_store_commit_failures_total`:                                      0,
		`mqgate_store_commit_failing`:                                             0,
	} {
		if v, ok := m[series]; !ok || v != wantV {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, wantV)
		}
	}
	if v := m[`mqgate_delivered_messages_total{group="billing"}`]; v < 2 {
		t.Errorf("delivered %v, want at least 2", v)
	}
	if v := m[`mqgate_publish_to_ack_seconds_sum{group="billing"}`]; v < 0.05 || v > 30 {
		t.Errorf("publish→ack sum %vs, want about the time between publish and ack", v)
	}
	if m[`mqgate_publish_to_ack_seconds_bucket{group="billing",le="0.025"}`] != 0 || m[`mqgate_publish_to_ack_seconds_bucket{group="billing",le="+Inf"}`] != 1 {
		t.Errorf("publish→ack buckets: the one ack came ≥ 50 ms after its publish")
	}
	if avail, size := m["mqgate_data_fs_avail_bytes"], m["mqgate_data_fs_size_bytes"]; avail <= 0 || size < avail {
		t.Errorf("data fs avail %v size %v", avail, size)
	}
}
