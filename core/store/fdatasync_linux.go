//go:build linux

package store

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (and the size, when it grew) without the
// rest of its metadata, as bbolt does on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
