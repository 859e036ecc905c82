package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Topic deletion in the background (SPEC §5). DeleteTopic and
// DeleteSystemTopic only move the topic's incarnation to the trash
// (store.Tx.RemoveTopic, one small transaction) and wake trashLoop, which
// drops the store segments left without a visible message, each whole in
// a transaction of its own (emptyTrash). The trash is on disk, so a stop or a kill -9 half-way loses nothing: the loop
// runs one pass when the engine opens and finishes the job. A topic
// re-created meanwhile has a new UID and shares nothing with the trash.
//
// The same loop removes what the engine keeps per incarnation outside the
// store's buckets (sweepDeleted): a deleted topic's pending timer messages
// (found through bucketTimerTopics, not by scanning the time index) and a
// deleted %DLQ% topic's redrive marks. Its delayed messages on the schedule
// queues cannot leave the middle of those append-only queues; they are
// dropped when due (REAL_TOPIC_UID) and trimmed with the delivered head.

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
		err := e.emptyTrash()
		if err == nil {
			err = e.sweepDeleted()
		}
		if err != nil {
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

// emptyTrash frees what deleted topics leave: the store segments holding
// nothing visible any more are dropped whole (dropSegments), and the trash
// entries of incarnations no segment holds are cleared. A deleted topic's
// messages that share a segment with live messages go when retention
// drops that segment.
func (e *Engine) emptyTrash() error {
	pending, err := e.trashPending()
	if err != nil || !pending {
		return err
	}
	if err := e.dropSegments("deleted topics"); err != nil {
		return err
	}
	if err := e.update(func(tx store.Tx) error {
		_, err := tx.EmptyTrash() // clears the entries; drops a segment only if one appeared meanwhile
		return err
	}); err != nil {
		return err
	}
	if pending, err = e.trashPending(); err == nil && !pending {
		e.log.Info().Msg("deleted topics emptied")
	}
	return err
}

// trashPending reports whether deleted topics still hold messages.
func (e *Engine) trashPending() (pending bool, err error) {
	err = e.view(func(tx store.ReadTx) error {
		pending = tx.HasTrash()
		return nil
	})
	return pending, err
}

// sweepDeleted removes the timer entries and redrive marks of deleted
// incarnations listed in bucketSweep, up to trashChunk entries per
// transaction, until the list is empty or the engine closes. The removed
// timers count as dropped.
func (e *Engine) sweepDeleted() error {
	for {
		var dropped int
		var more bool
		err := e.update(func(tx store.Tx) error {
			sweep := tx.Bucket(bucketSweep)
			k, _ := sweep.Cursor().First()
			if k == nil {
				return nil
			}
			more = true
			uid := bytes.Clone(k)
			n := 0
			timers := tx.Bucket(bucketTimers)
			for _, sk := range prefixKeys(tx.Bucket(bucketTimerTopics), uid, trashChunk) {
				if tk := sk[len(uid):]; timers.Get(tk) != nil {
					if err := forgetTimerID(tx, tk, timers.Get(tk)); err != nil {
						return err
					}
					if err := timers.Delete(tk); err != nil {
						return err
					}
					dropped++
				}
				if err := tx.Bucket(bucketTimerTopics).Delete(sk); err != nil {
					return err
				}
				n++
			}
			if n < trashChunk {
				for _, rk := range prefixKeys(tx.Bucket(bucketRedriven), uid, trashChunk-n) {
					if err := tx.Bucket(bucketRedriven).Delete(rk); err != nil {
						return err
					}
					n++
				}
			}
			if n < trashChunk {
				return sweep.Delete(uid)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if dropped > 0 {
			e.sched.dropped.Add(int64(dropped))
			e.log.Info().Int("messages", dropped).Msg("timer messages of a deleted topic dropped")
		}
		if !more {
			return nil
		}
	}
}

// prefixKeys returns up to limit keys of b starting with prefix, copied
// (so the caller may delete them).
func prefixKeys(b *store.Bucket, prefix []byte, limit int) [][]byte {
	var out [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
		out = append(out, bytes.Clone(k))
	}
	return out
}

// uidKey is a topic incarnation as a key (8 bytes, big-endian).
func uidKey(uid uint64) []byte { return binary.BigEndian.AppendUint64(nil, uid) }
