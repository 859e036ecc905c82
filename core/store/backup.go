package store

import (
	"errors"
	"fmt"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Backup writes a consistent snapshot of the whole file (every bucket,
// the groups' included) to w from one read transaction (bbolt's
// tx.WriteTo): publishers and consumers go on meanwhile, and the copy
// holds every transaction committed before the backup began, so every
// publish answered before it. start, when set, is called with the
// snapshot's size before its first byte (an HTTP Content-Length).
//
// While the snapshot is written, pages freed by later commits cannot be
// reused (the read transaction still sees them), so a long backup under a
// heavy load grows the file by about what was written meanwhile.
func (s *Store) Backup(w io.Writer, start func(size int64)) (int64, error) {
	var n int64
	err := s.db.View(func(tx *bolt.Tx) (err error) {
		if start != nil {
			start(tx.Size())
		}
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// DiskStats are the file's figures: what the operating system sees, what
// bbolt has in use and what it holds free for reuse. The file never
// shrinks by itself; compaction (Compact) returns free pages to the
// operating system.
type DiskStats struct {
	// FileBytes is the file's size on disk (it grows in steps, ahead of use).
	FileBytes int64
	// PageSize is bbolt's page size.
	PageSize int
	// HighWaterBytes is pages up to bbolt's high-water mark × page size:
	// what a compaction could not remove without dropping data or free
	// pages.
	HighWaterBytes int64
	// FreePages are pages bbolt will reuse (free now, or once the read
	// transactions that still see them end: PendingPages of them).
	FreePages, PendingPages int
	// LiveBytes estimates the data: pages in use below the high-water
	// mark (HighWaterBytes minus the free pages).
	LiveBytes int64
	// Segments counts the commit log's segments; OldestSegmentMillis is
	// the store time of the oldest one's first message (unix ms; 0 when
	// there is none).
	Segments            int
	OldestSegmentMillis int64
}

// DiskStats reports the file's figures (cheap: one stat and bbolt's
// counters).
func (s *Store) DiskStats() (DiskStats, error) {
	var d DiskStats
	err := s.db.View(func(tx *bolt.Tx) error {
		d.HighWaterBytes = tx.Size()
		segs, err := listSegments(tx)
		if len(segs) > 0 {
			d.Segments, d.OldestSegmentMillis = len(segs), segs[0].Created
		}
		return err
	})
	if err != nil {
		return d, err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return d, err
	}
	st := s.db.Stats()
	d.FileBytes = fi.Size()
	d.PageSize = s.db.Info().PageSize
	d.FreePages, d.PendingPages = st.FreePageN, st.PendingPageN
	d.LiveBytes = max(d.HighWaterBytes-int64(st.FreeAlloc), 0)
	return d, nil
}

// openChecked pre-checks the store file at path (plain reads) and opens it
// read-only under a shared lock: ErrLocked while a server holds it.
func openChecked(path string) (*bolt.DB, error) {
	db, _, err := openCheckedResult(path)
	return db, err
}

// openCheckedResult is openChecked with what the pre-check found.
func openCheckedResult(path string) (*bolt.DB, PreCheckResult, error) {
	if err := checkSettled(path); err != nil {
		return nil, PreCheckResult{}, err
	}
	pre, err := PreCheck(path)
	if err != nil {
		return nil, pre, err
	}
	db, err := openReadOnly(path)
	return db, pre, err
}

func openReadOnly(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: lockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// Verify checks the store file at path without writing it: the pre-check
// (every page, with plain reads) and the self check (mqgate's own
// structures). It is what a backup or a compacted file passes before it
// is trusted; records failing their checksum are reported, not set aside.
func Verify(path string) (corrupt int, err error) {
	r, err := VerifyReport(path)
	return r.Corrupt, err
}

// FileReport is what VerifyReport found in a file that passed.
type FileReport struct {
	PreCheckResult
	// Corrupt counts the records failing their checksum that are not set
	// aside yet (a server's next start sets them aside); SetAside those
	// already set aside (GET /v1/topics/{topic}/corrupt lists them).
	Corrupt, SetAside int
}

// VerifyReport is Verify with the figures of what it read: the offline
// self check of `mqgate check`. It never writes the file.
func VerifyReport(path string) (FileReport, error) {
	var r FileReport
	db, pre, err := openCheckedResult(path)
	if err != nil {
		return r, err
	}
	defer db.Close()
	r.PreCheckResult = pre
	s := &Store{db: db, path: path, opts: Options{FullCheckLimit: 64 << 20}, pageChecked: true} // the pre-check read every page
	var setAside []CorruptRecord
	err = s.guard(func() (err error) {
		if setAside, err = s.check(); err != nil {
			return err
		}
		return db.View(func(tx *bolt.Tx) error {
			if tx.Bucket(bucketCorrupt) == nil {
				return nil // a version 1 file, or one never initialised
			}
			known, err := listCorrupt(tx)
			r.SetAside = len(known)
			return err
		})
	})
	if err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	r.Corrupt = len(setAside)
	return r, nil
}

// BackupFile writes a consistent copy of the store file at path to w
// without a server: it opens the file read-only, under a shared lock, so
// it fails with ErrLocked while a server holds the file (back up through
// the server then: GET /v1/admin/backup).
func BackupFile(path string, w io.Writer) (int64, error) {
	db, err := openChecked(path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.View(func(tx *bolt.Tx) (err error) {
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}
