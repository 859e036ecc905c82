package gateway

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mqgate/mqgate/core"
)

func TestTimelineRingKeepsTheLastEvents(t *testing.T) {
	tl := NewTimeline(4)
	for i := range 6 {
		tl.Record("g", core.Event{Type: core.EventDelivered, MessageID: fmt.Sprintf("m%d", i%2), Attempt: i})
	}
	tl.Record("other", core.Event{Type: core.EventAcked, MessageID: "m0"})
	var got []int
	for _, e := range tl.Events("g", "m0") {
		got = append(got, e.Attempt)
	}
	// Six events in a ring of four: 2..5 are left; m0's are 2 and 4.
	if !slices.Equal(got, []int{2, 4}) {
		t.Fatalf("m0 attempts %v, want [2 4]", got)
	}
	if evs := tl.Events("g", "m1"); len(evs) != 2 || evs[0].Attempt != 3 || evs[1].Attempt != 5 {
		t.Fatalf("m1 events %+v", evs)
	}
	if evs := tl.Events("nope", "m0"); evs != nil {
		t.Fatalf("unknown group: %+v", evs)
	}
	var none *Timeline
	none.Record("g", core.Event{}) // a nil timeline records nothing
	if none.Events("g", "m0") != nil {
		t.Fatal("nil timeline has events")
	}
}

func BenchmarkTimelineRecord(b *testing.B) {
	tl := NewTimeline(0)
	ev := core.Event{Type: core.EventDelivered, MessageID: "01J9Z7K3V1W2X3Y4Z5A6B7C8D9", ConsumerID: "gw-1", Attempt: 1}
	b.ReportAllocs()
	for b.Loop() {
		tl.Record("g", ev)
	}
}

// A ring is tied to its group's incarnation: a new one starts empty, and a
// forgotten group's events are gone.
func TestTimelineFollowsIncarnation(t *testing.T) {
	tl := NewTimeline(8)
	tl.Record("g", core.Event{Type: core.EventDelivered, MessageID: "m"}) // before any bind: kept
	tl.Bind("g", 1)
	tl.Record("g", core.Event{Type: core.EventAcked, MessageID: "m"})
	tl.Bind("g", 1)
	if n := len(tl.Events("g", "m")); n != 2 {
		t.Fatalf("%d events after binding the same incarnation, want 2", n)
	}
	tl.Bind("g", 2)
	if evs := tl.Events("g", "m"); len(evs) != 0 {
		t.Fatalf("new incarnation sees %+v", evs)
	}
	tl.Record("g", core.Event{Type: core.EventDelivered, MessageID: "m"})
	tl.Forget("g")
	if evs := tl.Events("g", "m"); len(evs) != 0 {
		t.Fatalf("forgotten group sees %+v", evs)
	}
}
