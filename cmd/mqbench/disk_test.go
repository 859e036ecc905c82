package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
)

// TestDiskMeasuresSyncs: the disk mode syncs at the paced rate in the
// directory it is given, reports a distribution per run and their
// medians, and leaves no file behind.
func TestDiskMeasuresSyncs(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"disk", "--dir", dir, "--rate", "200", "--duration", "300ms", "--runs", "2", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep DiskReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rep.Runs))
	}
	for i, r := range rep.Runs {
		// 60 paced at 200/s in 300 ms; a slow disk may hold fewer.
		if r.Syncs.Count < 5 || r.Syncs.Count > 61 || r.Syncs.P50Ms <= 0 || r.Syncs.P99Ms < r.Syncs.P50Ms || r.Syncs.MaxMs < r.P999Ms {
			t.Fatalf("run %d: %+v", i+1, r)
		}
	}
	if rep.Median.Syncs.P99Ms <= 0 {
		t.Fatalf("median %+v", rep.Median)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	if code := run(context.Background(), []string{"disk", "--rate", "0"}, &out, &errb); code != 2 {
		t.Fatalf("--rate 0: exit %d, want 2", code)
	}
}
