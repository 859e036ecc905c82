//go:build !linux

package store

// releaseMapped is a no-op where madvise is not wired up (ReleaseMapping).
func releaseMapped(base uintptr, n int64) error { return nil }
