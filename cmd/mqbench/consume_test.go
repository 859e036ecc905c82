package main

import "testing"

func TestConsumeAcksEveryMessageOnce(t *testing.T) {
	for _, client := range []string{"raw", "std"} {
		t.Run(client, func(t *testing.T) { testConsumeAcksEveryMessageOnce(t, client) })
	}
}

func testConsumeAcksEveryMessageOnce(t *testing.T, client string) {
	g := startFakeGateway(t, fakeOptions{})
	var rep ConsumeReport
	runMode(t, &rep, "consume", "--url", g.srv.URL, "--count", "2000", "--consumers", "4", "--wait", "1", "--client", client)
	r := rep.Runs[0]
	if r.Acked != 2000 || r.Unique != 2000 || r.Deliveries != 2000 || r.Duplicates != 0 || r.Missing != 0 || r.TimedOut {
		t.Fatalf("run = %+v, want 2000 delivered and acked once", r)
	}
	if r.AckStatus["ok"] != 2000 || r.AckedPerSec <= 0 || r.ReceiveLatency.Count == 0 || r.AckLatency.Count == 0 {
		t.Fatalf("run = %+v", r)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.acked) != 2000 {
		t.Fatalf("server saw %d distinct handles acked, want 2000", len(g.acked))
	}
}

// --ack-batch 1 through the raw client: one request per handle, each
// answer read back for its status.
func TestConsumeOneAckPerMessage(t *testing.T) {
	g := startFakeGateway(t, fakeOptions{})
	var rep ConsumeReport
	runMode(t, &rep, "consume", "--url", g.srv.URL, "--count", "500", "--consumers", "2", "--wait", "1", "--ack-batch", "1")
	r := rep.Runs[0]
	if r.Acked != 500 || r.AckStatus["ok"] != 500 || r.AckLatency.Count != 500 || r.Duplicates != 0 {
		t.Fatalf("run = %+v, want 500 acks of one handle each, all ok", r)
	}
}

func TestConsumeCountsDuplicates(t *testing.T) {
	g := startFakeGateway(t, fakeOptions{dupEvery: 10}) // every 10th message twice
	var rep ConsumeReport
	runMode(t, &rep, "consume", "--url", g.srv.URL, "--count", "1000", "--consumers", "3", "--wait", "1")
	r := rep.Runs[0]
	// The run ends when every id is acked; a second copy still queued
	// then is not received, so duplicates are at most 100.
	if r.Acked != 1000 || r.Missing != 0 || r.Duplicates < 1 || r.Duplicates > 100 || r.Deliveries != 1000+r.Duplicates {
		t.Fatalf("run = %+v, want 1000 acked and 1..100 duplicates", r)
	}
}

// Messages the server loses are reported missing once --run-timeout ends
// the wait for them.
func TestConsumeReportsMissingOnTimeout(t *testing.T) {
	g := startFakeGateway(t, fakeOptions{dropEvery: 25}) // 4 of 100 are never delivered
	var rep ConsumeReport
	runMode(t, &rep, "consume", "--url", g.srv.URL, "--count", "100", "--consumers", "2", "--wait", "0",
		"--run-timeout", "300ms")
	r := rep.Runs[0]
	if !r.TimedOut || r.Missing != 4 || r.Acked != 96 {
		t.Fatalf("run = %+v, want a timeout with 4 missing", r)
	}
}
