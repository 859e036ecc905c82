package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
)

// `mqbench jetstream --runs 2` runs every picked system twice on the
// in-process cluster and answers one row per system: the medians, both
// rounds' figures and the ratios to the direct client (1 for itself).
func TestJetStreamBenchRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	var out bytes.Buffer
	err := jetstreamMain(context.Background(), []string{"--only", "direct", "--runs", "2", "--duration", "300ms",
		"--messages", "40", "--rate", "20", "--concurrency", "4", "--json"}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var rows []jsBenchRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(rows) != 1 || rows[0].Rounds != 2 || len(rows[0].Runs) != 2 {
		t.Fatalf("rows = %+v, want one system with 2 rounds", rows)
	}
	r := rows[0]
	if r.PublishPerSec <= 0 || r.ReceiveAckPerSec <= 0 || r.Latency.Count == 0 || r.PerReceive <= 0 {
		t.Fatalf("empty figures: %+v", r)
	}
	if r.VsDirect.Publish != 1 || r.VsDirect.ReceiveAck != 1 {
		t.Fatalf("the direct client against itself = %+v, want 1", r.VsDirect)
	}
}
