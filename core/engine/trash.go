package engine

import (
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Topic deletion in the background (SPEC §5). DeleteTopic and
// DeleteSystemTopic only move the topic's incarnation to the trash
// (store.RemoveTopic, one small transaction) and wake trashLoop, which
// removes the incarnation's messages in transactions of trashChunk. The
// trash is on disk, so a stop or a kill -9 half-way loses nothing: the loop
// runs one pass when the engine opens and finishes the job. A topic
// re-created meanwhile has a new UID and shares nothing with the trash.

// trashRetryDelay is how long trashLoop waits after a failed pass (a
// store error) before it tries again.
var trashRetryDelay = 10 * time.Second

// trashLoop is the goroutine (one of e.wg, ended by e.closing) that empties
// the trash: a pass at start, then one per wake-up from a deletion. It
// sleeps on e.trashWake when the trash is empty; it never polls.
func (e *Engine) trashLoop() {
	defer e.wg.Done()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	for {
		if err := e.emptyTrash(); err != nil {
			if errors.Is(err, core.ErrClosed) || isClosing(e) {
				return
			}
			e.log.Error().Err(err).Msg("emptying deleted topics failed; retrying later")
			retry.Reset(trashRetryDelay)
		}
		select {
		case <-e.closing:
			return
		case <-e.trashWake:
			retry.Stop()
		case <-retry.C:
		}
	}
}

// emptyTrash removes deleted topics' messages, one small transaction at a
// time, until the trash is empty or the engine closes (core.ErrClosed).
func (e *Engine) emptyTrash() error {
	chunks := 0
	for more := true; more; {
		if err := e.update(func(tx *bolt.Tx) (err error) {
			if !store.HasTrash(tx) {
				more = false
				return nil
			}
			chunks++
			more, err = store.EmptyTrash(tx, trashChunk)
			return err
		}); err != nil {
			return err
		}
	}
	if chunks > 0 {
		e.log.Info().Int("transactions", chunks).Msg("deleted topics emptied")
	}
	return nil
}

// trashPending reports whether deleted topics still hold messages.
func (e *Engine) trashPending() (pending bool, err error) {
	err = e.view(func(tx *bolt.Tx) error {
		pending = store.HasTrash(tx)
		return nil
	})
	return pending, err
}
