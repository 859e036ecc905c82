package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowSink records each Write and takes a while, as a pipe to a busy
// reader does, so concurrent lines pile up behind the leader.
type slowSink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (s *slowSink) Write(p []byte) (int, error) {
	time.Sleep(100 * time.Microsecond) // the cost being amortised, not synchronisation
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.buf.Write(p)
}

// TestCoalescingWriterKeepsEveryLine: many goroutines logging at once get
// every line out exactly once, whole and in each goroutine's order, in
// fewer writes than lines.
func TestCoalescingWriterKeepsEveryLine(t *testing.T) {
	sink := &slowSink{}
	w := newCoalescingWriter(sink)
	const writers, lines = 16, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				if _, err := fmt.Fprintf(w, "g%02d line %04d %s\n", g, i, strings.Repeat("x", i%50)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// Every Write has returned, and a returning leader leaves nothing
	// pending: the sink holds everything now.
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(sink.buf.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(l, "g%02d line %04d %s", &g, &i, &pad); err != nil && i%50 != 0 {
			t.Fatalf("mangled line %q: %v", l, err)
		}
		if i != next[g] || len(pad) != i%50 {
			t.Fatalf("line %q out of order or cut (want line %d of g%02d)", l, next[g], g)
		}
		next[g]++
	}
	if sink.writes >= writers*lines {
		t.Fatalf("%d writes for %d lines: nothing coalesced", sink.writes, writers*lines)
	}
	t.Logf("%d lines in %d writes", writers*lines, sink.writes)
}
