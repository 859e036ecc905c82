package main

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used so
// far. mqbench reports its own share of the machine per run, so a reader
// can see how much of a 2-core box the load generator took from the
// server under test.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
