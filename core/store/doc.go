// Package store is mqgate's bbolt file: the commit log, the consume queues,
// the id and key indexes, topic config and per-queue offset ranges, the
// group-commit writer that appends to them, the self check run on open, and
// the primitives the engine's retention cleaner and topic deletion use.
//
// It imports core and bbolt only; never the engine, HTTP or consumer code.
// It is the only package that imports bbolt (outside a baseline benchmark
// and a page-level damage test).
//
// # Surface
//
// Like bbolt, a few types (store.go, tx.go, bucket.go):
//
//   - Store: Open, Close, Commit (group commit of Ops and a Hook), View,
//     Update, and the operator's Backup, DiskStats, Stats; Compact,
//     Verify and BackupFile work on a closed file.
//   - ReadTx, a read view (View): topics and queue ranges (GetTopic,
//     ListTopics, QueueRange, QueueRanges, QueueHead, QueueBytes),
//     messages (ScanQueue, UnitAt, MessageAt, StoredAtAt, OffsetOfID,
//     PositionOfID, OffsetsOfKey), retention's look (DroppableSegments,
//     HasTrash), the records set aside (IsSetAside, ListCorrupt,
//     InspectCorrupt), and Bucket for a registered bucket; for tests and
//     tools CountRecords and LastCommitLogOffset (and Tx.PatchRecord).
//   - Tx, a write view (Update, and a Hook inside the group commit): a
//     ReadTx plus PutTopic, RemoveTopic, TrimQueue, DropSegment,
//     EmptyTrash, RecordCorrupt and the owner's CreateBucket,
//     CreateBucketIfNotExists and DeleteBucket.
//   - Bucket and Cursor: bbolt's, with the methods owners use.
//
// ReadTx and Tx are one pointer each, passed by value: wrapping the
// writer's transaction for a Hook allocates nothing. What they return is
// copied unless the method says otherwise; bytes read through a Bucket or
// Cursor are valid only inside the transaction.
//
// # Bucket owners
//
// Every top-level bucket has one owner. The store owns the "mq." buckets
// below. Another package gets a bucket of its own only through the
// BucketName that Register grants it from a package-level variable; a
// second owner of a name, or an "mq." name, panics at start-up. Today:
// core/engine owns dedup.records, dedup.expiry, sched.offsets,
// sched.timers, sched.timertopics, sched.timerids, sched.sweep,
// dlq.redriven and jobs; core/groups owns groups.config, groups.offsets,
// groups.starts and groups.parks. Each owner creates its buckets when it
// opens; the self check ignores them; migration and compaction copy them
// as they are.
//
// # Layout (one file, Dir/mqgate.db; all integers big-endian; version 2)
//
//	mq.meta       "format" -> layout version (2; version 1 files are migrated
//	              by Open, migrate.go)
//	mq.segs       segment start(8) -> segment bucket (segment.go):
//	                info, cl (commit log records), cq (units), queues,
//	                ids, keys; Sequence() = next commit log offset
//	mq.qsegs      uid(8)+qid(2)+first offset(8) -> segment start: where
//	              each queue's stretch in each segment begins
//	mq.queues     uid(8)+qid(2) -> min(8) max(8): the queue's [min, max)
//	mq.topics.2   name -> topic record (version byte + JSON: uid, queues,
//	              retention, growth layouts); Sequence() = last uid
//	mq.trash      uid -> name of a deleted topic some segment still holds
//	mq.corrupt    commit log offset -> a record set aside as corrupt (corrupt.go)
//	mq.commitlog, mq.cq, mq.ids, mq.keys, mq.topics: version 1's buckets,
//	              kept empty so a version 1 binary refuses the file by its
//	              format version (layout.go)
//
// # Invariants
//
//   - Exactly one goroutine (the writer) appends; all appends of a group
//     share one read-write transaction and one fdatasync of the
//     log-ahead, and a request is answered only after that commit
//     (RocketMQ GroupCommitService). The record is written before bbolt
//     commits and synced by the syncer while the writer commits the next
//     group; until then the queue gates keep readers from seeing the
//     group's appends (wal.go, gate.go).
//   - A View answers only from durable state: its reads of anything but
//     the gated queues and commit log (topics, queue minima, the set
//     aside, every registered bucket) wait until the commits its view
//     holds that wrote that state are synced (durable.go), so neither
//     an idempotent replay nor a GET reports what a power cut could
//     take back.
//   - A fault on the file's mapping, or a panic of bbolt on a mangled
//     page, in Open or in a View is an error naming the file (and the
//     page), never a crash (fault.go).
//   - Every write transaction is either a logged group commit or a
//     Store.Update followed by a checkpoint; nothing else writes the file
//     while the store is open.
//   - For every queue the segments hold the units [min, max) (and possibly
//     units below min that retention has passed but whose segment is not
//     dropped yet: readers never look below min), each pointing at a
//     commit log record of its size that names the same topic, queue and
//     offset, in the same segment. Retention moves min; units and records
//     leave only with their whole segment, once no unit in it is visible
//     (Tx.DropSegment). A deleted topic has no queue metadata, so its units
//     are invisible at once; a new topic of the same name gets a fresh uid.
//   - Commit log offsets come from the bucket's sequence and are never
//     reused, even after every record is removed.
//
// # Growth
//
// bbolt's freelist is not written at each commit (NoFreelistSync, map
// freelist, as etcd runs it) but by Close and by each checkpoint whose
// freelist is small (checkpoint.go), so a start after a crash reads it
// too; after a crash back to a checkpoint without one bbolt rebuilds it
// on open, after the pre-check has read every page (store.go).
// Retention and topic deletion free disk a segment at a time (segment.go),
// reading no record body and deleting no index entry one by one, and
// decide what to do in read transactions (ReadTx.QueueHead,
// ReadTx.DroppableSegments).
// bbolt's map of the file is made once at its largest and never remapped,
// so the pages bbolt reads through it would stay resident: the
// checkpoints release the mapping (madvise) every 256 MiB of pages
// written, and the retention cleaner after each segment drop
// (checkpoint.go, segment.go).
// Decoded topic records are memoised by their stored bytes (topic.go). The
// file never shrinks by itself: DiskStats reports its figures, Backup
// streams a consistent snapshot while serving, Compact rewrites it offline
// (backup.go, compact.go).
//
// # Integrity
//
// After a crash Open first puts the file back to the log-ahead's last
// checkpoint (its meta page, kept in the log's header) and redoes the
// log's records once bbolt has opened it (wal.go).
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
