package engine

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Jobs: redrive and purge by filter (API.md "Redrive and purge by
// filter"). A job walks a queue range fixed when it starts (the queues'
// ends then: what arrives later is not its business), selects messages
// with a core.MessageFilter and, chunk by chunk, redrives or purges them at
// most RatePerSecond a second. Each chunk's moves and the job's progress
// (queue, offset, counters) commit in one transaction, and every moved
// entry is marked (dlq.redriven), so a job resumed after a crash never
// moves anything twice. A job runs on one goroutine owned by the engine:
// Close stops it between chunks (it stays RUNNING in the file) and Open
// resumes every RUNNING job.

// bucketJobs: job id → JSON Job.
var bucketJobs = store.Register("core/engine", "jobs")

// jobTable owns the job goroutines (Close waits for them).
type jobTable struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func putJob(tx store.Tx, j *core.Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketJobs).Put([]byte(j.ID), b)
}

// jobHook stores j (its progress) in the transaction of a chunk.
func jobHook(j core.Job) store.Hook {
	return func(tx store.Tx) error { return putJob(tx, &j) }
}

// GetJob returns a job (ENotFound if unknown).
func (e *Engine) GetJob(id string) (core.Job, error) {
	var j core.Job
	err := e.view(func(tx store.ReadTx) error {
		b := tx.Bucket(bucketJobs)
		var v []byte
		if b != nil {
			v = b.Get([]byte(id))
		}
		if v == nil {
			return core.Errorf(core.ENotFound, "job %q not found", id)
		}
		return json.Unmarshal(v, &j)
	})
	return j, err
}

// jobTarget resolves what a job of kind on name walks: the queue topic,
// its incarnation and each queue's [start, end) now. A DLQ that does not
// exist yet is an empty range; an unknown user topic is ENotFound.
func (e *Engine) jobTarget(kind, name string) (topic string, uid uint64, start, ends []int64, err error) {
	if !core.ValidName(name) {
		field := "group"
		if kind == core.JobTopicPurge {
			field = "topic"
		}
		return "", 0, nil, nil, core.FieldError(field, "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	topic = name
	if kind != core.JobTopicPurge {
		topic = core.DLQTopic(name)
	}
	err = e.view(func(tx store.ReadTx) error {
		rec, ok, err := tx.GetTopic(topic)
		if err != nil {
			return err
		}
		if !ok {
			if kind == core.JobTopicPurge {
				return core.Errorf(core.ENotFound, "topic %q does not exist", name)
			}
			return nil
		}
		uid = rec.UID
		for q := range rec.Queues {
			lo, hi, err := tx.QueueRange(rec.UID, q)
			if err != nil {
				return err
			}
			start, ends = append(start, lo), append(ends, hi)
		}
		return nil
	})
	return topic, uid, start, ends, err
}

// CountMatching is a dry run: how many waiting messages a job of kind on
// name (a group for the DLQ kinds, a topic for core.JobTopicPurge) would
// select now.
func (e *Engine) CountMatching(kind, name string, f core.MessageFilter) (int64, error) {
	sel, err := f.Compile()
	if err != nil {
		return 0, err
	}
	if err := core.ValidJobKind(kind); err != nil {
		return 0, err
	}
	topic, uid, start, ends, err := e.jobTarget(kind, name)
	if err != nil {
		return 0, err
	}
	j := core.Job{Kind: kind, Topic: topic, UID: uid, Start: start, Ends: ends}
	if len(start) > 0 {
		j.At = start[0]
	}
	var n int64
	for {
		var c jobChunk
		err := e.view(func(tx store.ReadTx) error {
			var err error
			c, err = scanJob(tx, &j, topic, sel, dlqScanLimit)
			return err
		})
		if err != nil {
			return 0, err
		}
		n += int64(len(c.offs))
		j.Queue, j.At = c.queue, c.at
		if c.done {
			return n, nil
		}
	}
}

// StartJob starts a redrive or purge job (kind) on name (a group for the
// DLQ kinds, a user topic for core.JobTopicPurge) at ratePerSecond (0:
// unbounded) and returns it RUNNING; it is stored before this returns.
func (e *Engine) StartJob(kind, name string, f core.MessageFilter, ratePerSecond int) (core.Job, error) {
	sel, err := f.Compile()
	if err != nil {
		return core.Job{}, err
	}
	if err := core.ValidJobKind(kind); err != nil {
		return core.Job{}, err
	}
	if ratePerSecond < 0 {
		return core.Job{}, core.FieldError("ratePerSecond", "must be positive")
	}
	_, uid, start, ends, err := e.jobTarget(kind, name)
	if err != nil {
		return core.Job{}, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	j := core.Job{ID: newID(now), Kind: kind, Filter: f, RatePerSecond: ratePerSecond, State: core.JobRunning,
		StartedAt: now, UID: uid, Start: start, Ends: ends}
	if kind == core.JobTopicPurge {
		j.Topic = name
	} else {
		j.Group = name
	}
	if len(start) > 0 {
		j.At = start[0]
	}
	if err := e.update(func(tx store.Tx) error { return putJob(tx, &j) }); err != nil {
		return core.Job{}, err
	}
	if err := e.spawnJob(j, sel); err != nil {
		return core.Job{}, err
	}
	e.log.Info().Str("job", j.ID).Str("kind", kind).Str("name", name).Int("ratePerSecond", ratePerSecond).Msg("job started")
	return j, nil
}

// spawnJob starts j's goroutine unless the engine is closing (then j
// stays RUNNING in the file and resumes at the next open).
func (e *Engine) spawnJob(j core.Job, sel core.JobSelector) error {
	e.jobs.mu.Lock()
	defer e.jobs.mu.Unlock()
	if e.jobs.closed {
		return core.ErrClosed
	}
	e.jobs.wg.Add(1)
	go e.runJob(j, sel)
	return nil
}

// stopJobs stops every job goroutine and waits for them (Close, after
// e.closing is closed).
func (e *Engine) stopJobs() {
	e.jobs.mu.Lock()
	e.jobs.closed = true
	e.jobs.mu.Unlock()
	e.jobs.wg.Wait()
}

// resumeJobs creates the jobs bucket and restarts every RUNNING job
// (Open).
func (e *Engine) resumeJobs() error {
	var running []core.Job
	err := e.update(func(tx store.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketJobs)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			var j core.Job
			if err := json.Unmarshal(v, &j); err != nil {
				return fmt.Errorf("engine: job %s: %w", k, err)
			}
			if j.State == core.JobRunning {
				running = append(running, j)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, j := range running {
		sel, err := j.Filter.Compile()
		if err != nil {
			e.finishJob(j, err)
			continue
		}
		e.log.Info().Str("job", j.ID).Str("kind", j.Kind).Int64("moved", j.Moved).Msg("job resumed")
		if err := e.spawnJob(j, sel); err != nil {
			return err
		}
	}
	return nil
}
