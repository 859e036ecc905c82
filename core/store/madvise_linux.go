//go:build linux

package store

import "syscall"

// releaseMapped drops the process's mapping of the n bytes at base (the
// start of bbolt's map, page-aligned) with madvise(MADV_DONTNEED)
// (ReleaseMapping).
func releaseMapped(base uintptr, n int64) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base, uintptr(n), syscall.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}
