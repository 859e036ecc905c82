package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
)

// runJSBenchMain runs `mqbench jetstream --json` with args and answers its rows.
func runJSBenchMain(t *testing.T, args ...string) []jsBenchRow {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	var out bytes.Buffer
	if err := jetstreamMain(context.Background(), append(args, "--json"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var rows []jsBenchRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	return rows
}

// `mqbench jetstream --runs 2` runs every picked system twice on the
// in-process cluster and answers one row per system: the medians, both
// rounds' figures and the ratios to the synchronous direct client (1 for
// itself, whatever the order of the rows).
func TestJetStreamBenchRuns(t *testing.T) {
	rows := runJSBenchMain(t, "--only", "direct", "--runs", "2", "--duration", "300ms",
		"--messages", "40", "--rate", "20", "--concurrency", "4")
	if len(rows) != 2 {
		t.Fatalf("rows = %+v, want the direct client's two rows (sync, async acks)", rows)
	}
	for _, r := range rows {
		if r.Rounds != 2 || len(r.Runs) != 2 {
			t.Fatalf("%s: %d rounds, %d runs, want 2", r.System, r.Rounds, len(r.Runs))
		}
		if r.PublishPerSec <= 0 || r.ReceiveAckPerSec <= 0 || r.Latency.Count == 0 || r.PerReceive <= 0 || r.PublishErrors != 0 {
			t.Fatalf("%s: empty figures or errors: %+v", r.System, r)
		}
	}
	byName := map[string]jsBenchRow{rows[0].System: rows[0], rows[1].System: rows[1]}
	sync, ok := byName[directSyncLabel]
	if !ok {
		t.Fatalf("no row %q in %+v", directSyncLabel, rows)
	}
	if sync.VsDirect.Publish != 1 || sync.VsDirect.ReceiveAck != 1 {
		t.Fatalf("the direct client against itself = %+v, want 1", sync.VsDirect)
	}
	for _, r := range rows {
		if want := r.PublishPerSec / sync.PublishPerSec; r.VsDirect.Publish != want {
			t.Fatalf("%s: publish ratio %v, want %v (against the synchronous client)", r.System, r.VsDirect.Publish, want)
		}
	}
}

// The publish stream row publishes through the proxy over the gateways'
// WebSocket streams: every publish confirmed, none failed, and the
// latency phase (one publish at a time) answers too.
func TestJetStreamBenchPublishStream(t *testing.T) {
	rows := runJSBenchMain(t, "--only", "publish stream", "--duration", "500ms",
		"--messages", "100", "--rate", "20", "--concurrency", "4")
	if len(rows) != 1 {
		t.Fatalf("rows = %+v, want the publish stream's", rows)
	}
	r := rows[0]
	if r.PublishPerSec <= 0 || r.PublishErrors != 0 || r.ReceiveAckPerSec <= 0 || r.Latency.Count == 0 || r.PublishLatency.Count == 0 {
		t.Fatalf("empty figures or errors: %+v", r)
	}
}
