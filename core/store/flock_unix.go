//go:build unix && !solaris && !aix

package store

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// sharedLock takes a shared flock on f (the lock bbolt takes exclusively),
// so the pre-check never reads a file another process is writing. It gives
// up with ErrLocked after timeout. The lock goes with f's Close.
func sharedLock(f *os.File, timeout time.Duration) error {
	return flockWait(f, syscall.LOCK_SH, timeout)
}

// exclusiveLock takes the flock bbolt takes, so recovery never writes a
// file another process (or another Open in this one) has open: a running
// store's file is ahead of its log's checkpoint, and putting its meta
// pages back would wreck it. It gives up with ErrLocked after timeout.
// The lock goes with f's Close.
func exclusiveLock(f *os.File, timeout time.Duration) error {
	return flockWait(f, syscall.LOCK_EX, timeout)
}

func flockWait(f *os.File, how int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrLocked
		}
		time.Sleep(20 * time.Millisecond) // bbolt's own flock retry step is 50 ms
	}
}
