package main

import (
	"bytes"
	"testing"
)

// TestReportTables pins the text tables of consume, latency and webhook:
// a row per run, the median's row when there are several, and the notes
// under the table.
func TestReportTables(t *testing.T) {
	lat := LatencySummary{Count: 5, P50Ms: 1.5, P90Ms: 2, P99Ms: 3, MaxMs: 4}
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{"consume", func(b *bytes.Buffer) error {
			return ConsumeReport{Config: map[string]any{"count": 2}, Runs: []ConsumeRun{
				{AckedPerSec: 100, ReceivedPerSec: 110, Duplicates: 1, ReceiveLatency: lat, AckLatency: lat},
				{AckedPerSec: 200, Missing: 3, TimedOut: true, FirstError: "boom", Errors: statusCounts{"503": 2}},
			}, Median: ConsumeRun{AckedPerSec: 150}}.write(b, false)
		},
			"count=2\n          acked/s  received/s  dup  missing  recv p50  recv p99  ack p50  ack p99  empty recv  pub msgs/s  server cpu  cpu/msg µs  errors\n   run 1      100         110    1        0      1.50      3.00     1.50     3.00           0           0           -           -       -\n   run 2      200           0    0        3      0.00      0.00     0.00     0.00           0           0           -           -   503:2\n  median      150           0    0        0      0.00      0.00     0.00     0.00           0           0           -           -       -\nrun 2 timed out with 3 messages unacked\nrun 2 first error: boom\n(latencies in ms, per request)\n"},
		{"latency", func(b *bytes.Buffer) error {
			return LatencyReport{Config: map[string]any{"rate": 9}, Runs: []LatencyRun{
				{PacedStats: PacedStats{PublishRate: 9, EndToEnd: lat, PublishLatency: lat, AfterPublish: lat, Late: 1}},
				{FirstError: "boom", Errors: statusCounts{"transport": 1}},
			}, Median: LatencyRun{PacedStats: PacedStats{PublishRate: 4.5}}}.write(b, false)
		},
			"rate=9\n          pub msgs/s  e2e p50  e2e p90  e2e p99  e2e max  pub p50  pub p99  after-pub p50  after-pub p99  measured  missing  dup  late       errors\n   run 1           9     1.50     2.00     3.00     4.00     1.50     3.00           1.50           3.00         5        0    0     1            -\n   run 2           0     0.00     0.00     0.00     0.00     0.00     0.00           0.00           0.00         0        0    0     0  transport:1\n  median           4     0.00     0.00     0.00     0.00     0.00     0.00           0.00           0.00         0        0    0     0            -\nrun 2 first error: boom\n(latencies in ms; e2e = publish request start to receive answer; pub = the publish request;\n after-pub = publish answered to receive answer, the consume path without the commit)\n"},
		{"webhook", func(b *bytes.Buffer) error {
			return WebhookReport{Config: map[string]any{"rate": 9}, Runs: []WebhookRun{
				{PacedStats: PacedStats{PublishRate: 9, EndToEnd: lat}, Requests: 7, BadSignatures: 1, FirstError: "webhook: bad"},
			}}.write(b, false)
		},
			"rate=9\n         pub msgs/s  e2e p50  e2e p90  e2e p99  e2e max  pub p99  after-pub p50  after-pub p99  measured  missing  dup  hook reqs  bad sig  late  errors\n  run 1           9     1.50     2.00     3.00     4.00     0.00           0.00           0.00         5        0    0          7        1     0       -\nrun 1 first error: webhook: bad\n(latencies in ms; e2e = publish request start to webhook arrival;\n after-pub = publish answered to webhook arrival, the push path without the commit)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
				t.Logf("%q", b.String())
			}
		})
	}
}
