package main

import (
	"slices"
	"testing"

	"github.com/mqgate/mqgate/core/store"
)

// TestBucketOwners: the server's packages own these buckets of the file
// besides the store's mq. ones, one owner each (store.Register panics at
// start-up on a second), as core/store/doc.go lists them.
func TestBucketOwners(t *testing.T) {
	want := []string{
		"dedup.expiry (core/engine)", "dedup.records (core/engine)", "dlq.redriven (core/engine)",
		"groups.config (core/groups)", "groups.offsets (core/groups)", "groups.parks (core/groups)", "groups.starts (core/groups)",
		"jobs (core/engine)", "sched.offsets (core/engine)", "sched.sweep (core/engine)",
		"sched.timerids (core/engine)", "sched.timers (core/engine)", "sched.timertopics (core/engine)",
	}
	if got := store.Registered(); !slices.Equal(got, want) {
		t.Fatalf("registered buckets:\n got %q\nwant %q", got, want)
	}
}
