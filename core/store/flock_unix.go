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
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
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
