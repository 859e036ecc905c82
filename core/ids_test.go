package core

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"
)

// TestNewMessageIDs: a batch's ids are the ids n single calls would have
// given: 26 characters, the accept time first, the process bytes, then
// consecutive counters, in order.
func TestNewMessageIDs(t *testing.T) {
	now := time.UnixMilli(1700000000123)
	single := NewMessageID(now)
	ids := make([]string, 100)
	NewMessageIDs(now, ids)
	after := NewMessageID(now)
	all := append(append([]string{single}, ids...), after)
	var prev uint64
	for i, id := range all {
		if len(id) != idLen {
			t.Fatalf("id %q has %d characters", id, len(id))
		}
		raw, err := idEncoding.DecodeString(id)
		if err != nil || len(raw) != 16 {
			t.Fatalf("id %q: %v", id, err)
		}
		ms := binary.BigEndian.Uint64(append([]byte{0, 0}, raw[:6]...))
		if int64(ms) != now.UnixMilli() || string(raw[6:10]) != string(idProcess[:]) {
			t.Fatalf("id %q: time %d, process %x", id, ms, raw[6:10])
		}
		n := binary.BigEndian.Uint64(append([]byte{0, 0}, raw[10:]...))
		if i > 0 && n != (prev+1)&(1<<48-1) {
			t.Fatalf("id %d: counter %d after %d", i, n, prev)
		}
		prev = n
	}
	if len(slices.Compact(slices.Sorted(slices.Values(all)))) != len(all) {
		t.Fatal("duplicate ids")
	}
	NewMessageIDs(now, nil) // no ids: nothing to do
}
