//go:build linux

package store

import "syscall"

// releaseMapped drops the process's mapping of [base+from, base+to) with
// madvise(MADV_DONTNEED) (ReleaseMapping). from is page-aligned: it is a
// page id times bbolt's page size, which is the OS page size.
func releaseMapped(base uintptr, from, to int64) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base+uintptr(from), uintptr(to-from), syscall.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}
