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
	got := map[string]int{}
	got[next(t, ch)]++
	got[next(t, ch)]++
	if got["a"] != 1 || got["b"] != 1 {
		t.Fatalf("got %v, want a and b once each", got)
	}
	select {
	case n := <-ch:
		t.Fatalf("backlog: %q", n)
	case <-time.After(50 * time.Millisecond):
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
