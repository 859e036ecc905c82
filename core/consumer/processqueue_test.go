package consumer

import (
	"math/rand/v2"
	"testing"

	"github.com/mqgate/mqgate/core"
)

func msgsAt(offsets ...int64) []*core.Message {
	out := make([]*core.Message, len(offsets))
	for i, o := range offsets {
		out[i] = &core.Message{QueueOffset: o, Body: make([]byte, 10)}
	}
	return out
}

func TestRemoveMessageRule(t *testing.T) {
	pq := NewProcessQueue()
	// Case 1: the map was empty before → -1.
	if got := pq.RemoveMessage(msgsAt(5)); got != -1 {
		t.Fatalf("empty: got %d want -1", got)
	}
	ms := msgsAt(10, 11, 12, 13)
	if n := pq.PutMessage(ms); n != 4 {
		t.Fatalf("put %d", n)
	}
	if n := pq.PutMessage(msgsAt(12, 14)); n != 1 {
		t.Fatalf("re-put of a cached offset counted: %d", n)
	}
	if pq.Count() != 5 || pq.Bytes() != 50 || pq.MaxSpan() != 4 {
		t.Fatalf("count %d bytes %d span %d", pq.Count(), pq.Bytes(), pq.MaxSpan())
	}
	// Case 3: something remains → smallest remaining offset.
	if got := pq.RemoveMessage(msgsAt(11, 13)); got != 10 {
		t.Fatalf("middle removed: got %d want 10", got)
	}
	if got := pq.RemoveMessage(msgsAt(10)); got != 12 {
		t.Fatalf("head removed: got %d want 12", got)
	}
	// Removing something not cached changes nothing but still answers.
	if got := pq.RemoveMessage(msgsAt(99)); got != 12 {
		t.Fatalf("unknown removed: got %d want 12", got)
	}
	// Case 2: it becomes empty → queueOffsetMax+1.
	if got := pq.RemoveMessage(msgsAt(14, 12)); got != 15 {
		t.Fatalf("emptied: got %d want 15", got)
	}
	if pq.Count() != 0 || pq.Bytes() != 0 || !pq.Empty() {
		t.Fatalf("after empty: count %d bytes %d", pq.Count(), pq.Bytes())
	}
	// queueOffsetMax persists: a later empty → remove answers -1 again.
	if got := pq.RemoveMessage(msgsAt(14)); got != -1 {
		t.Fatalf("empty again: %d", got)
	}
}

// TestSpaceKeptUntilTaken: a removal nobody can be waiting for (no
// spaceChan since the last signal) keeps the channel; the next taker
// still sees the following removal.
func TestSpaceKeptUntilTaken(t *testing.T) {
	pq := NewProcessQueue()
	pq.PutMessage(msgsAt(1, 2, 3))
	ch := pq.spaceChan()
	pq.RemoveMessage(msgsAt(1)) // signals ch, replaces it
	fresh := pq.space
	pq.RemoveMessage(msgsAt(2)) // nobody took fresh: kept
	if pq.space != fresh {
		t.Fatal("an untaken space channel was replaced")
	}
	select {
	case <-ch:
	default:
		t.Fatal("the taken channel was not signalled")
	}
	ch = pq.spaceChan()
	pq.RemoveMessage(msgsAt(3))
	select {
	case <-ch:
	default:
		t.Fatal("a channel taken after a skipped signal was not signalled")
	}
}

func TestRemoveWakesSpaceWaiters(t *testing.T) {
	pq := NewProcessQueue()
	pq.PutMessage(msgsAt(1, 2))
	ch := pq.spaceChan()
	select {
	case <-ch:
		t.Fatal("space signalled before anything left")
	default:
	}
	pq.RemoveMessage(msgsAt(1))
	select {
	case <-ch:
	default:
		t.Fatal("remove did not signal space")
	}
	ch = pq.spaceChan()
	pq.SetDropped()
	select {
	case <-ch:
	default:
		t.Fatal("drop did not signal")
	}
	if !pq.Dropped() {
		t.Fatal("not dropped")
	}
}

func TestOrderlyTakeCommitAgain(t *testing.T) {
	pq := NewProcessQueue()
	pq.PutMessage(msgsAt(0, 1, 2, 3, 4))
	if got := pq.Commit(); got != -1 {
		t.Fatalf("commit with nothing consuming: %d", got)
	}
	batch := pq.TakeMessages(3)
	if len(batch) != 3 || batch[0].QueueOffset != 0 || batch[2].QueueOffset != 2 {
		t.Fatalf("take: %v", batch)
	}
	if pq.Count() != 5 || pq.Pending() != 2 {
		t.Fatalf("take changed counts: count %d pending %d", pq.Count(), pq.Pending())
	}
	// Message 1 failed: it and every later one of the batch go back.
	again := []*core.Message{{QueueOffset: 1, Body: make([]byte, 10), ReconsumeTimes: 1}, batch[2]}
	pq.MakeMessageToConsumeAgain(again)
	if pq.Pending() != 4 || pq.Count() != 5 || pq.Bytes() != 50 {
		t.Fatalf("again: pending %d count %d bytes %d", pq.Pending(), pq.Count(), pq.Bytes())
	}
	// Commit finishes only what is still consuming: offset 0 → commit 1.
	if got := pq.Commit(); got != 1 {
		t.Fatalf("commit prefix: %d want 1", got)
	}
	if pq.Count() != 4 || pq.Bytes() != 40 {
		t.Fatalf("after commit: count %d bytes %d", pq.Count(), pq.Bytes())
	}
	batch = pq.TakeMessages(10)
	if len(batch) != 4 || batch[0].QueueOffset != 1 || batch[0].ReconsumeTimes != 1 {
		t.Fatalf("second take: %+v", batch[0])
	}
	if pq.TakeMessages(1) != nil {
		t.Fatal("take from empty cache")
	}
	if got := pq.Commit(); got != 5 {
		t.Fatalf("commit all: %d want 5", got)
	}
	if !pq.Empty() || pq.Count() != 0 || pq.Bytes() != 0 {
		t.Fatal("not empty after full commit")
	}
}

// TestRemoveMessageBatchMatchesModel removes random batches (duplicates,
// unknown offsets, any order) and compares what stays cached, the byte
// count and the answer with a plain set.
func TestRemoveMessageBatchMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		pq := NewProcessQueue()
		n := 1 + rng.IntN(300)
		model := map[int64]bool{}
		var offs []int64
		for o := int64(0); o < int64(n); o++ {
			if rng.IntN(4) > 0 {
				offs = append(offs, o)
				model[o] = true
			}
		}
		pq.PutMessage(msgsAt(offs...))
		maxOff := int64(-1)
		if len(offs) > 0 {
			maxOff = offs[len(offs)-1]
		}
		for step := 0; step < 60 && len(model) > 0; step++ {
			size := rng.IntN(40)
			if round%2 == 0 {
				size = 1 // one ack at a time, mostly near the head
			}
			batch := make([]int64, size)
			for i := range batch {
				batch[i] = int64(rng.IntN(n + 5))
			}
			want := int64(-1)
			if len(model) > 0 {
				for _, o := range batch {
					delete(model, o)
				}
				want = maxOff + 1
				for o := range model {
					want = min(want, o)
				}
			}
			if got := pq.RemoveMessage(msgsAt(batch...)); got != want {
				t.Fatalf("round %d: answer %d, want %d", round, got, want)
			}
			if pq.Count() != len(model) || pq.Bytes() != int64(10*len(model)) {
				t.Fatalf("round %d: count %d bytes %d, model %d", round, pq.Count(), pq.Bytes(), len(model))
			}
			prev := int64(-1)
			for _, m := range pq.msgs {
				if !model[m.QueueOffset] || m.QueueOffset <= prev {
					t.Fatalf("round %d: cached %d out of order or removed", round, m.QueueOffset)
				}
				prev = m.QueueOffset
			}
		}
	}
}
