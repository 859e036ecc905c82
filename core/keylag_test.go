package core

import (
	"testing"
	"time"
)

// A tally counts per queue and key with the oldest message; the sort is
// oldest first, then key, then queue, and the limit cuts after it.
func TestKeyLagTallyAndSort(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q0, q1 := MessageQueue{Topic: "t", QueueID: 0}, MessageQueue{Topic: "t", QueueID: 1}
	msg := func(id, key string, at time.Duration) *Message {
		return &Message{ID: id, ShardingKey: key, BornAt: t0.Add(at)}
	}
	var tally KeyLagTally
	tally.Add(q0, msg("a2", "a", 2*time.Second))
	tally.Add(q0, msg("a1", "a", time.Second))
	tally.Add(q1, msg("a9", "a", time.Second)) // same key, other queue: its own row
	tally.Add(q0, msg("b1", "b", time.Second))
	tally.Add(q1, msg("c0", "c", 0))
	got := SortKeyLags(tally.Rows(), 0)
	want := []KeyLag{
		{Queue: q1, ShardingKey: "c", Depth: 1, Oldest: t0, OldestID: "c0"},
		{Queue: q0, ShardingKey: "a", Depth: 2, Oldest: t0.Add(time.Second), OldestID: "a1"},
		{Queue: q1, ShardingKey: "a", Depth: 1, Oldest: t0.Add(time.Second), OldestID: "a9"},
		{Queue: q0, ShardingKey: "b", Depth: 1, Oldest: t0.Add(time.Second), OldestID: "b1"},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if cut := SortKeyLags(tally.Rows(), 2); len(cut) != 2 || cut[1].OldestID != "a1" {
		t.Errorf("limit 2: %+v", cut)
	}
}
