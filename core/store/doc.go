// Package store is mqgate's bbolt file: the commit log, the consume queues,
// the id and key indexes, topic config and per-queue offset ranges, the
// group-commit writer that appends to them, the self check run on open, and
// the primitives the engine's retention cleaner and topic deletion use.
//
// It imports core and bbolt only; never the engine, HTTP or consumer code.
//
// # Layout (one file, Dir/mqgate.db; all integers big-endian)
//
//	mq.meta       "format" -> layout version
//	mq.commitlog  seq(8) -> message record (codec.go); Sequence() = next seq
//	mq.cq         topic uid(8) -> bucket: qid(2)+queue offset(8) -> unit(20)
//	mq.queues     uid(8)+qid(2) -> min(8) max(8): the queue's [min, max)
//	mq.topics     name -> topic record (version byte + JSON: uid, queues,
//	              retention, growth layouts); Sequence() = last uid
//	mq.ids        message id -> commit log offset
//	mq.keys       len+topic, len+key, commit log offset -> empty
//	mq.trash      uid -> name of a deleted topic whose messages remain
//	mq.corrupt    commit log offset -> a record set aside as corrupt (corrupt.go)
//
// Other packages keep their own buckets in the same file (core/groups);
// they must not touch the mq. buckets, and the self check ignores theirs.
//
// # Invariants
//
//   - Exactly one goroutine (the writer) appends; all appends of a group
//     share one read-write transaction and one fsync, and a request is
//     answered only after that commit (RocketMQ GroupCommitService).
//   - For every queue the consume queue holds exactly the units [min, max),
//     each pointing at a commit log record of its size that names the same
//     topic, queue and offset. Retention removes from the head and moves
//     min; nothing else removes units (deleted topics go to the trash as a
//     whole, under a fresh uid for any new topic of the same name).
//   - Commit log offsets come from the bucket's sequence and are never
//     reused, even after every record is removed.
//
// # Growth
//
// bbolt's freelist is not written at each commit (NoFreelistSync, map
// freelist, as etcd runs it) but once by Close; after a crash bbolt
// rebuilds it on open, after the pre-check has read every page (store.go). Retention removes a message
// reading only the front of its record (recordRefs: id and keys precede
// the properties and the body), and decides what to remove in read
// transactions (QueueHead). Decoded topic records are memoised by their
// stored bytes (topic.go). The file never shrinks by itself: DiskStats
// reports its figures, Backup streams a consistent snapshot while
// serving, Compact rewrites it offline (backup.go, compact.go).
//
// # Integrity
//
// Open reads the file with plain reads before bbolt maps it (precheck.go:
// meta pages, size, every page of every bucket's tree, the freelist) and
// refuses damage with a *DamageError, leaving the file unchanged. The self
// check (check.go) then reads mqgate's own structures, still without
// writing. A commit log record that fails its checksum is not damage to
// refuse the file for: the reader that meets it (the self check, a pull, a
// GET) sets it aside in mq.corrupt and moves past it, so it is counted and
// listed, never skipped silently.
//
// # Caveats
//
// Values read from bbolt are valid only inside their transaction: every
// helper here copies what it returns (DecodeMessage copies the body).
// The writer builds keys in one scratch buffer per transaction (bbolt's
// Put copies keys) and carves small values from a per-transaction arena:
// bbolt keeps value slices until the commit, so an arena is never reused
// across transactions and a scratch buffer never holds a value.
// A Hook may run more than once (a group that fails is retried without the
// failing request), so it must act only through its transaction.
package store
