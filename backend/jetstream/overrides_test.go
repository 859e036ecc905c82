package jetstream_test

import (
	"fmt"
	"testing"
	"time"
)

// A settle reads lease overrides only where one may exist
// (overrides.go): acks of deliveries nobody nacked or extended read
// none, and a nack on A is still seen by an ack on B at once (the
// barrier), which answers expired.
func TestSettleReadsOnlyOverridden(t *testing.T) {
	e := newEnv(t)
	a, b := e.gws[0], e.gws[1]
	e.topic("ovr", 2)
	e.group("ovr-g", groupCfg("ovr", map[string]any{"invisibleSeconds": 30}))
	// Messages stored within the clock-skew margin of a view's start
	// are always read: let both views be older than that.
	time.Sleep(2100 * time.Millisecond)
	for i := 0; i < 4; i++ {
		e.publish(a.URL(), "ovr", map[string]any{"body": fmt.Sprint(i)})
	}
	var hs []string
	for deadline := time.Now().Add(10 * time.Second); len(hs) < 4 && time.Now().Before(deadline); {
		for _, m := range e.receive(a.URL(), "ovr-g", 4-len(hs), 2, 0) {
			hs = append(hs, m.ReceiptHandle)
		}
	}
	if len(hs) != 4 {
		t.Fatalf("received %d of 4", len(hs))
	}
	reads0, skips0 := b.b.OverrideCounts()
	if st := status(e.settle(b.URL(), "ovr-g", "ack", hs[:2], nil)); st[0] != "ok" || st[1] != "ok" {
		t.Fatalf("acks on B = %v", st)
	}
	reads, skips := b.b.OverrideCounts()
	if reads != reads0 || skips != skips0+2 {
		t.Fatalf("acks of two untouched deliveries: %d override reads, %d skipped; want 0 and 2", reads-reads0, skips-skips0)
	}
	if st := status(e.settle(a.URL(), "ovr-g", "nack", hs[2:3], map[string]any{"delayLevel": 1})); st[0] != "ok" {
		t.Fatalf("nack on A = %v", st)
	}
	if st := status(e.settle(b.URL(), "ovr-g", "ack", hs[2:4], nil)); st[0] != "expired" || st[1] != "ok" {
		t.Fatalf("acks on B right after a nack on A = %v, want [expired ok]", st)
	}
	if reads, _ := b.b.OverrideCounts(); reads < reads0+2 {
		t.Fatalf("after a nack of the consumer, acks read %d overrides, want 2", reads-reads0)
	}
}
