package engine

import (
	"context"
	"errors"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/internal/pace"
)

// queueTopic is the topic a job walks.
func queueTopic(j *core.Job) string {
	if j.Kind == core.JobTopicPurge {
		return j.Topic
	}
	return core.DLQTopic(j.Group)
}

// markKey is the mark of a moved entry: the DLQ's redrive mark, or a
// topic's purge mark.
func markKey(j *core.Job, qid int, off int64) []byte {
	if j.Kind == core.JobTopicPurge {
		return purgedKey(j.UID, qid, off)
	}
	return redrivenKey(j.UID, off)
}

// jobChunk is what one scan selected and where the walk goes on.
type jobChunk struct {
	queue int
	at    int64
	done  bool
	offs  []int64
	msgs  []*core.Message
}

// errTargetGone fails a job whose topic or group was deleted meanwhile.
var errTargetGone = core.Errorf(core.ENotFound, "the topic or group was deleted while the job ran")

// scanJob selects up to limit unmarked messages of j's current queue from
// j.At, scanning at most dlqScanLimit units; at the queue's end (as of
// the job's start) it moves on to the next queue.
func scanJob(tx store.ReadTx, j *core.Job, topic string, sel core.JobSelector, limit int) (jobChunk, error) {
	c := jobChunk{queue: j.Queue, at: j.At}
	if j.Queue >= len(j.Ends) {
		c.done = true
		return c, nil
	}
	rec, ok, err := tx.GetTopic(topic)
	if err != nil {
		return c, err
	}
	if !ok || rec.UID != j.UID {
		return c, errTargetGone
	}
	lo, _, err := tx.QueueRange(j.UID, j.Queue)
	if err != nil {
		return c, err
	}
	end := j.Ends[j.Queue]
	c.at = max(c.at, lo) // retention may have gone past it
	marks := tx.Bucket(bucketRedriven)
	scanned, size := 0, 0
	err = tx.ScanQueue(j.UID, j.Queue, c.at, func(off int64, u store.Unit) bool {
		if off >= end || scanned == dlqScanLimit || len(c.offs) == limit || size >= moveBatchBytes {
			return false
		}
		scanned++
		c.at = off + 1
		if marks.Get(markKey(j, j.Queue, off)) != nil {
			return true
		}
		m, err := tx.MessageAt(u.CommitLogOffset)
		if err != nil || m == nil || !sel.Match(m) {
			return true // a corrupt record is the reads' to set aside
		}
		c.offs = append(c.offs, off)
		c.msgs = append(c.msgs, m)
		size += len(m.Body)
		return true
	})
	if c.at >= end {
		c.queue++
		c.at = 0
		if c.queue < len(j.Start) {
			c.at = j.Start[c.queue]
		}
		c.done = c.queue >= len(j.Ends)
	}
	return c, err
}

// runJob is a job's goroutine: scan, wait for the rate, move, record,
// until the range is walked, the job fails, or the engine closes.
func (e *Engine) runJob(j core.Job, sel core.JobSelector) {
	defer e.jobs.wg.Done()
	p := pace.New(j.RatePerSecond, moveBatch)
	defer p.Stop()
	topic := queueTopic(&j)
	for {
		var c jobChunk
		err := e.view(func(tx store.ReadTx) error {
			var err error
			c, err = scanJob(tx, &j, topic, sel, p.Chunk())
			return err
		})
		if err == nil && len(c.offs) > 0 && !p.Wait(len(c.offs), e.closing) {
			err = core.ErrClosed
		}
		var moved int
		if err == nil {
			moved, err = e.moveChunk(&j, c)
		}
		if errors.Is(err, errConflictRetry) {
			continue // a concurrent redrive took some: scan again from the same place
		}
		if err != nil {
			if errors.Is(err, core.ErrClosed) {
				return // stays RUNNING; resumed at the next open
			}
			e.finishJob(j, err)
			return
		}
		p.Took(moved)
		if c.done {
			e.finishJob(j, nil)
			return
		}
	}
}

// errConflictRetry: a chunk's entries were marked by someone else between
// the scan and the commit.
var errConflictRetry = errors.New("engine: job chunk raced a redrive")

// moveChunk redrives or purges c's messages and records j's progress in
// the same transaction; on success j holds the new progress.
func (e *Engine) moveChunk(j *core.Job, c jobChunk) (int, error) {
	next := *j
	next.Queue, next.At = c.queue, c.at
	next.Matched += int64(len(c.offs))
	if j.Kind == core.JobDLQRedrive && len(c.offs) > 0 {
		now := time.Now().UTC()
		ops := make([]putOp, len(c.msgs))
		for i, m := range c.msgs {
			ops[i] = putOp{topic: core.RetryTopic(j.Group), queueID: 0, msg: copyForGroup(m, now)}
		}
		next.Moved += int64(len(c.offs))
		e.sched.redriveMu.Lock()
		err := e.commit(context.Background(), ops, chainHooks(jobTargetGuard(queueTopic(j), j.UID),
			redriveHook(j.UID, c.offs), jobHook(next)))
		e.sched.redriveMu.Unlock()
		if core.ErrorCode(err) == core.EConflict {
			return 0, errConflictRetry
		}
		if err != nil {
			return 0, err
		}
		e.sched.redriven.Add(int64(len(ops)))
		*j = next
		if f := e.opts.JobRedriven; f != nil {
			ids := make([]string, len(c.msgs))
			for i, m := range c.msgs {
				ids[i] = m.UserID()
			}
			f(j, ids)
		}
		return len(ops), nil
	}
	moved := 0
	e.sched.redriveMu.Lock()
	err := e.update(func(tx store.Tx) error {
		if err := jobTargetGuard(queueTopic(j), j.UID)(tx); err != nil {
			return err
		}
		b := tx.Bucket(bucketRedriven)
		moved = 0
		for _, off := range c.offs {
			k := markKey(j, j.Queue, off)
			if b.Get(k) != nil {
				continue // taken by a concurrent redrive: not ours to count
			}
			if err := b.Put(k, []byte{}); err != nil {
				return err
			}
			moved++
		}
		n := next
		n.Moved += int64(moved)
		return putJob(tx, &n)
	})
	e.sched.redriveMu.Unlock()
	if err != nil {
		return 0, err
	}
	next.Moved += int64(moved)
	*j = next
	return moved, nil
}

// jobTargetGuard fails a chunk whose topic no longer has incarnation uid.
func jobTargetGuard(topic string, uid uint64) store.Hook {
	return func(tx store.Tx) error {
		rec, ok, err := tx.GetTopic(topic)
		if err != nil {
			return err
		}
		if !ok || rec.UID != uid {
			return errTargetGone
		}
		return nil
	}
}

// finishJob records j as DONE (err nil) or FAILED.
func (e *Engine) finishJob(j core.Job, err error) {
	j.State, j.FinishedAt = core.JobDone, time.Now().UTC().Truncate(time.Millisecond)
	if err != nil {
		j.State, j.Error = core.JobFailed, err.Error()
	}
	if uerr := e.update(func(tx store.Tx) error { return putJob(tx, &j) }); uerr != nil {
		e.log.Warn().Err(uerr).Str("job", j.ID).Msg("job end not recorded; it resumes at the next open")
		return
	}
	ev := e.log.Info()
	if err != nil {
		ev = e.log.Warn().Err(err)
	}
	ev.Str("job", j.ID).Str("kind", j.Kind).Str("state", j.State).Int64("matched", j.Matched).Int64("moved", j.Moved).
		Dur("took", j.FinishedAt.Sub(j.StartedAt)).Msg("job finished")
}
