package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDeployMetricNames: every mqgate_ series that the Grafana dashboard
// (deploy/grafana) and the alerting rules (deploy/prometheus) query is one
// the real binary exports, once it has published, consumed, dead-lettered
// and pushed to a webhook. A renamed metric fails here, not on the first
// day someone imports the dashboard.
func TestDeployMetricNames(t *testing.T) {
	used := map[string][]string{} // metric family -> files
	nameRe := regexp.MustCompile(`\bmqgate_[a-z0-9_]+`)
	files, _ := filepath.Glob("../deploy/grafana/*.json")
	rules, _ := filepath.Glob("../deploy/prometheus/*.yml")
	files = append(files, rules...)
	if len(files) < 2 {
		t.Fatalf("deploy files %v", files)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nameRe.FindAllString(string(raw), -1) {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if strings.HasSuffix(n, suf) && n != "mqgate_store_commit_groups_total" {
					n = strings.TrimSuffix(n, suf)
				}
			}
			if !slices.Contains(used[n], f) {
				used[n] = append(used[n], f)
			}
		}
	}

	s := startPushServer(t, t.TempDir())
	createTopic(t, s, "orders", 1)
	createTopic(t, s, "hooks", 1)
	want(t, s.do(t, "PUT", "/v1/groups/billing", map[string]any{
		"subscriptions":     []map[string]string{{"topic": "orders"}},
		"consumeFrom":       map[string]string{"position": "FIRST_OFFSET"},
		"maxReconsumeTimes": 0,
	}), http.StatusCreated)
	rc := newReceiver(t, nil)
	putPushGroup(t, s, "hooked", "hooks", map[string]any{"url": rc.srv.URL, "secret": hookSecret}, nil)
	for i := range 2 {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint("m", i)}), http.StatusCreated)
	}
	want(t, s.do(t, "POST", "/v1/topics/hooks/messages", map[string]any{"body": "pushed"}), http.StatusCreated)
	var got struct {
		Messages []struct{ ReceiptHandle string }
	}
	checkFor(t, 10*time.Second, 0, func() error {
		s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{"maxMessages": 2, "waitSeconds": 1}).JSON(t, &got)
		if len(got.Messages) < 2 {
			return fmt.Errorf("received %d of 2", len(got.Messages))
		}
		return nil
	})
	want(t, s.do(t, "POST", "/v1/groups/billing/ack", map[string]any{"receiptHandles": []string{got.Messages[0].ReceiptHandle}}), http.StatusOK)
	want(t, s.do(t, "POST", "/v1/groups/billing/nack", map[string]any{"receiptHandles": []string{got.Messages[1].ReceiptHandle}, "delayLevel": -1}), http.StatusOK)
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if rc.ackedCount() < 1 {
			return fmt.Errorf("the webhook has not acked yet")
		}
		return nil
	})

	var exported []string
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		exported = exported[:0]
		for line := range strings.SplitSeq(string(s.do(t, "GET", "/metrics", nil).Body), "\n") {
			if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
				exported = append(exported, strings.Fields(name)[0])
			}
		}
		for n := range used {
			if why, ok := onlyWithConfig[n]; ok {
				t.Logf("%s: not checked here (%s)", n, why)
				continue
			}
			if !slices.Contains(exported, n) {
				return fmt.Errorf("%s (used in %v) is not on /metrics", n, used[n])
			}
		}
		return nil
	})
	if len(used) < 25 {
		t.Fatalf("only %d metric names found in %v", len(used), files)
	}
}

// onlyWithConfig are the series the dashboard reads that exist only when
// the server is configured for them, with the test that finds them on
// /metrics instead.
var onlyWithConfig = map[string]string{
	"mqgate_quota_requests_total": "series only for keys with limits; TestQuotaTwoKeysOneTopic finds them",
}
