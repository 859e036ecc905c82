package main

import (
	"testing"
)

// compare re-executes the (test) binary as baseline-server and runs A/B
// rounds; an in-process baseline stands in for the gateway here.
func TestCompareStartsBaselineProcess(t *testing.T) {
	t.Setenv(envRunMain, "1")
	gw := startTestBaseline(t)
	var rep CompareReport
	runMode(t, &rep, "compare", "--url", gw.URL(), "--runs", "2", "--count", "300",
		"--concurrency", "4", "--warmup", "0")
	if len(rep.Baseline) != 2 || len(rep.Gateway) != 2 {
		t.Fatalf("runs: %d baseline, %d gateway, want 2 each", len(rep.Baseline), len(rep.Gateway))
	}
	for _, r := range append(rep.Baseline, rep.Gateway...) {
		if r.Messages != 300 || r.Failed != 0 {
			t.Fatalf("%s run = %+v", r.Target, r)
		}
	}
	if got := gw.seq.Load(); got != 600 {
		t.Fatalf("stand-in gateway answered %d publishes, want 600", got)
	}
	if rep.Config["baselineUrl"] == gw.URL() || rep.Config["baselineUrl"] == "" {
		t.Fatalf("baseline was not a separate server: %v", rep.Config)
	}
	if rep.Ratio <= 0 {
		t.Fatalf("ratio = %v", rep.Ratio)
	}
}
