package main

import (
	"os"
	"syscall"
)

// fdatasync is what the gateway's log-ahead calls.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
