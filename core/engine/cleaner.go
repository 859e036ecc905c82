package engine

import (
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// cleanLoop is the retention cleaner (RocketMQ CleanCommitLogService +
// CleanConsumeQueueService): one goroutine, one timer re-armed after each
// pass; the first pass runs at start. (Deleted topics are emptied by
// trashLoop, trash.go.)
func (e *Engine) cleanLoop() {
	defer e.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-e.closing:
			return
		case <-t.C:
			if err := e.clean(); err != nil && core.ErrorCode(err) != core.EUnavailable {
				e.log.Error().Err(err).Msg("retention pass failed")
			}
			t.Reset(e.opts.RetentionCheckInterval)
		}
	}
}

// clean runs one pass: trim every queue's head of
// messages older than its topic's retention, then drop expired idempotency
// records (dedup.go), in small transactions so
// publishers wait at most one chunk. The schedule topic is never trimmed:
// its messages are not due yet.
func (e *Engine) clean() error {
	var topics []store.TopicRecord
	if err := e.view(func(tx *bolt.Tx) (err error) {
		topics, err = store.ListTopics(tx)
		return err
	}); err != nil {
		return err
	}
	removed := 0
	for _, t := range topics {
		if t.Name == core.ScheduleTopic {
			continue
		}
		cutoff := time.Now().Add(-time.Duration(t.RetentionHours) * e.opts.retentionUnit).UnixMilli()
		for q := range t.Queues {
			for more := true; more; {
				select {
				case <-e.closing:
					return nil
				default:
				}
				err := e.update(func(tx *bolt.Tx) error {
					// The topic may have been deleted (or recreated) meanwhile.
					cur, ok, err := store.GetTopic(tx, t.Name)
					if err != nil || !ok || cur.UID != t.UID {
						more = false
						return err
					}
					n, m, err := store.TrimQueue(tx, cur, q, cutoff, trashChunk)
					removed += n
					more = m
					return err
				})
				if err != nil {
					return err
				}
			}
		}
	}
	if removed > 0 {
		e.log.Info().Int("messages", removed).Msg("retention removed expired messages")
	}
	if n, err := e.sweepDedup(time.Now()); err != nil {
		return err
	} else if n > 0 {
		e.log.Debug().Int("keys", n).Msg("expired idempotency keys removed")
	}
	return nil
}
