package store

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Op appends one message to one queue.
type Op struct {
	Topic   string
	QueueID int
	// Record is the message encoded by EncodeMessage; the writer patches its
	// queue id, queue offset and store time and seals its checksum.
	Record []byte
	// ID and Keys feed the id and key indexes.
	ID   string
	Keys []string
	// TagsCode goes in the consume-queue unit: the tag hash for normal
	// topics, the due time (unix ms) for schedule queues.
	TagsCode int64
	// AutoCreate, when > 0, creates the topic with that many queues if it is
	// absent (system topics: %RETRY%g, %DLQ%g, SCHEDULE_TOPIC_XXXX), and grows
	// it if QueueID is beyond its queues.
	AutoCreate int
	// ExpectUID, when non-zero, is the incarnation (TopicRecord.UID) the op
	// was meant for: if the topic is absent or has another UID the request
	// fails with ENotFound (nothing is created), so a message of a deleted
	// topic never lands in a new topic of the same name.
	ExpectUID uint64
}

// Placed is where an Op landed.
type Placed struct {
	QueueOffset     int64
	CommitLogOffset int64
	StoredAt        time.Time
}

// Hook runs inside the transaction that commits its request, after the
// request's appends (the schedule service advances its offset there). Like
// bbolt's Batch function it may run more than once when a group is retried,
// so it must only act through tx.
type Hook func(tx Tx) error

// Request is one unit of group commit: all its ops and its hook commit
// together or not at all (a batch publish is one request).
type Request struct {
	ops    []Op
	hook   Hook
	size   int
	placed []Placed
	err    error
	done   chan struct{}
	// lazy requests (core.WithLazyCommit) may wait up to Options.Linger
	// for company before the writer commits them.
	lazy bool
	// rec holds what hook wrote in the current attempt, for the log-ahead.
	rec recorder
	// ctx is Commit's, kept only for Options.OnGroup.
	ctx context.Context
}

// Commit appends ops (and runs hook) atomically and durably: it returns once
// the transaction holding them is committed and synced. Concurrent callers
// share transactions (RocketMQ GroupCommitService). If ctx ends first, Commit
// returns ctx's error; the request may still commit.
func (s *Store) Commit(ctx context.Context, ops []Op, hook Hook) ([]Placed, error) {
	r := &Request{ops: ops, hook: hook, done: make(chan struct{}), lazy: core.IsLazyCommit(ctx)}
	if s.opts.OnGroup != nil {
		r.ctx = ctx
	}
	for i := range ops {
		r.size += len(ops[i].Record)
	}
	s.sendMu.RLock()
	if s.closed {
		s.sendMu.RUnlock()
		return nil, core.ErrClosed
	}
	select {
	case s.reqs <- r:
	case <-ctx.Done():
		s.sendMu.RUnlock()
		return nil, ctx.Err()
	}
	s.sendMu.RUnlock()
	select {
	case <-r.done:
		return r.placed, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WriterStats counts the writer's work: Requests/Groups is the mean group
// size, the measure of how well group commit amortises fsync; Apply is the
// time spent appending inside transactions, Commit the time spent
// committing them (the log-ahead record's write and bbolt's page writes;
// the fdatasync is the syncer's, Sync).
// Updates counts the read-write transactions run outside group commit
// (Store.Update: topic changes, retention and trash chunks, consumer group
// configs and offset resets), each of which makes publishers wait.
type WriterStats struct {
	Groups, Requests uint64
	Apply, Commit    time.Duration
	// Failing is set while the store cannot commit: the last group commit
	// failed (disk full, I/O error); the next one that succeeds clears it.
	Failing bool
	// CommitFailures counts the group commits that failed (each answered
	// its requests 503), so a failure between two scrapes is not missed.
	CommitFailures uint64
	Updates        uint64
	// PageWrites counts the page runs the group commits wrote (bbolt's
	// TxStats.Write: one per dirty node spilled, plus the meta page), and
	// Pages the pages they allocated: PageWrites/Groups is the scattered
	// writes one fsync pays for.
	PageWrites, Pages uint64
	// Checkpoints counts the checkpoints made (checkpoint.go), rewinds
	// and rolling ones; CheckpointTime is the time the writer stood still
	// for them (publishers wait): a rewind's sync of the store file, the
	// start of a rolling one, whose sync runs beside the writer.
	Checkpoints    uint64
	CheckpointTime time.Duration
	// CheckpointFreelists counts the checkpoints that wrote bbolt's
	// freelist (all but those with a large one, checkpoint.go): a crash
	// after one of them starts without reading every page.
	CheckpointFreelists uint64
	// Syncs counts the syncer's fdatasyncs of the log-ahead, Sync their
	// time: Groups/Syncs is how many groups one fdatasync made durable.
	Syncs uint64
	Sync  time.Duration
}

type writerCounters struct {
	groups, requests, applyNanos, commitNanos, updates atomic.Uint64
	pageWrites, pages, checkpoints, syncs, syncNanos   atomic.Uint64
	checkpointNanos, freelists, commitFailures         atomic.Uint64
	failing                                            atomic.Bool
}

// Stats returns the writer's counters.
func (s *Store) Stats() WriterStats {
	return WriterStats{Groups: s.stats.groups.Load(), Requests: s.stats.requests.Load(),
		Apply: time.Duration(s.stats.applyNanos.Load()), Commit: time.Duration(s.stats.commitNanos.Load()),
		Failing: s.stats.failing.Load(), CommitFailures: s.stats.commitFailures.Load(), Updates: s.stats.updates.Load(),
		PageWrites: s.stats.pageWrites.Load(), Pages: s.stats.pages.Load(),
		Checkpoints: s.stats.checkpoints.Load(), CheckpointTime: time.Duration(s.stats.checkpointNanos.Load()),
		CheckpointFreelists: s.stats.freelists.Load(),
		Syncs:               s.stats.syncs.Load(), Sync: time.Duration(s.stats.syncNanos.Load())}
}

// maxGroup bounds the requests of one group so one transaction's dirty
// pages stay modest.
const maxGroup = 1024

// writeLoop is the single writer: it takes every request waiting, commits
// them in one transaction with one fsync, answers them, and repeats. There
// is no delay for ordinary requests: those arriving during a commit form
// the next group. A group of only lazy requests (a consumer's position
// writes) waits up to Options.Linger for an ordinary request to share its
// commit, so position writes cost no transaction of their own while
// anything is published, and at most one per Linger when nothing is. It
// exits when Close closes reqs, after committing what was queued.
// Between groups it checkpoints the log-ahead when it has grown enough or
// is old enough (afterGroup), and once no group came for Options.CheckpointIdle,
// so an idle store is synced and its log empty.
func (s *Store) writeLoop() {
	defer close(s.done)
	defer close(s.syncq) // after the last group: the syncer answers it and exits
	var lastStored int64
	group := make([]*Request, 0, maxGroup)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	defer linger.Stop()
	ckpt := time.NewTimer(time.Hour)
	ckpt.Stop()
	defer ckpt.Stop()
	for {
		var r *Request
		select {
		case req, ok := <-s.reqs:
			if !ok {
				return
			}
			r = req
		case <-ckpt.C:
			s.checkpointNow()
			continue
		}
		group = append(group[:0], r)
		g := gathering{bytes: r.size, eager: !r.lazy}
		if s.gather(&group, &g, nil) && !g.eager && s.opts.Linger > 0 {
			linger.Reset(s.opts.Linger)
			s.gather(&group, &g, linger.C) // a closed reqs ends the loop above
			linger.Stop()
		}
		lastStored = s.commitGroup(group, lastStored)
		s.stats.groups.Add(1)
		s.stats.requests.Add(uint64(len(group)))
		if s.wal == nil {
			continue
		}
		if s.afterGroup() {
			ckpt.Reset(s.opts.CheckpointIdle)
		} else {
			ckpt.Stop()
		}
	}
}

// writebackPages is how many pages the commits may dirty in the store
// file before the syncer starts their writing back (256 KiB). Small
// steps keep the disk's queue short for the log's fdatasync, which waits
// behind whatever is queued: publish->receive p99 at 1,000 msgs/s, paired
// rounds, was 0.74x with 1 MiB steps against 8 MiB, 0.91x more with
// 256 KiB, and 1.13x worse again with 64 KiB (a step per group);
// throughput did not move.
const writebackPages = 64

// afterGroup is the writer's log-ahead work between groups: it installs a
// rolling checkpoint that has finished and starts the checkpoint the log
// calls for (checkpoint.go). It reports whether the idle checkpoint is to
// be armed: the log holds records, or a rolling checkpoint is under way.
func (s *Store) afterGroup() (armIdle bool) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w := s.wal
	if w.err() != nil {
		return false
	}
	err := s.finishRolling(false)
	if err == nil {
		switch w.due(&s.opts) {
		case rewindCheckpoint:
			err = s.checkpoint()
		case rollingCheckpoint:
			err = s.beginRolling()
		}
	}
	if err != nil {
		s.log.Error().Err(err).Msg("checkpoint failed")
		return false // every commit now fails with the log's error
	}
	return w.records || w.rolling != nil
}

// checkpointNow is the idle checkpoint: it waits for a rolling checkpoint
// under way and, if the log holds records, rewinds it, so an idle store is
// synced and its log empty. A failure breaks the log (every commit then
// fails with it) and is logged once here.
func (s *Store) checkpointNow() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wal.err() != nil {
		return
	}
	err := s.finishRolling(true)
	if err == nil && (s.wal.records || s.wal.pages != 0) {
		err = s.checkpoint()
	}
	if err != nil {
		s.log.Error().Err(err).Msg("checkpoint failed")
	}
}

// gathering is the state of the group being formed.
type gathering struct {
	bytes int
	eager bool // holds a request that must not wait
}

// gather adds waiting requests to group up to its bounds. With wait nil it
// takes only what is queued now; otherwise it blocks for more until wait
// fires or an eager request joins, then takes what is queued. It returns
// false once reqs is closed.
func (s *Store) gather(group *[]*Request, g *gathering, wait <-chan time.Time) bool {
	for len(*group) < maxGroup && g.bytes < s.opts.MaxGroupBytes {
		var r *Request
		var ok bool
		if wait == nil || g.eager {
			select {
			case r, ok = <-s.reqs:
			default:
				return true
			}
		} else {
			select {
			case r, ok = <-s.reqs:
			case <-wait:
				wait = nil
				continue
			}
		}
		if !ok {
			return false
		}
		*group = append(*group, r)
		g.bytes += r.size
		g.eager = g.eager || !r.lazy
	}
	return true
}

// commitGroup commits group and hands it to the syncer, which answers
// it once its log record is durable; a request that breaks the
// transaction is failed at once and the others are retried together
// without it.
func (s *Store) commitGroup(group []*Request, lastStored int64) int64 {
	now := time.Now()
	storedAt := max(now.UnixMilli(), lastStored)
	pending := group
	for len(pending) > 0 {
		bad, adv, marks, err := s.tryGroup(pending, storedAt)
		if bad >= 0 {
			pending[bad].err = err
			close(pending[bad].done)
			pending = append(pending[:bad:bad], pending[bad+1:]...)
			continue
		}
		s.syncq <- &syncBatch{reqs: slices.Clone(pending), adv: adv, marks: marks, err: err, start: now}
		break
	}
	return storedAt
}

// syncBatch is a committed group on its way to its answer.
type syncBatch struct {
	reqs  []*Request
	adv   []Advance
	marks []qmark // gates held for it (gate.go)
	err   error   // the commit's own failure
	start time.Time
}

// syncLoop is the syncer: it takes every committed group waiting, makes
// them durable with one fdatasync of the log-ahead, opens their gates,
// reports their advances and answers them, while the writer commits the
// next group. It exits when the writer closes syncq.
func (s *Store) syncLoop() {
	defer close(s.syncDone)
	batches := make([]*syncBatch, 0, 64)
	for b := range s.syncq {
		batches = append(batches[:0], b)
	more:
		for len(batches) < cap(batches) {
			select {
			case b, ok := <-s.syncq:
				if !ok {
					break more
				}
				batches = append(batches, b)
			default:
				break more
			}
		}
		var syncErr error
		if s.beforeSync != nil {
			s.beforeSync()
		}
		if s.wal != nil {
			t0 := time.Now()
			syncErr = s.wal.sync()
			s.stats.syncNanos.Add(uint64(time.Since(t0)))
			s.stats.syncs.Add(1)
		}
		for _, b := range batches {
			s.answer(b, syncErr)
		}
		if s.wal != nil && s.wal.unsynced.Load() >= writebackPages {
			// The store file's pages are synced only at checkpoints; left
			// to pile up, a checkpoint's sync takes tens of milliseconds.
			// Started here, a few at a time, their writing overlaps the
			// commits instead; after the answers, which must not wait for
			// the call (it blocks while the disk's queue is full).
			s.wal.unsynced.Store(0)
			startWriteback(s.wal.dbf)
		}
	}
}

// answer finishes a batch: its gates, its advances, its requests.
func (s *Store) answer(b *syncBatch, syncErr error) {
	err := b.err
	if err == nil && syncErr != nil {
		err = syncErr
	}
	s.stats.failing.Store(err != nil)
	switch {
	case err != nil:
		s.stats.commitFailures.Add(1)
		s.log.Error().Err(err).Int("requests", len(b.reqs)).Msg("group commit failed")
		err = core.Errorf(core.EUnavailable, "the store could not commit: %v", err)
		if b.err != nil {
			s.gates.release(b.marks, false) // never committed
		} // a commit not synced stays hidden: the log is broken
	default:
		s.gates.release(b.marks, true)
		if s.opts.OnCommit != nil && len(b.adv) > 0 {
			s.opts.OnCommit(b.adv)
		}
	}
	for _, r := range b.reqs {
		if r.err == nil && err != nil {
			r.err, r.placed = err, nil
		}
		close(r.done)
	}
	if s.opts.OnGroup != nil {
		s.reportGroup(b, err)
	}
}

// reportGroup tells Options.OnGroup about an answered group. A request
// that broke the transaction was answered at once and is not in it.
func (s *Store) reportGroup(b *syncBatch, err error) {
	ctxs := make([]context.Context, 0, len(b.reqs))
	ops := 0
	for _, r := range b.reqs {
		if r.ctx != nil {
			ctxs = append(ctxs, r.ctx)
		}
		ops += len(r.ops)
	}
	s.opts.OnGroup(b.start, ctxs, ops, err)
}

// tryGroup runs one transaction over reqs. A request whose topic or queue is
// invalid is answered with its error without breaking the transaction (it
// wrote nothing). It returns bad >= 0 when request bad broke the transaction
// (rolled back), else the commit error if any.
func (s *Store) tryGroup(reqs []*Request, storedAt int64) (bad int, adv []Advance, marks []qmark, err error) {
	t0 := time.Now()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wal != nil {
		if err := s.wal.err(); err != nil {
			return -1, nil, nil, err
		}
		size := 0
		for _, r := range reqs {
			size += r.size
		}
		if err := s.wal.roomFor(size); err != nil {
			return -1, nil, nil, err
		}
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		return -1, nil, nil, err
	}
	st := newTxState(tx, storedAt, &s.opts)
	for i, r := range reqs {
		r.err, r.placed = nil, nil
		if err := st.prepare(r.ops); err != nil {
			if core.ErrorCode(err) == core.EInternal {
				tx.Rollback()
				return i, nil, nil, err
			}
			r.err = err
			continue
		}
		placed, err := st.apply(r.ops)
		if err == nil && r.hook != nil {
			var rec *recorder
			if s.wal != nil {
				r.rec.reset()
				rec = &r.rec
			}
			err = r.hook(Tx{ReadTx{tx: tx, rec: rec}})
		}
		if err != nil {
			tx.Rollback()
			return i, nil, nil, err
		}
		r.placed = placed
	}
	t1 := time.Now()
	s.stats.applyNanos.Add(uint64(t1.Sub(t0)))
	defer func() { s.stats.commitNanos.Add(uint64(time.Since(t1))) }()
	adv, err = st.flush()
	if err != nil {
		tx.Rollback()
		return -1, nil, nil, err
	}
	txid := uint64(tx.ID())
	if s.wal != nil {
		// Written before bbolt commits, synced by the syncer while the
		// writer goes on; until then the gates hide the appends from
		// readers, so none is handed a message a crash could take back.
		if err := s.wal.logGroup(txid, storedAt, reqs); err != nil {
			tx.Rollback()
			return -1, nil, nil, err
		}
		marks = st.marks()
		s.gates.hold(marks)
		// Before readers can see the commit: what else it wrote waits for
		// the sync too (durable.go).
		s.dur.wroteGroup(txid, st.ownState, reqs)
		s.wal.dbSize = tx.Size() // before the spill: roomFor keeps a margin
	}
	if err := tx.Commit(); err != nil {
		if s.wal != nil {
			s.wal.logVoid(txid)
		}
		return -1, nil, marks, err
	}
	txs := tx.Stats()
	if s.wal != nil {
		s.wal.pages += txs.GetPageCount()
		s.wal.unsynced.Add(txs.GetPageCount())
	}
	s.stats.pageWrites.Add(uint64(txs.GetWrite()))
	s.stats.pages.Add(uint64(txs.GetPageCount()))
	// Requests that failed validation must not see a stale placement.
	for _, r := range reqs {
		if r.err != nil {
			r.placed = nil
		}
	}
	return -1, adv, marks, nil
}
