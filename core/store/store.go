package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// FileName is the bbolt file inside the data directory.
const FileName = "mqgate.db"

// lockTimeout bounds the wait for bbolt's flock: a second process opening
// the same data directory fails fast instead of hanging.
const lockTimeout = 200 * time.Millisecond

// ErrLocked is returned by Open when another process holds the data dir.
var ErrLocked = errors.New("data dir in use by another process")

// Options configures a Store.
type Options struct {
	// Logger receives the store's logs; default zerolog.Nop().
	Logger *zerolog.Logger
	// OnCommit is called by the writer goroutine after each committed group,
	// before any publisher of the group is answered, with the new max offset
	// of every queue the group appended to. It must not block for long.
	OnCommit func([]Advance)
	// OnGroup, if set, is called by the syncer once it has answered a
	// group commit, with when the writer took the group, the contexts of
	// its requests (Commit's ctx, in the group's order), its ops and the
	// group's error (nil when durable). cmd/mqgate records one commit span
	// per group there, linked to the traced publishes, instead of a span
	// per publish. It runs between syncs: it must not block.
	OnGroup func(start time.Time, ctxs []context.Context, ops int, err error)
	// FullCheckLimit is the file size up to which Open runs bbolt's own
	// page-level tx.Check (it reads every page); default 64 MiB, <0 never.
	FullCheckLimit int64
	// FullPreCheck reads every page of the file before bbolt maps it even
	// when it was closed cleanly (PreCheck); by default a cleanly closed
	// file gets PreCheckQuick and opens in seconds whatever its size.
	FullPreCheck bool
	// MaxGroupBytes bounds the encoded bytes of one group commit (default
	// 32 MiB); a single request larger than that is still committed alone.
	MaxGroupBytes int
	// SegmentBytes and SegmentSpan bound a segment of the commit log
	// (segment.go): the writer starts a new one when the newest holds
	// SegmentBytes of records (default 256 MiB) or began SegmentSpan ago
	// (default 1 h). Retention frees space a segment at a time, so a
	// message may occupy disk up to about SegmentSpan past its retention.
	SegmentBytes int64
	SegmentSpan  time.Duration
	// Linger is how long a group of only lazy requests
	// (core.WithLazyCommit: consumers' position writes) waits for an
	// ordinary request to share its commit; default DefaultLinger, <0 none.
	Linger time.Duration
	// CheckpointBytes and CheckpointInterval say when the writer syncs the
	// file and moves the log-ahead's start (checkpoint.go): once the log
	// or the pages allocated since the last checkpoint reach
	// CheckpointBytes (default DefaultCheckpointBytes), or
	// CheckpointInterval after the first record (default
	// DefaultCheckpointInterval). They bound the log redone at start-up
	// after a crash. CheckpointIdle is how long the writer waits without
	// a group before it rewinds a log holding records (default
	// DefaultCheckpointIdle).
	CheckpointBytes    int64
	CheckpointInterval time.Duration
	CheckpointIdle     time.Duration
	// SyncHook is for tests: it runs before each sync that makes commits
	// durable, the syncer's fdatasync of the log-ahead (SyncLog) and a
	// rewind checkpoint's sync of the store file (SyncCheckpoint, after a
	// Store.Update among others). It may block, to hold commits between
	// bbolt and their durability; a held SyncCheckpoint holds the writer.
	SyncHook func(SyncKind)
}

// SyncKind says which sync Options.SyncHook runs before.
type SyncKind int

// The syncs Options.SyncHook sees.
const (
	SyncLog SyncKind = iota + 1
	SyncCheckpoint
)

// DefaultLinger bounds how long a position write waits for company. It is
// also how much longer than one group commit a position may stay
// unwritten, which after a crash is the window of acknowledgements
// delivered again (docs/consuming.md).
const DefaultLinger = 10 * time.Millisecond

// Advance reports that a queue's max offset moved (RocketMQ's
// ReputMessageService notifying PullRequestHoldService).
type Advance struct {
	Topic   string
	QueueID int
	Max     int64
}

// Store is the bbolt file: commit log, consume queues, indexes and topic
// config, and the group-commit writer that appends to them.
type Store struct {
	db   *bolt.DB
	path string
	log  zerolog.Logger
	opts Options

	// sendMu guards closed and makes Close wait for in-flight submissions
	// before it closes reqs, so no request is left unanswered.
	sendMu sync.RWMutex
	closed bool
	reqs   chan *Request
	done   chan struct{} // closed when the writer goroutine exits

	// syncq carries committed groups from the writer to the syncer, which
	// closes syncDone when it has answered the last (writer.go). It is
	// unbuffered: the writer commits one group while the syncer syncs the
	// one before, and no further, so groups grow under load instead of
	// multiplying.
	syncq    chan *syncBatch
	syncDone chan struct{}
	gates    gateTable
	dur      *durability // the read barrier (durable.go)
	// pageChecked: the pre-check read every page, so bbolt's tx.Check,
	// which reads the mapping where no guard reaches, may run (check.go).
	pageChecked bool
	// beforeSync, set by tests before the first commit, runs in the
	// syncer before each fdatasync; beforeRollingSync, set by tests
	// before a rolling checkpoint begins, in its goroutine before its
	// sync.
	beforeSync, beforeRollingSync func()

	closeOnce sync.Once
	closeErr  error

	// wmu serialises the write transactions with the log-ahead and its
	// checkpoints; wal is nil until Open has finished recovering.
	wmu sync.Mutex
	wal *walLog
	// recoveryPin holds the checkpoint a redo started from until the
	// first checkpoint of this run replaces it (redoWAL).
	recoveryPin *bolt.Tx

	// releasedAt is stats.pages when the checkpoints last released the
	// process's mapping of the file (releaseWritten).
	releasedAt atomic.Uint64

	stats writerCounters
}

// Open opens (creating if needed) dir/mqgate.db, checks it and starts the
// writer. It fails fast with ErrLocked when another process holds the file
// and refuses a corrupt file with an error naming the file and the problem.
func Open(dir string, opts Options) (*Store, error) {
	if opts.FullCheckLimit == 0 {
		opts.FullCheckLimit = 64 << 20
	}
	if opts.MaxGroupBytes <= 0 {
		opts.MaxGroupBytes = 32 << 20
	}
	if opts.Linger == 0 {
		opts.Linger = DefaultLinger
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.SegmentSpan <= 0 {
		opts.SegmentSpan = DefaultSegmentSpan
	}
	if opts.CheckpointBytes <= 0 {
		opts.CheckpointBytes = DefaultCheckpointBytes
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = DefaultCheckpointInterval
	}
	if opts.CheckpointIdle <= 0 {
		opts.CheckpointIdle = DefaultCheckpointIdle
	}
	log := zerolog.Nop()
	if opts.Logger != nil {
		log = *opts.Logger
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
	t0 := time.Now()
	// After a crash the file goes back to the log-ahead's checkpoint
	// before anything reads it (wal.go); its records are redone once bbolt
	// has opened it.
	recovered, err := recoverWAL(path)
	if err != nil {
		return nil, err
	}
	// The pre-check reads the file with plain reads before bbolt maps it
	// (precheck.go): a truncated or mangled file is refused here, unchanged,
	// instead of faulting the mapping or being written to.
	check := PreCheckQuick
	if opts.FullPreCheck {
		check = PreCheck
	}
	pre, err := check(path)
	// freelistNamed: the meta page names the freelist a clean close or a
	// checkpoint wrote, so the quick pre-check applied (and bbolt loads
	// that freelist instead of walking the tree), even when the page read
	// below then runs because the file is small.
	freelistNamed := err == nil && pre.Quick
	if err == nil && pre.Quick && opts.FullCheckLimit > 0 && int64(pre.Pages)*int64(pre.PageSize) <= opts.FullCheckLimit {
		// A file small enough for bbolt's own page check (check.go) is
		// read page by page first: tx.Check reads the mapping on a
		// goroutine of its own, where a fault on a damaged page could not
		// be caught (fault.go). Reading 64 MiB costs tens of milliseconds.
		pre, err = PreCheck(path)
	}
	if err != nil {
		return nil, err
	}
	if pre.Warning != "" {
		log.Warn().Str("file", path).Msg(pre.Warning)
	}
	t1 := time.Now()
	db, err := openBolt(path) // rebuilds the freelist: a walk of the tree
	if err != nil {
		return nil, err
	}
	t2 := time.Now()
	s := &Store{db: db, path: path, log: log, opts: opts, pageChecked: !pre.Quick,
		reqs: make(chan *Request, 4096), done: make(chan struct{}),
		syncq: make(chan *syncBatch), syncDone: make(chan struct{}), dur: newDurability()}
	if h := opts.SyncHook; h != nil {
		s.beforeSync = func() { h(SyncLog) }
	}
	if recovered != nil {
		if recovered.tail != "" {
			log.Info().Str("file", path).Str("where", recovered.tail).Msg("log-ahead: reading stopped at the end of what was synced")
		}
		if err := s.guard(func() error { return s.redoWAL(recovered) }); err != nil {
			s.abandon()
			return nil, fmt.Errorf("refusing to open %s: %w. The file was not modified beyond its last checkpoint", path, err)
		}
		if n := len(recovered.records); n > 0 {
			log.Info().Str("file", path).Int("groups", n).Uint64("checkpoint", recovered.header.base).
				Msg("log-ahead: redid the group commits made since the last checkpoint")
		}
	}
	// The self check reads only: a file it refuses is left as it was. The
	// records it finds failing their checksum are set aside by init, in
	// the same first write.
	var setAside []CorruptRecord
	if !pre.Empty {
		if err := s.guard(func() (err error) { setAside, err = s.check(); return err }); err != nil {
			s.abandon()
			return nil, fmt.Errorf("refusing to open %s: %w. The file was not modified. "+
				"Restore it from a backup, or salvage what is still readable (docs/operations.md, \"Salvaging a damaged store\")", path, err)
		}
	}
	// A file of layout version 1 is rewritten into a new file of version 2
	// and renamed over it (migrate.go); the check then runs on the result.
	if err := removeStaleMigration(path); err != nil {
		s.abandon()
		return nil, err
	}
	var version int
	if err := db.View(func(tx *bolt.Tx) (err error) { version, err = layoutVersion(tx); return err }); err != nil {
		s.abandon()
		return nil, fmt.Errorf("refusing to open %s: %w", path, err)
	}
	if version == 1 {
		tm := time.Now()
		s.releaseRecoveryPin() // none: a version 1 file has no log-ahead
		res, err := migrate(db, path, opts)
		db.Close()
		if err != nil {
			return nil, fmt.Errorf("migrating %s to layout version %d: %w. The file was not modified", path, formatVersion, err)
		}
		log.Info().Str("file", path).Int64("records", res.Records).Int("segments", res.Segments).Int64("bytesBefore", res.Before).
			Int64("bytesAfter", res.After).Dur("took", time.Since(tm)).
			Msgf("store migrated from layout version 1 to %d (segments)", formatVersion)
		if db, err = openBolt(path); err != nil {
			return nil, err
		}
		s.db = db
		if err := s.guard(func() (err error) { setAside, err = s.check(); return err }); err != nil {
			s.abandon()
			return nil, fmt.Errorf("refusing to open %s after its migration: %w", path, err)
		}
	}
	t3 := time.Now()
	if err := s.guard(func() error { return s.init(setAside) }); err != nil {
		s.abandon()
		return nil, fmt.Errorf("refusing to open %s: %w", path, err)
	}
	msg := "store opened (pre-check of every page, bbolt open with its freelist rebuilt, self check)"
	if freelistNamed && !pre.Quick {
		msg = "store opened (every page read, the file being small enough; bbolt open with the freelist a clean close or checkpoint wrote; self check)"
	}
	if pre.Quick {
		msg = "store opened (pre-check of the meta pages, size and the freelist a clean close or checkpoint wrote; bbolt open; self check; --full-check reads every page)"
	}
	log.Info().Str("file", path).Int64("bytes", pre.Size).Bool("quickPrecheck", pre.Quick).Bool("freelistNamed", freelistNamed).Dur("precheck", t1.Sub(t0)).
		Dur("open", t2.Sub(t1)).Dur("check", t3.Sub(t2)).Dur("total", time.Since(t0)).Int("freePages", db.Stats().FreePageN).
		Msg(msg)
	for _, r := range setAside {
		log.Error().Str("file", path).Uint64("topicUid", r.UID).Int("queue", r.QueueID).Int64("queueOffset", r.QueueOffset).
			Int64("commitLogOffset", r.CommitLogOffset).Str("msgId", r.MessageID).Str("reason", r.Reason).
			Msg("stored message fails its checksum: set aside as corrupt (GET /v1/topics/{topic}/corrupt lists it)")
	}
	if err := s.startWAL(); err != nil {
		s.abandon()
		return nil, err
	}
	go s.syncLoop()
	go s.writeLoop()
	return s, nil
}

// startWAL switches the store to the log-ahead: a first checkpoint, and
// from then on unsynced commits. The pin taken for the redo (redoWAL) is
// released by that checkpoint, once its header names the new state.
func (s *Store) startWAL() error {
	if !useWAL {
		s.releaseRecoveryPin()
		return nil
	}
	w, err := openWAL(s.path, s.db.Info().PageSize)
	if err != nil {
		return err
	}
	w.pin, s.recoveryPin = s.recoveryPin, nil
	w.dur = s.dur
	s.wal = w
	if err := s.checkpoint(); err != nil {
		s.wal = nil
		w.close()
		return err
	}
	s.dur.on = true // before the writer starts: commits are durable only once synced
	s.db.NoSync = true
	// bbolt grows the file by truncate and fsync inside the commit that
	// needs the room: a sync of every dirty page of the file, on the
	// writer, tens of milliseconds. The log-ahead does not need it: a
	// checkpoint's fdatasync makes the file's size durable with its
	// pages, and what grew since is redone from the log. The file then
	// grows by the commits' own writes.
	s.db.NoGrowSync = true
	return nil
}

// openBolt opens the file with the options that suit an append-mostly,
// always-synced log, turning bbolt's errors into ones an operator can act
// on. bbolt may panic on a mangled file; that becomes an error too.
func openBolt(path string) (db *bolt.DB, err error) {
	old := debug.SetPanicOnFault(true) // bbolt reads the meta pages and the freelist through its mapping
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("refusing to open %s: the file is corrupt: %v", path, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		Timeout: lockTimeout,
		// The freelist is not written at each commit (as etcd runs bbolt):
		// on a large, fragmented file it spans many pages and syncing it
		// made every commit pay for the whole file's free space. Close
		// and the checkpoints write it (writeFreelist); after a crash
		// from a checkpoint without one bbolt rebuilds it on open by
		// walking the tree, which is safe because the pre-check
		// (precheck.go) has then read every page of the tree with plain
		// reads and refused a damaged one. A file written with a
		// synced freelist opens the same way (its freelist page becomes
		// free at the next commit), and an older mqgate opens a file
		// without one (its pre-check accepts the "no freelist" sentinel
		// and bbolt writes a freelist back).
		NoFreelistSync: !syncFreelist,
		FreelistType:   bolt.FreelistMapType,
		// The largest mapping up front: readers never wait for a remap
		// while the file grows, and the log-ahead's pin needs the file
		// never remapped (wal.go).
		InitialMmapSize: mmapSize,
	})
	switch {
	case err == nil:
		db.AllocSize = 64 << 20 // grow the file in big steps: fewer truncate+sync
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("%s: %w (bbolt file lock not acquired within %v)", path, ErrLocked, lockTimeout)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, fmt.Errorf("refusing to open %s: the file is corrupt or not a bbolt file: %w", path, err)
	default:
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
}

// useWAL turns the log-ahead off for benchmarks that compare it with
// bbolt's own synced commits.
var useWAL = true

// abandon closes the file of an Open that failed.
func (s *Store) abandon() {
	s.releaseRecoveryPin()
	s.db.Close()
}

func (s *Store) releaseRecoveryPin() {
	if s.recoveryPin != nil {
		_ = s.recoveryPin.Rollback()
		s.recoveryPin = nil
	}
}

// syncFreelist makes bbolt write its freelist at every commit, as mqgate
// did before; tests set it to produce files in the old way.
var syncFreelist = false

// guard turns a fault on the mapping or a panic of bbolt walking a
// damaged page into an error (fault.go). The page a panic or the self
// check's refusal met is not known; the pre-check that reads every page
// with plain reads is then run to name it (the cost falls on a start
// that is refused anyway).
func (s *Store) guard(fn func() error) error {
	err := guardRead(s.db, s.path, fn)
	var rf *ReadFault
	if errors.As(err, &rf) || errors.Is(err, ErrCorrupt) {
		if _, perr := preCheckLocked(s.path, false, false); perr != nil {
			var de *DamageError
			if errors.As(perr, &de) {
				return fmt.Errorf("%s (%v)", de.Problem, err)
			}
		}
	}
	return err
}

// init creates missing buckets, checks the format version and records the
// records the self check set aside. A new file gets version 1's buckets
// too, empty (layout.go: a v1 binary then refuses it by its version).
func (s *Store) init(setAside []CorruptRecord) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketSegs, bucketQSegs, bucketQueues, bucketTopics, bucketTrash, bucketCorrupt,
			bucketCommitLogV1, bucketCQV1, bucketTopicsV1, bucketIDsV1, bucketKeysV1} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		for _, r := range setAside {
			if _, err := recordCorrupt(tx, r); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		v := meta.Get(keyFormat)
		if v == nil {
			return meta.Put(keyFormat, []byte{formatVersion})
		}
		if len(v) != 1 || v[0] != formatVersion {
			return fmt.Errorf("%w %v (this build writes %d)", ErrFormat, v, formatVersion)
		}
		return nil
	})
}

// Path is the bbolt file's path.
func (s *Store) Path() string { return s.path }

// Close stops the writer (every request already submitted is committed and
// answered), then closes the file. It is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.sendMu.Lock()
		s.closed = true
		close(s.reqs)
		s.sendMu.Unlock()
		<-s.done
		<-s.syncDone
		s.wmu.Lock()
		defer s.wmu.Unlock()
		// A clean close writes the freelist, whatever its size, so the
		// next open reads it instead of walking the whole tree to rebuild
		// it. With the log-ahead the last checkpoint does (writeFreelist)
		// and names this state, with no record to redo.
		if s.wal == nil {
			_ = s.writeFreelist(true) // a failure is logged; the next open rebuilds it
		} else {
			if err := s.rewind(true); err != nil {
				s.closeErr = err
			}
			if err := s.wal.close(); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
		if err := s.db.Close(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}
