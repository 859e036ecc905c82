package engine

import "runtime"

type runtimeMemStats = runtime.MemStats

// readMem reads the heap after a full collection, so figures compare live
// data rather than garbage.
func readMem(ms *runtime.MemStats) {
	runtime.GC()
	runtime.ReadMemStats(ms)
}
