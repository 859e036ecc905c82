package policy

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRetry(t *testing.T) {
	for _, c := range []struct {
		times, max, level int
		want              Outcome
	}{
		{0, 16, 0, Outcome{Level: 3}},          // first failure: 3 + 0
		{5, 16, 0, Outcome{Level: 8}},          // 3 + reconsumeTimes
		{15, 16, 0, Outcome{Level: 18}},        // the 16th failure still retries
		{16, 16, 0, Outcome{DeadLetter: true}}, // the 17th dead-letters
		{0, 16, -1, Outcome{DeadLetter: true}}, // level -1: now
		{2, 16, 1, Outcome{Level: 1}},          // the asked level
		{2, 16, 99, Outcome{Level: 99}},        // clamped by LevelIndex, not here
		{-1, 16, 0, Outcome{Level: 3}},         // negative counts are 0
		{0, 0, 0, Outcome{DeadLetter: true}},   // maxReconsumeTimes 0: no retry
	} {
		if got := Retry(c.times, c.max, c.level); got != c.want {
			t.Errorf("Retry(%d, %d, %d) = %+v, want %+v", c.times, c.max, c.level, got, c.want)
		}
	}
	if Exhausted(16, 16) || !Exhausted(17, 16) {
		t.Fatal("Exhausted: a delivery is exhausted only past maxReconsumeTimes")
	}
}

func TestLevels(t *testing.T) {
	l := DefaultDelayLevels
	if len(l) != 18 || l[0] != time.Second || l[17] != 2*time.Hour {
		t.Fatalf("default table %v", l)
	}
	for _, c := range []struct {
		level int
		want  time.Duration
	}{{1, time.Second}, {3, 10 * time.Second}, {18, 2 * time.Hour}, {19, 2 * time.Hour}, {1000, 2 * time.Hour}, {0, time.Second}} {
		if got := LevelDelay(l, c.level); got != c.want {
			t.Errorf("LevelDelay(%d) = %v, want %v", c.level, got, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 0}, {time.Second, 1}, {2 * time.Second, 2}, {5 * time.Second, 2}, {3 * time.Hour, 18}} {
		if got := LevelAtLeast(l, c.d); got != c.want {
			t.Errorf("LevelAtLeast(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	p, err := ParseDelayLevels("100ms, 1s 2m")
	if err != nil || len(p) != 3 || p[2] != 2*time.Minute {
		t.Fatalf("ParseDelayLevels = %v, %v", p, err)
	}
	for _, bad := range []string{"", "1s -1s", "0s", "x", strings.Repeat("1s ", MaxDelayLevels+1)} {
		if _, err := ParseDelayLevels(bad); err == nil {
			t.Errorf("ParseDelayLevels(%q) accepted", bad)
		}
	}
}

func TestSealer(t *testing.T) {
	if _, err := NewSealer(make([]byte, KeySize-1)); err == nil {
		t.Fatal("short key accepted")
	}
	s, _ := NewSealer(bytes.Repeat([]byte{1}, KeySize))
	other, _ := NewSealer(bytes.Repeat([]byte{2}, KeySize))
	h := s.Seal([]byte{2, 'a', 'b'})
	p, err := s.Open(h)
	if err != nil || !bytes.Equal(p, []byte{2, 'a', 'b'}) {
		t.Fatalf("Open = %v, %v", p, err)
	}
	for _, bad := range []string{"", "!!", h + "A", h[:len(h)-1], strings.Repeat("A", MaxHandleLen+1), other.Seal([]byte{2, 'a', 'b'})} {
		if _, err := s.Open(bad); err != ErrBadHandle {
			t.Errorf("Open(%q) = %v", bad, err)
		}
	}
}

// TestSealerOpenTo: OpenTo decodes into a buffer with room, allocating
// nothing, and answers as Open does.
func TestSealerOpenTo(t *testing.T) {
	s, _ := NewSealer(bytes.Repeat([]byte{1}, KeySize))
	h := s.Seal([]byte{2, 'a', 'b'})
	var buf [64]byte
	p, err := s.OpenTo(buf[:0], h)
	if err != nil || !bytes.Equal(p, []byte{2, 'a', 'b'}) || &p[0] != &buf[0] {
		t.Fatalf("OpenTo = %v, %v (in place: %v)", p, err, err == nil && &p[0] == &buf[0])
	}
	if p, err := s.OpenTo(buf[:0:2], h); err != nil || !bytes.Equal(p, []byte{2, 'a', 'b'}) {
		t.Fatalf("OpenTo a short buffer = %v, %v", p, err)
	}
	if _, err := s.OpenTo(buf[:0], h[:len(h)-1]); err != ErrBadHandle {
		t.Fatalf("OpenTo a cut handle = %v", err)
	}
	// The race detector drops sync.Pool items at random (a new MAC state).
	if n := testing.AllocsPerRun(100, func() { _, _ = s.OpenTo(buf[:0], h) }); n != 0 && !raceEnabled {
		t.Fatalf("OpenTo allocates %.0f times", n)
	}
}

func FuzzSealerOpen(f *testing.F) {
	s, _ := NewSealer(bytes.Repeat([]byte{1}, KeySize))
	f.Add(s.Seal([]byte{1, 2, 3}))
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, h string) {
		p, err := s.Open(h)
		if err == nil && s.Seal(p) != h {
			t.Fatalf("%q opens but is not the one spelling of its payload", h)
		}
	})
}

// TestSealerRotation: a previous key verifies handles it signed but never
// signs; without it they are forged.
func TestSealerRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	old, _ := NewSealer(oldKey)
	rotated, err := NewSealer(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := NewSealer(newKey)
	hOld, hNew := old.Seal([]byte{1, 'x'}), rotated.Seal([]byte{1, 'y'})
	if hNew != fresh.Seal([]byte{1, 'y'}) {
		t.Fatal("a sealer with a previous key must sign with the new one")
	}
	for _, h := range []string{hOld, hNew} {
		if _, err := rotated.Open(h); err != nil {
			t.Errorf("rotated sealer refused %q: %v", h, err)
		}
	}
	if _, err := fresh.Open(hOld); err != ErrBadHandle {
		t.Errorf("old handle opened without the previous key: %v", err)
	}
	if _, err := old.Open(hNew); err != ErrBadHandle {
		t.Errorf("new handle opened by the old key alone: %v", err)
	}
	if _, err := NewSealer(newKey, make([]byte, KeySize-1)); err == nil {
		t.Error("short previous key accepted")
	}
}
