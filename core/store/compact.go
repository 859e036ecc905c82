package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Compaction. bbolt never gives pages back to the operating system: a
// file that once held 20 GB stays 20 GB after retention or topic deletion
// freed most of it (the free pages are reused by later writes). Compact
// rewrites the data into a new file, offline, and swaps it in:
//
//  1. the pre-check reads the file (a damaged file is refused, never
//     compacted: salvage it instead, docs/operations.md);
//  2. the file is opened with its exclusive lock, which it holds to the
//     end: Compact refuses (ErrLocked) while a server runs, and a server
//     started meanwhile refuses to start;
//  3. every bucket, nested bucket and sequence is copied key by key in key
//     order into dir/mqgate.db.compact, pages filled full, in
//     transactions of compactTxBytes so memory stays bounded; the new
//     file is synced and cut to its high-water mark;
//  4. the new file passes Verify (pre-check and self check);
//  5. it is renamed over mqgate.db and the directory synced: a crash
//     before the rename leaves the original (and a .compact file the next
//     Compact removes), a crash after it leaves the compacted file.

// CompactSuffix names the file Compact writes before renaming it.
const CompactSuffix = ".compact"

// compactTxBytes bounds the keys and values one transaction of the copy
// holds (bbolt keeps a transaction's dirty pages in memory).
var compactTxBytes = 64 << 20

// CompactResult reports a compaction.
type CompactResult struct {
	Path string
	// Before and After are the file's sizes; Live is the bytes of the
	// source's pages in use (reachable from the root: data, no free
	// pages), what the new file holds at most (it is smaller when pages
	// were partly filled).
	Before, After, Live int64
	// Keys counts the key/value pairs copied, Bytes their keys' and
	// values' bytes (the data itself); Buckets the buckets.
	Keys, Bytes, Buckets int64
}

// Compact rewrites dir's store into a new file holding only its data and
// renames it over the original (see above). The store must not be open.
func Compact(dir string) (CompactResult, error) {
	path := filepath.Join(dir, FileName)
	tmp := path + CompactSuffix
	res := CompactResult{Path: path}
	if err := settle(dir); err != nil {
		return res, err
	}
	pre, err := PreCheck(path)
	if err != nil {
		return res, err
	}
	if pre.Empty {
		return res, fmt.Errorf("%s: no store to compact", path)
	}
	res.Before = pre.Size
	res.Live = int64(pre.InUsePages) * int64(pre.PageSize)
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if errors.Is(err, berrors.ErrTimeout) {
		return res, fmt.Errorf("%s: %w (stop the server first: compaction is offline)", path, ErrLocked)
	}
	if err != nil {
		return res, fmt.Errorf("open %s: %w", path, err)
	}
	defer src.Close()
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	if err := copyStore(src, tmp, &res); err != nil {
		os.Remove(tmp)
		return res, err
	}
	if _, err := Verify(tmp); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("the compacted file fails its check, the original is unchanged: %w", err)
	}
	// The log-ahead names the old file's state; settle left nothing in it
	// to redo, and the new file must not meet it.
	if err := os.Remove(filepath.Join(dir, WALName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		os.Remove(tmp)
		return res, err
	}
	if err := syncDir(dir); err != nil {
		os.Remove(tmp)
		return res, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, err
	}
	if err := syncDir(dir); err != nil {
		return res, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return res, err
	}
	res.After = fi.Size()
	return res, nil
}

// settle redoes the log-ahead of an uncleanly closed store by opening and
// closing it, so that the file holds every commit.
func settle(dir string) error {
	if err := checkSettled(filepath.Join(dir, FileName)); !errors.Is(err, ErrUnsettled) {
		return err
	}
	s, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	return s.Close()
}

// copyStore copies every bucket of src into a new file at dst, synced and
// cut to its high-water mark.
func copyStore(src *bolt.DB, dst string, res *CompactResult) error {
	// The freelist is synced (a new file's is nearly empty), so the first
	// open reads it instead of walking the tree.
	db, err := bolt.Open(dst, 0o600, &bolt.Options{NoSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return err
	}
	c := &copier{db: db, res: res}
	err = src.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return c.bucket([][]byte{name}, b)
		})
	})
	if err == nil {
		err = c.commit()
	}
	return sealFile(db, dst, err)
}

// sealFile finishes a file written with NoSync (compaction, migration):
// synced, closed and cut to its high-water mark. err is the writing's
// outcome; the file is closed either way.
func sealFile(db *bolt.DB, dst string, err error) error {
	var size int64
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	}
	if err == nil {
		err = db.Sync()
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// bbolt grows a file ahead of use; the pages past the high-water mark
	// are unused.
	f, err := os.OpenFile(dst, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// copier writes into the new file in transactions of compactTxBytes.
type copier struct {
	db    *bolt.DB
	tx    *bolt.Tx
	bytes int
	res   *CompactResult
}

// target returns the bucket at path in the current transaction (begun if
// needed), creating it with seq when absent.
func (c *copier) target(path [][]byte, seq uint64) (*bolt.Bucket, error) {
	if c.tx == nil {
		tx, err := c.db.Begin(true)
		if err != nil {
			return nil, err
		}
		c.tx, c.bytes = tx, 0
	}
	b, err := c.tx.CreateBucketIfNotExists(path[0])
	for _, name := range path[1:] {
		if err != nil {
			break
		}
		b, err = b.CreateBucketIfNotExists(name)
	}
	if err != nil {
		return nil, err
	}
	b.FillPercent = 1.0 // keys arrive in order: fill pages full
	if b.Sequence() != seq {
		err = b.SetSequence(seq)
	}
	return b, err
}

func (c *copier) commit() error {
	if c.tx == nil {
		return nil
	}
	err := c.tx.Commit()
	c.tx = nil
	return err
}

// bucket copies b (at path) with its nested buckets, depth first.
func (c *copier) bucket(path [][]byte, b *bolt.Bucket) error {
	c.res.Buckets++
	dst, err := c.target(path, b.Sequence())
	if err != nil {
		return err
	}
	cur := b.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				if err := c.bucket(append(path[:len(path):len(path)], k), nested); err != nil {
					return err
				}
				// The transaction may have rotated under the nested copy.
				if dst, err = c.target(path, b.Sequence()); err != nil {
					return err
				}
				continue
			}
			v = []byte{}
		}
		if err := dst.Put(k, v); err != nil {
			return err
		}
		c.res.Keys++
		c.res.Bytes += int64(len(k) + len(v))
		c.bytes += len(k) + len(v)
		if c.bytes >= compactTxBytes {
			if err := c.commit(); err != nil {
				return err
			}
			if dst, err = c.target(path, b.Sequence()); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
