package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// Migration from layout version 1 (one commit log, one consume-queue
// bucket per topic, global id and key indexes) to version 2 (segments,
// segment.go). Open runs it when the self check found a version 1 file:
//
//  1. the v1 file has passed the pre-check and the v1 self check, and is
//     open with bbolt's exclusive lock, held to the end;
//  2. everything is written into a new file, dir/mqgate.db.migrate, in
//     transactions of compactTxBytes (bounded memory): records into
//     segments cut as the writer cuts them (SegmentBytes, SegmentSpan, by
//     the records' store times), each unit into the segment of its
//     record, with its queue's stretches in mq.qsegs, each id and key
//     entry into its record's segment; topic records move to mq.topics.2;
//     queue ranges, trash, set-aside records, every other package's
//     buckets and every sequence are copied as they are; version 1's
//     buckets are left empty and mq.meta says 2;
//  3. the new file is synced, cut to its high-water mark and passes
//     Verify (pre-check and the version 2 self check);
//  4. it is renamed over mqgate.db and the directory synced.
//
// The original is never written. A crash (kill -9, power loss) before the
// rename leaves it as it was, with a partial .migrate file that the next
// Open removes before migrating again from the start; a crash after the
// rename leaves the version 2 file. Either way no state is half-migrated:
// the migration is atomic. It needs free disk for one more copy of the
// data (the new file is compact: free pages are not copied).

// MigrateSuffix names the file a migration writes before renaming it.
const MigrateSuffix = ".migrate"

// migrateHook, when set (tests), is called after each transaction of the
// new file commits, to crash a migration half-way.
var migrateHook func(txs int)

// MigrateResult reports a migration.
type MigrateResult struct {
	Before, After int64
	Records       int64
	Segments      int
}

// removeStaleMigration removes what a migration killed half-way left.
func removeStaleMigration(path string) error {
	if err := os.Remove(path + MigrateSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove a stale migration file: %w", err)
	}
	return nil
}

// migrate rewrites the version 1 file open in src (at path) as a version
// 2 file and renames it over path (see above). The caller closes src.
func migrate(src *bolt.DB, path string, opts Options) (MigrateResult, error) {
	var res MigrateResult
	tmp := path + MigrateSuffix
	if err := removeStaleMigration(path); err != nil {
		return res, err
	}
	if fi, err := os.Stat(path); err == nil {
		res.Before = fi.Size()
	}
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return res, err
	}
	m := &migrator{copier: copier{db: dst, res: &CompactResult{}}, opts: opts, buckets: map[string]*bolt.Bucket{}}
	err = src.View(func(tx *bolt.Tx) error { return m.run(tx) })
	if err == nil {
		err = m.commit()
	}
	if err = sealFile(dst, tmp, err); err != nil {
		os.Remove(tmp)
		return res, err
	}
	if _, err := Verify(tmp); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("the migrated file fails its check: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return res, err
	}
	if fi, err := os.Stat(path); err == nil {
		res.After = fi.Size()
	}
	res.Records, res.Segments = m.records, len(m.segs)
	return res, nil
}

// migrator writes the version 2 file through copier's rotating
// transactions, caching bucket handles per transaction.
type migrator struct {
	copier
	opts    Options
	buckets map[string]*bolt.Bucket // path -> handle, in the current transaction
	txs     int
	segs    []SegmentInfo // in start order
	records int64
}

func (m *migrator) commit() error {
	if m.tx == nil {
		return nil
	}
	clear(m.buckets)
	if err := m.copier.commit(); err != nil {
		return err
	}
	m.txs++
	if migrateHook != nil {
		migrateHook(m.txs)
	}
	return nil
}

// bucket returns the bucket at path (created if absent) in the current
// transaction, begun if needed.
func (m *migrator) bucket(path ...[]byte) (*bolt.Bucket, error) {
	name := string(bytes.Join(path, []byte{0}))
	if b := m.buckets[name]; b != nil && m.tx != nil {
		return b, nil
	}
	if m.tx == nil {
		tx, err := m.db.Begin(true)
		if err != nil {
			return nil, err
		}
		m.tx, m.bytes = tx, 0
		clear(m.buckets)
	}
	b, err := m.tx.CreateBucketIfNotExists(path[0])
	for _, p := range path[1:] {
		if err != nil {
			break
		}
		b, err = b.CreateBucketIfNotExists(p)
	}
	if err != nil {
		return nil, err
	}
	b.FillPercent = 1.0 // keys arrive in order in most buckets
	m.buckets[name] = b
	return b, nil
}

// put writes k=v into the bucket at path, rotating the transaction past
// compactTxBytes.
func (m *migrator) put(k, v []byte, path ...[]byte) error {
	b, err := m.bucket(path...)
	if err != nil {
		return err
	}
	if err := b.Put(k, v); err != nil {
		return err
	}
	m.bytes += len(k) + len(v)
	if m.bytes >= compactTxBytes {
		return m.commit()
	}
	return nil
}

func (m *migrator) setSequence(seq uint64, path ...[]byte) error {
	b, err := m.bucket(path...)
	if err != nil {
		return err
	}
	return b.SetSequence(seq)
}

func (m *migrator) run(tx *bolt.Tx) error {
	moved := map[string]bool{}
	for _, b := range [][]byte{bucketMeta, bucketCommitLogV1, bucketCQV1, bucketTopicsV1, bucketIDsV1, bucketKeysV1} {
		moved[string(b)] = true
	}
	// Everything that keeps its shape: queue ranges, trash, set-aside
	// records, other packages' buckets.
	if err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		if moved[string(name)] {
			return nil
		}
		err := m.copier.bucket([][]byte{name}, b)
		clear(m.buckets) // the copier may have rotated the transaction
		return err
	}); err != nil {
		return err
	}
	if err := m.meta(tx); err != nil {
		return err
	}
	if err := m.commitLog(tx); err != nil {
		return err
	}
	if err := m.units(tx); err != nil {
		return err
	}
	if err := m.indexes(tx); err != nil {
		return err
	}
	// Version 1's buckets stay, empty (layout.go).
	for _, name := range [][]byte{bucketCommitLogV1, bucketCQV1, bucketTopicsV1, bucketIDsV1, bucketKeysV1, bucketQSegs, bucketSegs, bucketTrash, bucketQueues} {
		if _, err := m.bucket(name); err != nil {
			return err
		}
	}
	return nil
}

// meta copies mq.meta with the new version and the topic records with
// their uid sequence.
func (m *migrator) meta(tx *bolt.Tx) error {
	if err := tx.Bucket(bucketMeta).ForEach(func(k, v []byte) error {
		if bytes.Equal(k, keyFormat) {
			v = []byte{formatVersion}
		}
		return m.put(k, v, bucketMeta)
	}); err != nil {
		return err
	}
	topics := tx.Bucket(bucketTopicsV1)
	if err := topics.ForEach(func(k, v []byte) error { return m.put(k, v, bucketTopics) }); err != nil {
		return err
	}
	return m.setSequence(topics.Sequence(), bucketTopics)
}

// commitLog cuts the records into segments as the writer would.
func (m *migrator) commitLog(tx *bolt.Tx) error {
	cl := tx.Bucket(bucketCommitLogV1)
	var cur *SegmentInfo
	var last int64
	c := cl.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return fmt.Errorf("%w: commit log key of %d bytes", ErrCorrupt, len(k))
		}
		off := int64(binary.BigEndian.Uint64(k))
		if at, err := StoredAtOf(v); err == nil {
			last = max(last, at)
		}
		if cur == nil || cur.Bytes >= m.opts.SegmentBytes || last-cur.Created >= m.opts.SegmentSpan.Milliseconds() {
			for _, name := range [][]byte{segCL, segCQ, segQueues, segIDs, segKeys} {
				if _, err := m.bucket(bucketSegs, u64(off), name); err != nil {
					return err
				}
			}
			m.segs = append(m.segs, SegmentInfo{Start: off, Created: last, FirstPage: m.tx.Size() / int64(m.db.Info().PageSize)})
			cur = &m.segs[len(m.segs)-1]
		}
		if err := m.put(k, v, bucketSegs, u64(cur.Start), segCL); err != nil {
			return err
		}
		cur.Last, cur.Bytes, cur.Records = last, cur.Bytes+int64(len(v)), cur.Records+1
		m.records++
	}
	for _, i := range m.segs {
		if err := m.put(segInfoKey, i.encode(), bucketSegs, u64(i.Start)); err != nil {
			return err
		}
	}
	return m.setSequence(cl.Sequence(), bucketSegs)
}

// segFor returns the start of the segment holding commit log offset cl.
func (m *migrator) segFor(cl int64) (int64, bool) {
	if len(m.segs) == 0 {
		return 0, false
	}
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].Start > cl })
	return m.segs[max(i-1, 0)].Start, true
}

// units moves every consume-queue unit (deleted topics' too) into the
// segment of its record and records each queue's stretches.
func (m *migrator) units(tx *bolt.Tx) error {
	return tx.Bucket(bucketCQV1).ForEach(func(uk, v []byte) error {
		cq := tx.Bucket(bucketCQV1).Bucket(uk)
		if v != nil || cq == nil || len(uk) != 8 {
			return fmt.Errorf("%w: mq.cq holds a key that is not a topic's consume queue", ErrCorrupt)
		}
		uid := binary.BigEndian.Uint64(uk)
		lastQ, lastSeg := -1, int64(-1)
		c := cq.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			qid, off, ok := parseCQKey(k)
			if !ok {
				return fmt.Errorf("%w: consume queue key of %d bytes", ErrCorrupt, len(k))
			}
			u, err := decodeUnit(v)
			if err != nil {
				return err
			}
			seg, ok := m.segFor(u.CommitLogOffset)
			if !ok {
				continue // no record at all: nothing to point at
			}
			if qid != lastQ || seg != lastSeg {
				lastQ, lastSeg = qid, seg
				if err := m.put(queueKey(uid, qid), u64(off), bucketSegs, u64(seg), segQueues); err != nil {
					return err
				}
				if err := m.put(qsegKey(uid, qid, off), u64(seg), bucketQSegs); err != nil {
					return err
				}
			}
			if err := m.put(cqUnitKey(uid, qid, off), bytes.Clone(v), bucketSegs, u64(seg), segCQ); err != nil {
				return err
			}
		}
		return nil
	})
}

// indexes moves each id and key entry into its record's segment.
func (m *migrator) indexes(tx *bolt.Tx) error {
	if err := tx.Bucket(bucketIDsV1).ForEach(func(k, v []byte) error {
		if len(v) != 8 {
			return nil
		}
		seg, ok := m.segFor(int64(binary.BigEndian.Uint64(v)))
		if !ok {
			return nil
		}
		return m.put(k, v, bucketSegs, u64(seg), segIDs)
	}); err != nil {
		return err
	}
	return tx.Bucket(bucketKeysV1).ForEach(func(k, v []byte) error {
		if len(k) < 8 {
			return nil
		}
		seg, ok := m.segFor(int64(binary.BigEndian.Uint64(k[len(k)-8:])))
		if !ok {
			return nil
		}
		return m.put(k, []byte{}, bucketSegs, u64(seg), segKeys)
	})
}
