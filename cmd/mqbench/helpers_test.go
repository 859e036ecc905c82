package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// startTestBaseline runs a baseline server in-process on a free port.
func startTestBaseline(t *testing.T) *baselineServer {
	t.Helper()
	b, err := startBaseline("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("close baseline: %v", err)
		}
	})
	return b
}

// runMode runs mqbench in-process with args plus --json and decodes its
// report into out; it fails the test on a non-zero exit.
func runMode(t *testing.T, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, append(args, "--json"), &stdout, &stderr); code != 0 {
		t.Fatalf("mqbench %v: exit %d\nstderr: %s\nstdout: %s", args, code, stderr.String(), stdout.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("mqbench %v: bad JSON report: %v\n%s", args, err, stdout.String())
	}
}
