package engine

import (
	"sync/atomic"
	"time"

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
			start := time.Now()
			if err := e.clean(start); err != nil && core.ErrorCode(err) != core.EUnavailable {
				e.log.Error().Err(err).Msg("retention pass failed")
			}
			e.cleaner.passes.Add(1)
			e.cleaner.nanos.Add(int64(time.Since(start)))
			t.Reset(e.opts.RetentionCheckInterval)
		}
	}
}

// cleanerStats count the retention cleaner's passes and the time they
// took, for metrics (RetentionStats).
type cleanerStats struct {
	passes atomic.Int64
	nanos  atomic.Int64
}

// RetentionStats are the retention cleaner's counters since start.
type RetentionStats struct {
	Passes int64         // passes finished (each reads every queue's head)
	Time   time.Duration // spent in them
}

// RetentionStats reports the retention cleaner's counters. With the
// store's WriterStats.Updates it shows what a pass costs: a pass that finds
// nothing expired adds a pass and no write transaction.
func (e *Engine) RetentionStats() RetentionStats {
	return RetentionStats{Passes: e.cleaner.passes.Load(), Time: time.Duration(e.cleaner.nanos.Load())}
}

// expiredQueue is a queue whose head is older than its topic's retention.
type expiredQueue struct {
	topic  store.TopicRecord
	queue  int
	cutoff int64 // unix ms: messages stored before it go
}

// trimExpired is retention's half of a pass (clean) as of now. It decides in one read transaction which
// queues have an expired head (reading each queue's range, head unit and
// record header: no body), and writes only when some have: the min offsets
// of all of them move past their expired messages (store.Tx.TrimQueue, a
// search by store time, nothing deleted) in a few small transactions;
// then the store segments left without a visible message are dropped
// whole (dropSegments). A pass with nothing expired costs no write
// transaction. The schedule topic is never trimmed here: its messages are
// not due yet (the schedule service trims its delivered head).
func (e *Engine) trimExpired(now time.Time) error {
	t0 := time.Now()
	var due []expiredQueue
	if err := e.view(func(tx store.ReadTx) error {
		due = due[:0]
		topics, err := tx.ListTopics()
		if err != nil {
			return err
		}
		for _, t := range topics {
			if t.Name == core.ScheduleTopic {
				continue
			}
			cutoff := now.Add(-time.Duration(t.RetentionHours) * e.opts.RetentionUnit).UnixMilli()
			for q := range t.Queues {
				head, ok, err := tx.QueueHead(t.UID, q)
				if err != nil {
					return err
				}
				if ok && head < cutoff {
					due = append(due, expiredQueue{topic: t, queue: q, cutoff: cutoff})
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	removed, chunks := 0, 0
	for len(due) > 0 {
		select {
		case <-e.closing:
			return nil
		default:
		}
		n := 0
		err := e.update(func(tx store.Tx) error {
			n = 0
			left := due
			for len(left) > 0 && n < trashChunk {
				d := left[0]
				// The topic may have been deleted (or recreated) meanwhile.
				cur, ok, err := tx.GetTopic(d.topic.Name)
				if err != nil {
					return err
				}
				if !ok || cur.UID != d.topic.UID {
					left = left[1:]
					continue
				}
				k, err := tx.TrimQueue(cur, d.queue, d.cutoff)
				if err != nil {
					return err
				}
				n += k
				left = left[1:]
			}
			due = left // an error below ends the pass, so a rollback loses nothing
			return nil
		})
		if err != nil {
			return err
		}
		removed += n
		chunks++
	}
	if removed > 0 {
		e.segsDue.Store(true)
		e.log.Info().Int("messages", removed).Int("transactions", chunks).Dur("took", time.Since(t0)).Msg("retention moved queue min offsets past expired messages")
	}
	if !e.segsDue.Swap(false) {
		return nil // no queue moved since the last look: no segment became droppable
	}
	if err := e.dropSegments("retention"); err != nil {
		e.segsDue.Store(true)
		return err
	}
	return nil
}

// dropSegments frees the store segments in which no message is visible any
// more (retention moved every queue past them, or their topics were
// deleted): it finds them in a read transaction and drops each whole in a
// transaction of its own (store.Tx.DropSegment: its pages become free, no
// record is read), so a pass with nothing to drop writes nothing.
func (e *Engine) dropSegments(why string) error {
	var starts []int64
	if err := e.view(func(tx store.ReadTx) (err error) {
		starts, err = tx.DroppableSegments()
		return err
	}); err != nil || len(starts) == 0 {
		return err
	}
	t0 := time.Now()
	var n int
	var bytes, records int64
	for _, start := range starts {
		select {
		case <-e.closing:
			return nil
		default:
		}
		// Read its pages ahead, outside the write transaction: the drop
		// then visits them in the page cache (store.PrefetchSegment).
		if err := e.st.PrefetchSegment(start); err != nil {
			e.log.Debug().Err(err).Int64("segment", start).Msg("segment prefetch failed")
		}
		dropped := false
		if err := e.update(func(tx store.Tx) error {
			info, ok, err := tx.DropSegment(start)
			if ok {
				n++
				bytes += info.Bytes
				records += info.Records
			}
			dropped = ok
			return err
		}); err != nil {
			return err
		}
		// The drop touched every page of it through bbolt's map: let the
		// kernel unmap them, so the server's resident memory does not grow
		// by the data it frees.
		if dropped {
			if err := e.st.ReleaseMapping(); err != nil {
				e.log.Debug().Err(err).Int64("segment", start).Msg("segment pages not released")
			}
		}
	}
	if n > 0 {
		took := time.Since(t0)
		e.log.Info().Str("reason", why).Int("segments", n).Int64("messages", records).Int64("bytes", bytes).
			Dur("took", took).Float64("MBps", float64(bytes)/1e6/max(took.Seconds(), 1e-6)).
			Msg("store segments dropped")
	}
	return nil
}

// clean runs one retention pass as of now: expired queue heads
// (trimExpired), then expired idempotency records (dedup.go, which also
// reads before it writes).
func (e *Engine) clean(now time.Time) error {
	if err := e.trimExpired(now); err != nil {
		return err
	}
	n, err := e.sweepDedup(now)
	if err != nil {
		return err
	}
	if n > 0 {
		e.log.Debug().Int("keys", n).Msg("expired idempotency keys removed")
	}
	return nil
}
