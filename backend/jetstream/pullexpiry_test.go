package jetstream_test

import (
	"fmt"
	"testing"
)

// A long poll that answered empty leaves no waiting pull behind on the
// server: a message published just after it goes to the next receive,
// through the other instance, not into the first instance's stash (where
// only a receive on that instance, or the end of the ack wait, would
// free it).
func TestEndedReceiveLeavesNoPull(t *testing.T) {
	e := newEnv(t)
	e.topic("late", 1)
	e.group("late-g", groupCfg("late", map[string]any{"invisibleSeconds": 30}))
	a, b := e.gws[0].URL(), e.gws[1].URL()
	for i := range 5 {
		if got := e.receive(a, "late-g", 1, 1, 30); len(got) != 0 {
			t.Fatalf("round %d: empty group delivered %+v", i, got)
		}
		id := e.publish(a, "late", map[string]any{"body": fmt.Sprintf("m%d", i)})
		got := e.receive(b, "late-g", 1, 3, 30)
		if len(got) != 1 || got[0].MessageID != id {
			t.Fatalf("round %d: the other instance received %+v, want %s (taken by the first one's ended long poll?)", i, got, id)
		}
		if st := status(e.settle(b, "late-g", "ack", []string{got[0].ReceiptHandle}, nil)); st[0] != "ok" {
			t.Fatalf("round %d: ack = %v", i, st)
		}
	}
}
