package consumer

import (
	"slices"
	"testing"

	"github.com/mqgate/mqgate/core"
)

func offsetsOf(ms []*core.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.QueueOffset
	}
	return out
}

// Trimmed offsets stay unfinished (they hold the committed offset back
// and are not reported finished); a rewound pull gets only them again,
// never an offset finished meanwhile.
func TestTrimKeepsExactness(t *testing.T) {
	pq := NewProcessQueue()
	b := NewCacheBudget(1 << 20)
	pq.attachBudget(b)
	all := msgsAt(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	pq.PutMessage(all)
	pq.RemoveMessage(all[3:4]) // 3 acked
	for _, m := range all[6:] {
		pq.revokeMessage(m) // 6..9 given back
	}
	if pq.Count() != 5 || b.Used() != 50 {
		t.Fatalf("count %d, budget %d after trim; want 5, 50", pq.Count(), b.Used())
	}
	if first, ok := pq.firstTrimmed(); !ok || first != 6 {
		t.Fatalf("first trimmed %d %v", first, ok)
	}
	if got := pq.RemoveMessage(msgsAt(0, 1, 2, 4, 5)); got != 6 {
		t.Fatalf("offset to commit %d, want 6 (the first trimmed)", got)
	}
	if pq.Empty() {
		t.Fatal("Empty with trimmed offsets pending")
	}
	if got := pq.finishedAbove(0); !slices.Equal(got, []core.OffsetRange{{From: 0, To: 6}}) {
		t.Fatalf("finishedAbove %v, want [0,6)", got)
	}
	// A pull rewound to 6 (or earlier) re-reads: only 6..9 are new, and
	// what lies beyond queueOffsetMax as usual.
	added := pq.putMessages(msgsAt(3, 4, 5, 6, 7, 8, 9, 10, 11))
	if got := offsetsOf(added); !slices.Equal(got, []int64{6, 7, 8, 9, 10, 11}) {
		t.Fatalf("re-pull added %v", got)
	}
	if _, ok := pq.firstTrimmed(); ok {
		t.Fatal("trimmed offsets left after the re-pull")
	}
}

// Orderly: only pending messages never taken are trimmed.
func TestTrimPendingOrderly(t *testing.T) {
	pq := NewProcessQueue()
	pq.PutMessage(msgsAt(0, 1, 2, 3, 4, 5, 6, 7))
	taken := pq.TakeMessages(2) // 0, 1 out
	pq.MakeMessageToConsumeAgain(taken[1:])
	// 1 is pending again but was taken: it must stay (reconsumeTimes).
	pq.trimPending(1)
	if pq.Count() != 2 {
		t.Fatalf("count %d, want 2 (0 consuming, 1 taken before)", pq.Count())
	}
	if first, _ := pq.firstTrimmed(); first != 2 {
		t.Fatalf("first trimmed %d, want 2", first)
	}
}
