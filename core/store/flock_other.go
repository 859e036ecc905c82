//go:build !unix || solaris || aix

package store

import (
	"os"
	"time"
)

// sharedLock is a no-op where flock is not available; bbolt's own lock
// still keeps a second process out before anything is written.
func sharedLock(*os.File, time.Duration) error { return nil }

// exclusiveLock is a no-op where flock is not available (see sharedLock).
func exclusiveLock(*os.File, time.Duration) error { return nil }
