package watch

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func next(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case n, ok := <-ch:
		if !ok {
			t.Fatal("channel closed")
		}
		return n
	case <-time.After(2 * time.Second):
		t.Fatal("no notification")
	}
	return ""
}

func TestCoalescesAndNeverBlocks(t *testing.T) {
	var s Set
	ch, cancel := s.Watch()
	defer cancel()
	// Nobody reads: Notify must not block, and repeats coalesce.
	for range 1000 {
		s.Notify("a")
	}
	s.Notify("b")
	// Each name at least once; 1000 notifications of a coalesce into a
	// few deliveries (one per time the feeder drained the set).
	got := map[string]int{}
	for got["a"] == 0 || got["b"] == 0 {
		got[next(t, ch)]++
	}
	drain := time.After(50 * time.Millisecond)
	for done := false; !done; {
		select {
		case n := <-ch:
			got[n]++
		case <-drain:
			done = true
		}
	}
	if got["a"] > 10 || got["b"] != 1 {
		t.Fatalf("got %v: a backlog, not coalesced", got)
	}
	s.Notify("a")
	if n := next(t, ch); n != "a" {
		t.Fatalf("after drain: %q", n)
	}
}

func TestCancelAndClose(t *testing.T) {
	var s Set
	ch1, cancel1 := s.Watch()
	ch2, _ := s.Watch()
	cancel1()
	cancel1() // twice is fine
	if _, ok := <-ch1; ok {
		t.Fatal("cancelled channel still open")
	}
	s.Close()
	if _, ok := <-ch2; ok {
		t.Fatal("channel open after Close")
	}
	ch3, cancel3 := s.Watch()
	defer cancel3()
	if _, ok := <-ch3; ok {
		t.Fatal("watch after Close is open")
	}
	s.Notify("x") // no subscribers, no panic
}
