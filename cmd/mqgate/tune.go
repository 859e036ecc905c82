package main

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
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

// cgroupMemoryMax is where cgroup v2 publishes the container's memory
// limit ("max" when there is none).
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// tuneGC applies defaultGCPercent unless the operator set GOGC, and, when
// GOMEMLIMIT is not set but the process runs under a cgroup memory limit,
// a soft limit at 90% of it so a large heap is collected before the
// container is killed. It returns what it did, for the start-up log.
func tuneGC() (gcPercent int, memLimit int64) {
	gcPercent = -2 // not changed
	if os.Getenv("GOGC") == "" {
		gcPercent = defaultGCPercent
		debug.SetGCPercent(gcPercent)
	}
	memLimit = math.MaxInt64
	if os.Getenv("GOMEMLIMIT") == "" {
		if limit, ok := containerMemoryLimit(cgroupMemoryMax); ok {
			memLimit = limit / 10 * 9
			debug.SetMemoryLimit(memLimit)
		}
	}
	return gcPercent, memLimit
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
