package engine

import (
	"io"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Backup writes a consistent snapshot of the store file to w while the
// engine keeps serving (store.Backup): it holds every message whose
// publish was answered before Backup was called, and the groups' state
// as committed then. start, when set, receives the snapshot's size
// before its first byte.
func (e *Engine) Backup(w io.Writer, start func(size int64)) (int64, error) {
	select {
	case <-e.closing:
		return 0, core.ErrClosed
	default:
	}
	return e.st.Backup(w, start)
}

// DiskStats reports the store file's figures (size, pages in use, free
// pages) for metrics and operators.
func (e *Engine) DiskStats() (store.DiskStats, error) { return e.st.DiskStats() }
