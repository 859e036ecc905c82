package main

import (
	"bytes"
	"os"
	"testing"
)

// TestCommittedDashboardIsFresh: deploy/grafana/mqgate.json is what this
// program builds (`make dashboard` regenerates it).
func TestCommittedDashboardIsFresh(t *testing.T) {
	b, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile("../../grafana/mqgate.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, old) {
		t.Fatal("deploy/grafana/mqgate.json is stale: run `make dashboard` and commit it")
	}
}
