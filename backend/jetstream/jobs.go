package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/pace"
)

// Filter jobs (redrive and purge by filter; API.md, core/job.go) with the
// embedded engine's semantics (core/engine/jobs.go): a job walks the range
// of its stream fixed when it starts (first to last sequence then; what
// arrives later is not its business), selects messages with the job's
// core.MessageFilter and, chunk by chunk, redrives or purges them at most
// RatePerSecond a second.
//
// A job is a key of the MQGATE_JOBS bucket: the core.Job with its progress
// (the next sequence, the counters) and its owner, the instance running
// it, with the end of the owner's lease. The owner writes the record after
// every chunk, on the revision it last wrote: that renews the lease and
// records the progress, and a write refused on its revision means another
// instance took the job, so this one stops. Every instance follows the
// bucket (a watch) and keeps a timer at the earliest lease end of the
// RUNNING jobs it does not run; when a lease ends unrenewed (its owner
// died, stalled, or stopped and let it go), the instances race to take the
// job by a write on the revision they read from the bucket's leader, and
// the one that wins resumes it where the record says. A gateway that shuts
// down lets its jobs go at once (owner cleared), so another takes them
// without waiting for the lease to end.
//
// Nothing is moved twice: a redrive publishes a dead letter back with a
// Nats-Msg-Id naming its DLQ sequence (as RedriveIDs does, so a redrive by
// ids and a job cannot both send one either) and then deletes it from the
// DLQ; a purge deletes. A job resumed after its owner died redoes at most
// the owner's last unrecorded chunk, whose moves are then idempotent. What
// differs from embedded: that chunk's moves are not counted again (moved
// and matched may be short by at most one chunk after an owner dies); a
// topic purge deletes the messages from the topic's stream, so lookups by
// id or key no longer find them either; each message is one read from the
// stream's leader, so a job (and a dry run) goes at the speed of those
// reads.

const (
	jobsBucket = "MQGATE_JOBS"
	// jobLease is how long an owner holds a job without writing it.
	jobLease = 15 * time.Second
	// jobScan bounds the messages one chunk reads (one leader read each),
	// so a chunk ends, and renews the lease, well within jobLease.
	jobScan = 256
	// jobChunk bounds the messages one chunk moves.
	jobChunk = 256
)

// jobRecord is a job as the bucket holds it.
type jobRecord struct {
	core.Job
	Owner string    `json:"owner,omitempty"` // the instance running it
	Until time.Time `json:"until,omitzero"`  // the owner's lease end
}

// errJobTaken: the job's record was written by another instance.
var errJobTaken = errors.New("jetstream: job taken by another instance")

// errTargetGone fails a job whose stream was deleted (or made again)
// while it ran.
var errTargetGone = core.Errorf(core.ENotFound, "the topic or group was deleted while the job ran")

// jobRunner is the part of the backend that runs jobs on this instance.
type jobRunner struct {
	running map[string]bool // ids of the jobs this instance runs, under Backend.mu
}

func (b *Backend) createJobsBucket(ctx context.Context) error {
	var err error
	b.jobs, err = b.js.CreateOrUpdateKeyValue(ctx, jsapi.KeyValueConfig{
		Bucket: jobsBucket, Replicas: b.opts.Replicas, History: 1, Storage: jsapi.FileStorage,
	})
	if err != nil {
		return errors.Join(errors.New("jetstream: jobs bucket"), err)
	}
	return nil
}

// jobStream is what a job of kind on name walks: its stream and subject.
func jobStream(kind, name string) (stream, subject string) {
	if kind == core.JobTopicPurge {
		return topicStream(name), queueWildcard(name)
	}
	return dlqStream(name), dlqSubject(name)
}

// jobTarget is a new job of kind on name with its range: the stream's
// incarnation and its sequences [first, last] now. A DLQ that does not
// exist yet is an empty range; an unknown user topic is ENotFound.
func (b *Backend) jobTarget(ctx context.Context, kind, name string) (core.Job, error) {
	if err := core.ValidJobKind(kind); err != nil {
		return core.Job{}, err
	}
	j := core.Job{Kind: kind}
	if kind == core.JobTopicPurge {
		if !core.ValidName(name) {
			return j, core.FieldError("topic", "must match ^[A-Za-z0-9_-]{1,127}$")
		}
		if _, err := b.Topic(name); core.ErrorCode(err) == core.ENotFound {
			return j, core.Errorf(core.ENotFound, "topic %q does not exist", name)
		} else if err != nil {
			return j, err
		}
		j.Topic = name
	} else {
		if !core.ValidName(name) {
			return j, core.FieldError("group", "must match ^[A-Za-z0-9_-]{1,127}$")
		}
		j.Group = name
	}
	stream, _ := jobStream(kind, name)
	st, err := b.stream(ctx, stream)
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		if kind == core.JobTopicPurge {
			return j, core.Errorf(core.ENotFound, "topic %q does not exist", name)
		}
		return j, nil // nothing dead-lettered yet: nothing to walk
	} else if err != nil {
		return j, mapErr(err)
	}
	si := st.CachedInfo()
	j.UID = uint64(si.Created.UnixNano())
	j.Start, j.Ends = []int64{int64(si.State.FirstSeq)}, []int64{int64(si.State.LastSeq) + 1}
	j.At = j.Start[0]
	return j, nil
}

// jobScanned is what one chunk of a job selected and where the walk goes
// on.
type jobScanned struct {
	at   int64
	done bool
	msgs []*jsapi.RawStreamMsg
}

// scanJob selects up to limit messages of j's range from j.At, reading at
// most jobScan, from the stream's leader (a replica catching up would
// answer "none" for messages it has not applied yet).
func (b *Backend) scanJob(ctx context.Context, j *core.Job, sel core.JobSelector, limit int) (jobScanned, error) {
	c := jobScanned{at: j.At}
	if j.Queue >= len(j.Ends) {
		c.done = true
		return c, nil
	}
	stream, subject := jobStream(j.Kind, j.Topic+j.Group)
	st, err := b.stream(ctx, stream)
	if errors.Is(err, jsapi.ErrStreamNotFound) {
		return c, errTargetGone
	} else if err != nil {
		return c, mapErr(err)
	}
	if uint64(st.CachedInfo().Created.UnixNano()) != j.UID {
		return c, errTargetGone
	}
	end := j.Ends[j.Queue]
	c.at = max(c.at, int64(st.CachedInfo().State.FirstSeq)) // retention may have gone past it
	for scanned := 0; scanned < jobScan && len(c.msgs) < limit && c.at < end; scanned++ {
		raw, err := b.leaderMsg(ctx, stream, msgGet{Seq: uint64(c.at), NextBySubj: subject})
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			c.at = end
			break
		} else if err != nil {
			return c, mapErr(err)
		}
		if int64(raw.Sequence) >= end {
			c.at = end
			break
		}
		c.at = int64(raw.Sequence) + 1
		if sel.Match(decodeMessage(raw.Subject, raw.Header, raw.Data, raw.Sequence, raw.Time)) {
			c.msgs = append(c.msgs, raw)
		}
	}
	c.done = c.at >= end
	return c, nil
}

// CountMatching implements core.DeadLetterService: a dry run of a job of
// kind on name (a group for the DLQ kinds, a topic for
// core.JobTopicPurge) over what is stored now.
func (b *Backend) CountMatching(kind, name string, f core.MessageFilter) (int64, error) {
	sel, err := f.Compile()
	if err != nil {
		return 0, err
	}
	ctx, cancel := b.stopContext()
	defer cancel()
	j, err := b.jobTarget(ctx, kind, name)
	if err != nil {
		return 0, err
	}
	var n int64
	for {
		c, err := b.scanJob(ctx, &j, sel, jobScan)
		if err != nil {
			return 0, err
		}
		n += int64(len(c.msgs))
		if c.done {
			return n, nil
		}
		j.At = c.at
	}
}

// StartJob implements core.DeadLetterService: the job is stored, owned by
// this instance, before this returns RUNNING.
func (b *Backend) StartJob(kind, name string, f core.MessageFilter, ratePerSecond int) (core.Job, error) {
	sel, err := f.Compile()
	if err != nil {
		return core.Job{}, err
	}
	if ratePerSecond < 0 {
		return core.Job{}, core.FieldError("ratePerSecond", "must be positive")
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	j, err := b.jobTarget(ctx, kind, name)
	if err != nil {
		return core.Job{}, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	j.ID, j.Filter, j.RatePerSecond, j.State, j.StartedAt = core.NewMessageID(now), f, ratePerSecond, core.JobRunning, now
	rec := jobRecord{Job: j, Owner: b.opts.InstanceID, Until: time.Now().Add(jobLease)}
	raw, _ := json.Marshal(rec)
	rev, err := b.jobs.Create(ctx, j.ID, raw)
	if err != nil {
		return core.Job{}, mapErr(err)
	}
	if !b.spawnJob(rec, rev, sel) {
		// Shutting down: let it go for another instance to take.
		b.releaseJob(rec, rev)
	}
	b.log.Info().Str("job", j.ID).Str("kind", kind).Str("name", name).Int("ratePerSecond", ratePerSecond).Msg("job started")
	return j, nil
}

// GetJob implements core.DeadLetterService, from the bucket's leader.
func (b *Backend) GetJob(id string) (core.Job, error) {
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	rec, _, err := b.readJob(ctx, id)
	return rec.Job, err
}

// readJob reads a job's record and revision from the bucket's leader.
func (b *Backend) readJob(ctx context.Context, id string) (jobRecord, uint64, error) {
	var rec jobRecord
	notFound := core.Errorf(core.ENotFound, "job %q not found", id)
	if !core.ValidName(id) {
		return rec, 0, notFound
	}
	m, err := b.leaderMsg(ctx, "KV_"+jobsBucket, msgGet{LastBySubj: "$KV." + jobsBucket + "." + id})
	if errors.Is(err, jsapi.ErrMsgNotFound) || (err == nil && len(m.Data) == 0) {
		return rec, 0, notFound
	} else if err != nil {
		return rec, 0, mapErr(err)
	}
	if err := json.Unmarshal(m.Data, &rec); err != nil {
		return rec, 0, err
	}
	return rec, m.Sequence, nil
}

// writeJob stores rec on revision rev and returns the new one;
// errJobTaken when the record changed since.
func (b *Backend) writeJob(ctx context.Context, rec jobRecord, rev uint64) (uint64, error) {
	raw, _ := json.Marshal(rec)
	n, err := b.jobs.Update(ctx, rec.ID, raw, rev)
	if errors.Is(err, jsapi.ErrKeyRevisionMismatch) {
		return 0, errJobTaken
	} else if err != nil {
		return 0, mapErr(err)
	}
	return n, nil
}

// spawnJob runs rec (owned by this instance at rev) on a goroutine of the
// backend, unless it is closing or already runs it here.
func (b *Backend) spawnJob(rec jobRecord, rev uint64, sel core.JobSelector) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.jobRun.running[rec.ID] {
		return false
	}
	if b.jobRun.running == nil {
		b.jobRun.running = map[string]bool{}
	}
	b.jobRun.running[rec.ID] = true
	b.wg.Add(1)
	go b.runJob(rec, rev, sel)
	return true
}

func (b *Backend) runsJob(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.jobRun.running[id]
}

// runJob is a job's goroutine on its owner: scan, wait for the rate,
// move, record (renewing the lease), until the range is walked, the job
// fails, another instance takes it, or the backend closes.
func (b *Backend) runJob(rec jobRecord, rev uint64, sel core.JobSelector) {
	defer b.wg.Done()
	defer func() {
		b.mu.Lock()
		delete(b.jobRun.running, rec.ID)
		b.mu.Unlock()
	}()
	ctx, cancel := b.stopContext()
	defer cancel()
	p := pace.New(rec.RatePerSecond, jobChunk)
	defer p.Stop()
	log := b.log.With().Str("job", rec.ID).Logger()
	for {
		c, err := b.scanJob(ctx, &rec.Job, sel, p.Chunk())
		waited := err == nil && (len(c.msgs) == 0 || p.Wait(len(c.msgs), b.stop))
		var moved int
		if waited {
			moved, err = b.moveJobChunk(ctx, &rec.Job, c.msgs)
		}
		if waited && err == nil {
			rec.At, rec.Matched, rec.Moved = c.at, rec.Matched+int64(len(c.msgs)), rec.Moved+int64(moved)
			if c.done {
				rec.Queue++
			}
			rec.Until = time.Now().Add(jobLease)
			wctx, wcancel := b.ctx(ctx)
			var next uint64
			if next, err = b.writeJob(wctx, rec, rev); err == nil {
				rev = next
			}
			wcancel()
		}
		p.Took(moved)
		switch {
		case err == nil && rec.Queue >= len(rec.Ends):
			b.finishJob(rec, rev, nil)
			return
		case err == nil && !isClosing(b.stop):
			continue
		case errors.Is(err, errJobTaken):
			log.Info().Msg("job taken by another instance; stopped here")
			return
		case err == nil || isClosing(b.stop):
			b.releaseJob(rec, rev)
			return
		case core.ErrorCode(err) == core.EUnavailable:
			// The cluster is struggling: leave the job to whoever takes it
			// when its lease ends (this instance too), from its last
			// recorded chunk.
			log.Warn().Err(err).Msg("job step failed; it resumes when its lease ends")
			return
		default:
			b.finishJob(rec, rev, err)
			return
		}
	}
}

func isClosing(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// moveJobChunk redrives or purges msgs (of j's stream) and counts those
// it moved: one already gone (a concurrent redrive or purge took it) is
// not counted.
func (b *Backend) moveJobChunk(ctx context.Context, j *core.Job, msgs []*jsapi.RawStreamMsg) (int, error) {
	stream, _ := jobStream(j.Kind, j.Topic+j.Group)
	moved := 0
	for _, raw := range msgs {
		var took bool
		var err error
		if j.Kind == core.JobDLQRedrive {
			took, err = b.redriveOne(ctx, j.Group, raw)
		} else {
			took, err = b.deleteMsg(ctx, stream, raw.Sequence)
		}
		if err != nil {
			return moved, err
		}
		if !took {
			continue
		}
		moved++
		if j.Kind == core.JobDLQRedrive {
			b.recordID(j.Group, raw.Header.Get(hID), tlEvent{Type: core.EventRedriven, Job: j.ID})
		}
	}
	return moved, nil
}

// deleteMsg deletes seq from stream (STREAM.MSG.DELETE, answered by its
// leader; no erase); false when it was gone already.
func (b *Backend) deleteMsg(ctx context.Context, stream string, seq uint64) (bool, error) {
	body, _ := json.Marshal(struct {
		Seq     uint64 `json:"seq"`
		NoErase bool   `json:"no_erase"`
	}{seq, true})
	gone := false
	err := b.retryRead(ctx, func(ctx context.Context) error { // idempotent
		rctx, cancel := b.ctx(ctx)
		defer cancel()
		resp, err := b.nc.RequestWithContext(rctx, "$JS.API.STREAM.MSG.DELETE."+stream, body)
		if err != nil {
			return err
		}
		var r struct {
			Success bool            `json:"success"`
			Error   *jsapi.APIError `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil {
			return core.Errorf(core.EUnavailable, "JetStream: bad STREAM.MSG.DELETE answer: %v", err)
		}
		switch {
		case r.Error == nil:
			return nil
		case r.Error.ErrorCode == errCodeStreamNotFound:
			return errTargetGone
		case r.Error.Code == 404 || r.Error.ErrorCode == errCodeNoMessageFound:
			gone = true
			return nil
		}
		return r.Error
	})
	if err != nil {
		if errors.Is(err, errTargetGone) {
			return false, err
		}
		return false, mapErr(err)
	}
	return !gone, nil
}

// finishJob records rec as DONE (err nil) or FAILED.
func (b *Backend) finishJob(rec jobRecord, rev uint64, err error) {
	rec.State, rec.FinishedAt = core.JobDone, time.Now().UTC().Truncate(time.Millisecond)
	if err != nil {
		rec.State, rec.Error = core.JobFailed, err.Error()
	}
	rec.Owner, rec.Until = "", time.Time{}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	if _, werr := b.writeJob(ctx, rec, rev); werr != nil {
		b.log.Warn().Err(werr).Str("job", rec.ID).Msg("job end not recorded; it resumes when its lease ends")
		return
	}
	ev := b.log.Info()
	if err != nil {
		ev = b.log.Warn().Err(err)
	}
	ev.Str("job", rec.ID).Str("kind", rec.Kind).Str("state", rec.State).Int64("matched", rec.Matched).
		Int64("moved", rec.Moved).Dur("took", rec.FinishedAt.Sub(rec.StartedAt)).Msg("job finished")
}

// releaseJob lets rec go (owner cleared) for another instance to take at
// once; should that write fail, its lease ends by itself.
func (b *Backend) releaseJob(rec jobRecord, rev uint64) {
	rec.Owner, rec.Until = "", time.Time{}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	if _, err := b.writeJob(ctx, rec, rev); err != nil && !errors.Is(err, errJobTaken) {
		b.log.Warn().Err(err).Str("job", rec.ID).Msg("job not let go; another instance takes it when its lease ends")
	}
}

// takeJob takes job id if it is RUNNING and its lease has ended, and runs
// it here.
func (b *Backend) takeJob(id string) {
	if b.runsJob(id) {
		return
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	rec, rev, err := b.readJob(ctx, id)
	if err != nil || rec.State != core.JobRunning || time.Now().Before(rec.Until) {
		return
	}
	sel, err := rec.Filter.Compile()
	if err != nil {
		b.finishJob(rec, rev, err)
		return
	}
	rec.Owner, rec.Until = b.opts.InstanceID, time.Now().Add(jobLease)
	if rev, err = b.writeJob(ctx, rec, rev); err != nil {
		return // another instance was first (or the bucket is unreachable: the timer comes again)
	}
	b.log.Info().Str("job", id).Int64("moved", rec.Moved).Msg("job taken over")
	if !b.spawnJob(rec, rev, sel) {
		b.releaseJob(rec, rev)
	}
}

// superviseJobs follows the jobs bucket and takes the RUNNING jobs whose
// lease ends unrenewed: one timer, at the earliest such end.
func (b *Backend) superviseJobs(w jsapi.KeyWatcher) {
	defer b.wg.Done()
	defer w.Stop()
	leases := map[string]time.Time{} // RUNNING jobs this instance does not run: their lease end
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	arm := func() {
		timer.Stop()
		if len(leases) == 0 {
			return
		}
		ends := make([]time.Time, 0, len(leases))
		for _, t := range leases {
			ends = append(ends, t)
		}
		sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
		timer.Reset(max(time.Until(ends[0]), 0))
	}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil {
				continue // the initial values are in
			}
			var rec jobRecord
			if e.Operation() != jsapi.KeyValuePut || json.Unmarshal(e.Value(), &rec) != nil ||
				rec.State != core.JobRunning || b.runsJob(rec.ID) {
				delete(leases, e.Key())
			} else {
				leases[e.Key()] = rec.Until
			}
			arm()
		case <-timer.C:
			now := time.Now()
			for id, until := range leases {
				if !now.Before(until) {
					// Looked at again a lease later unless a write (the
					// take's, or its owner's) comes first.
					leases[id] = now.Add(jobLease)
					b.takeJob(id)
				}
			}
			arm()
		case <-b.stop:
			return
		}
	}
}

// startJobSupervisor starts superviseJobs (Open).
func (b *Backend) startJobSupervisor() error {
	w, err := b.jobs.WatchAll(context.Background())
	if err != nil {
		return errors.Join(errors.New("jetstream: watching the jobs bucket"), err)
	}
	b.wg.Add(1)
	go b.superviseJobs(w)
	return nil
}
