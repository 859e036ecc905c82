package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
)

// Runtime tuning for a server whose publish path ends in a synced bbolt
// commit, applied by serve unless the operator set the variable.

// defaultGCPercent is the GOGC the server runs with unless GOGC is set.
// Publishing allocates briskly (request, JSON, bbolt nodes) over a small
// live heap, so Go's default of 100 collects many times a second; 200
// halves that for at most twice the live heap. With a memory limit
// (GOMEMLIMIT, or the container's, below) the collector still works
// harder as the heap nears the limit.
const defaultGCPercent = 200

// defaultHeapFloor is the least heap goal the collector is given while
// the live heap is small. A fresh gateway's live heap is about 4 MiB, so
// GOGC alone sets a goal near 12 MiB, and 1,000 publishes a second (each
// with its receive and ack) start a collection ten times a second. Each
// one stops the world for up to a millisecond and takes a core for a
// few: on 2 cores that was most of publish->receive p99 with the store
// on tmpfs (2.3 ms at GOGC=100, 1.2 ms with the collector off). With a
// 64 MiB goal collections come every half second or so. A live heap
// past a third of the floor runs at plain GOGC.
const defaultHeapFloor = 64 << 20

// heapFloorEnv overrides defaultHeapFloor, in bytes; 0 turns the floor off.
const heapFloorEnv = "MQGATE_GC_HEAP_FLOOR"

// cgroupMemoryMax is where cgroup v2 publishes the container's memory
// limit ("max" when there is none).
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// maxGCPercent bounds the GOGC the floor sets (an int32 in the runtime).
const maxGCPercent = 1 << 20

// runtimeTuning is what tuneGC did, for the start-up log.
type runtimeTuning struct {
	gcPercent int   // -2: GOGC left as the operator set it
	heapFloor int64 // 0: none
	memLimit  int64 // math.MaxInt64: none
	stop      func()
}

// tuneGC applies defaultGCPercent and the heap floor unless the operator
// set GOGC, and, when GOMEMLIMIT is not set but the process runs under a
// cgroup memory limit, a soft limit at 90% of it so a large heap is
// collected before the container is killed (the limit also caps what the
// floor allows). stop ends the floor's tuning. A heap floor that is not
// a byte count is an error, and then nothing is changed.
func tuneGC() (runtimeTuning, error) {
	t := runtimeTuning{gcPercent: -2, memLimit: math.MaxInt64, stop: func() {}}
	floor := int64(defaultHeapFloor)
	if v := os.Getenv(heapFloorEnv); v != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return t, fmt.Errorf("%s=%q: want a number of bytes (0 turns the floor off), e.g. %d",
				heapFloorEnv, v, int64(defaultHeapFloor))
		}
		floor = n
	}
	if os.Getenv("GOGC") == "" {
		t.gcPercent = defaultGCPercent
		debug.SetGCPercent(t.gcPercent)
		t.heapFloor = floor
		if t.heapFloor > 0 {
			t.stop = startHeapFloor(t.gcPercent, uint64(t.heapFloor))
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if limit, ok := containerMemoryLimit(cgroupMemoryMax); ok {
			t.memLimit = limit / 10 * 9
			debug.SetMemoryLimit(t.memLimit)
		}
	}
	return t, nil
}

// heapFloor keeps the collector's heap goal at floor or more: after each
// collection it sets GOGC so that the live heap it found may grow to
// floor before the next, or to percent more when that is larger. Go has a
// ceiling (GOMEMLIMIT) but no floor; a ballast allocation would count
// against the ceiling.
type heapFloor struct {
	percent int
	floor   uint64
	set     int // the GOGC last set
	stopped atomic.Bool
	sample  []metrics.Sample
}

// gcSentinel is garbage made so its finalizer runs once per collection:
// the finalizer goroutine (the runtime's) runs heapFloor.afterGC, which
// makes the next one. A pointer field keeps it out of the tiny-object
// allocator, whose blocks are shared and freed late.
type gcSentinel struct{ _ *heapFloor }

// startHeapFloor starts tuning; the func it returns stops it (a last
// finalizer may still run, and then makes no other).
func startHeapFloor(percent int, floor uint64) (stop func()) {
	h := &heapFloor{percent: percent, floor: floor, set: percent,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	h.arm()
	return func() { h.stopped.Store(true) }
}

func (h *heapFloor) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { h.afterGC() })
}

func (h *heapFloor) afterGC() {
	if h.stopped.Load() {
		return
	}
	metrics.Read(h.sample)
	if pct := h.percentFor(h.sample[0].Value.Uint64()); pct != h.set {
		debug.SetGCPercent(pct)
		h.set = pct
	}
	h.arm()
}

// percentFor is the GOGC that gives a live heap of live bytes a goal of
// at least floor.
func (h *heapFloor) percentFor(live uint64) int {
	live = max(live, 1<<20) // a heap is never smaller; bounds the percent
	if goal := live * uint64(100+h.percent) / 100; goal >= h.floor {
		return h.percent
	}
	if h.floor/live >= maxGCPercent/100 {
		return maxGCPercent // and floor*100 might overflow
	}
	return int(h.floor*100/live - 100)
}

// containerMemoryLimit reads a cgroup v2 memory.max file.
func containerMemoryLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v <= 0 {
		return 0, false // "max": no limit
	}
	return v, true
}
