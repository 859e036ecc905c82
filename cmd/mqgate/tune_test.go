package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestHeapFloorPercent(t *testing.T) {
	h := &heapFloor{percent: 200, floor: 64 << 20}
	for _, c := range []struct {
		live uint64
		want int
	}{
		{4 << 20, 1500},   // 4 MiB may grow to 64 MiB
		{16 << 20, 300},   // 16 MiB to 64 MiB
		{32 << 20, 200},   // GOGC's own goal (96 MiB) is past the floor
		{1 << 30, 200},    // a large heap runs at plain GOGC
		{0, 6300},         // no heap read yet: counted as 1 MiB
		{100 << 10, 6300}, // so is a smaller one
	} {
		if got := h.percentFor(c.live); got != c.want {
			t.Errorf("percentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
	for _, floor := range []uint64{1 << 50, 1<<63 + 1} {
		if got := (&heapFloor{percent: 200, floor: floor}).percentFor(1 << 20); got != maxGCPercent {
			t.Errorf("a floor of %d over 1 MiB: %d, want the bound %d", floor, got, maxGCPercent)
		}
	}
}

// TestHeapFloorEnvRefused: a floor that is not a byte count stops the
// start with the variable named, before anything is tuned.
func TestHeapFloorEnvRefused(t *testing.T) {
	for _, v := range []string{"64MiB", "-1", "1e9"} {
		t.Setenv(heapFloorEnv, v)
		if _, err := tuneGC(); err == nil || !strings.Contains(err.Error(), heapFloorEnv) {
			t.Errorf("%s=%q: err %v, want one naming the variable", heapFloorEnv, v, err)
		}
	}
}

// TestHeapFloorTunesAfterEachGC runs the real tuner: after a collection
// GOGC is the floor's, and once stopped the tuner leaves it alone.
func TestHeapFloorTunesAfterEachGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	gogc := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	// A floor far above this test's heap: the percent it sets is large.
	stop := startHeapFloor(100, 1<<40)
	for i := 0; i < 200 && gogc() == 100; i++ {
		runtime.GC() // the sentinel dies; its finalizer runs soon after
		time.Sleep(time.Millisecond)
	}
	if got := gogc(); got <= 100 {
		stop()
		t.Fatalf("GOGC after collections with a 1 TiB floor: %d, want > 100", got)
	}
	stop()
	runtime.GC()
	runtime.GC() // a finalizer queued before stop may still run once
	debug.SetGCPercent(100)
	for i := 0; i < 3; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC after the tuner stopped: %d, want 100 (left alone)", got)
	}
}
