package main

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	// 1..100 ms: the p-th percentile is p ms by nearest rank.
	d := make([]time.Duration, 100)
	for i := range d {
		d[i] = time.Duration(i+1) * time.Millisecond
	}
	rand.Shuffle(len(d), func(i, j int) { d[i], d[j] = d[j], d[i] })
	s := summarize(d)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p50", s.P50Ms, 50}, {"p90", s.P90Ms, 90}, {"p99", s.P99Ms, 99},
		{"max", s.MaxMs, 100}, {"mean", s.MeanMs, 50.5},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Count != 100 {
		t.Errorf("count = %d, want 100", s.Count)
	}
}

func TestPercentileSmallSamples(t *testing.T) {
	cases := []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{[]time.Duration{7}, 0, 7},
		{[]time.Duration{7}, 99, 7},
		{[]time.Duration{1, 2}, 50, 1},
		{[]time.Duration{1, 2}, 51, 2},
		{[]time.Duration{1, 2, 3}, 99, 3},
		{[]time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
		{[]time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 91, 10},
	}
	for i, c := range cases {
		if got := percentile(c.in, c.p); got != c.want {
			t.Errorf("case %d: percentile(%v, %v) = %v, want %v", i, c.in, c.p, got, c.want)
		}
	}
}

func TestSummarizeEmpty(t *testing.T) {
	if got := summarize(nil); got != (LatencySummary{}) {
		t.Fatalf("summarize(nil) = %+v, want zero", got)
	}
}

func TestMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for i, c := range cases {
		in := append([]float64(nil), c.in...)
		if got := median(in); got != c.want {
			t.Errorf("case %d: median(%v) = %v, want %v", i, c.in, got, c.want)
		}
		for j := range in {
			if in[j] != c.in[j] {
				t.Errorf("case %d: median reordered its input", i)
			}
		}
	}
}

func TestMedianRun(t *testing.T) {
	runs := []PublishRun{
		{Target: "g", MsgsPerSec: 100, Messages: 10, Latency: LatencySummary{P99Ms: 9}},
		{Target: "g", MsgsPerSec: 300, Messages: 30, Latency: LatencySummary{P99Ms: 1}},
		{Target: "g", MsgsPerSec: 200, Messages: 20, Latency: LatencySummary{P99Ms: 5}},
	}
	m := medianRun(runs)
	if m.MsgsPerSec != 200 || m.Messages != 20 || m.Latency.P99Ms != 5 || m.Target != "g" {
		t.Fatalf("medianRun = %+v", m)
	}
}

func TestStatusCounts(t *testing.T) {
	s := statusCounts{}
	s.add(503, 2)
	s.add(0, 1)
	s.add(429, 1)
	o := statusCounts{}
	o.add(503, 1)
	s.merge(o)
	if got, want := s.String(), "429:1 503:3 net:1"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if got := (statusCounts{}).String(); got != "-" {
		t.Fatalf("empty String() = %q", got)
	}
}

func TestRate(t *testing.T) {
	if got := rate(500, 2*time.Second); got != 250 {
		t.Fatalf("rate = %v", got)
	}
	if got := rate(5, 0); got != 0 {
		t.Fatalf("rate over 0s = %v", got)
	}
}

func TestPIDCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	before, ok := pidCPU(os.Getpid())
	if !ok {
		t.Fatal("pidCPU(self) not available")
	}
	// Burn some CPU so the counter (10ms ticks) moves.
	deadline := time.Now().Add(60 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, _ := pidCPU(os.Getpid())
	if after <= before {
		t.Fatalf("CPU did not grow: %v → %v", before, after)
	}
	if _, ok := pidCPU(-1); ok {
		t.Fatal("pidCPU(-1) reported a value")
	}
}
