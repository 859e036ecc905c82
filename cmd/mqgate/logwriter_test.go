package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// sink records each Write.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.buf.Write(p)
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// checkFor polls cond until it holds or total passes.
func checkFor(t *testing.T, total time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(total)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLogWriterKeepsEveryLineInOrder: many goroutines logging at once get
// every line out exactly once, whole and in each goroutine's order, in far
// fewer writes than lines.
func TestLogWriterKeepsEveryLineInOrder(t *testing.T) {
	out := &sink{}
	w := newLogWriter(out)
	const writers, lines = 16, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				if _, err := fmt.Fprintf(w, "g%02d line %04d %s\n", g, i, strings.Repeat("x", 1+i%50)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(l, "g%02d line %04d %s", &g, &i, &pad); err != nil {
			t.Fatalf("mangled line %q: %v", l, err)
		}
		if i != next[g] || len(pad) != 1+i%50 {
			t.Fatalf("line %q out of order or cut (want line %d of g%02d)", l, next[g], g)
		}
		next[g]++
	}
	if out.writes*10 > writers*lines {
		t.Fatalf("%d writes for %d lines: not batched", out.writes, writers*lines)
	}
	t.Logf("%d lines in %d writes", writers*lines, out.writes)
}

// TestLogWriterFlushes: an info line goes out within flushDelay on its
// own; a warning goes out before WriteLevel returns, after the lines
// before it; after Close lines are written at once.
func TestLogWriterFlushes(t *testing.T) {
	out := &sink{}
	w := newLogWriter(out)
	defer w.Close()
	log := zerolog.New(w)
	log.Info().Msg("first")
	checkFor(t, 5*time.Second, func() bool { return strings.Contains(out.String(), `"first"`) })

	log.Info().Msg("second")
	log.Error().Msg("boom")
	if s := out.String(); !strings.Contains(s, `"second"`) || strings.Index(s, `"second"`) > strings.Index(s, `"boom"`) {
		t.Fatalf("warning not written at once after earlier lines: %q", s)
	}
	w.Close()
	log.Info().Msg("after close")
	if !strings.Contains(out.String(), `"after close"`) {
		t.Fatal("line after Close held back")
	}
}
