package store

import (
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// bbolt reads the file through its mapping and trusts what it finds: a
// damaged page can send it to an address past the file's end, where the
// mapping faults (SIGBUS), or past a slice's end, where it panics. A fault
// kills the process unless the goroutine that takes it has asked the
// runtime to turn faults into panics (debug.SetPanicOnFault); guard does
// that for the goroutines of Open that read the mapping (recovery's redo,
// the self check, init) and View does it for every reader, so damage
// becomes an error naming the file and, for a fault, the page, and never
// a crash. bbolt's own tx.Check reads on a goroutine of its own that no
// guard reaches: Open runs it only on a file the full pre-check read page
// by page first (store.go).

// faultAddr is the error a fault on the mapping panics with
// (runtime.Error with the faulting address).
type faultAddr interface {
	error
	Addr() uintptr
}

// guardRead runs fn with faults turned into panics and recovers any
// panic into an error naming path and, for a fault inside db's mapping,
// the page.
func guardRead(db *bolt.DB, path string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = &ReadFault{Path: path, Page: -1, Cause: fmt.Sprint(r)}
			if f, ok := r.(faultAddr); ok && db != nil {
				info := db.Info()
				if a := f.Addr(); a >= info.Data && info.PageSize > 0 {
					err.(*ReadFault).Page = int64((a - info.Data) / uintptr(info.PageSize))
				}
				err.(*ReadFault).Fault = true
			}
		}
	}()
	return fn()
}

// ReadFault is damage met while reading the file through bbolt: a fault
// on the mapping or a panic of bbolt walking a mangled page.
type ReadFault struct {
	Path  string
	Page  int64 // the page a fault hit, -1 when unknown
	Fault bool  // a fault on the mapping (else a panic)
	Cause string
}

func (e *ReadFault) Error() string {
	switch {
	case e.Fault && e.Page >= 0:
		return fmt.Sprintf("the file %s is corrupt: reading page %d through the mapping faulted "+
			"(a page points past the end of the file): %s", e.Path, e.Page, e.Cause)
	case e.Fault:
		return fmt.Sprintf("the file %s is corrupt: reading it through the mapping faulted: %s", e.Path, e.Cause)
	}
	return fmt.Sprintf("the file %s is corrupt: %s", e.Path, e.Cause)
}
