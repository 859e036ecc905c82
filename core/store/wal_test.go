package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

var walTestBucket = Register("core/store wal test", "test.wal")

// walHook writes through every recorded kind of bucket write: a put in a
// nested bucket created on the way, a delete through a cursor, a sequence.
func walHook(i int) Hook {
	return func(tx Tx) error {
		b, err := tx.CreateBucketIfNotExists(walTestBucket)
		if err != nil {
			return err
		}
		nb, err := b.CreateBucketIfNotExists([]byte("nested"))
		if err != nil {
			return err
		}
		if err := nb.Put([]byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprintf("v%d", i))); err != nil {
			return err
		}
		if i%3 == 0 {
			c := nb.Cursor()
			if k, _ := c.First(); k != nil {
				if err := c.Delete(); err != nil {
					return err
				}
			}
		}
		_, err = b.NextSequence()
		return err
	}
}

// dumpHookBucket lists the test bucket's content and sequence.
func dumpHookBucket(t *testing.T, s *Store) string {
	t.Helper()
	var out bytes.Buffer
	if err := s.View(func(tx ReadTx) error {
		b := tx.Bucket(walTestBucket)
		if b == nil {
			return nil
		}
		fmt.Fprintf(&out, "seq=%d;", b.b.Sequence())
		return b.Bucket([]byte("nested")).ForEach(func(k, v []byte) error {
			fmt.Fprintf(&out, "%s=%s;", k, v)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestWALPowerCut models a power cut: the disk holds the file as synced at
// the last checkpoint, plus any subset of the page writes made since
// (meta pages included), plus the log as synced. Every such image must
// open, pass the self check and hold every acknowledged message and every
// hook write, and take new commits.
func TestWALPowerCut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	s := powerCutStore(t, dir, Options{SegmentBytes: 64 << 10})

	// The checkpoint: from here on the disk image is this copy plus
	// whatever the commits below wrote.
	s.wmu.Lock()
	if err := s.checkpoint(); err != nil {
		t.Fatal(err)
	}
	synced, err := os.ReadFile(path)
	s.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}

	// Acknowledged commits: appends to several segments (SegmentBytes is
	// small), hooks writing the test bucket, and groups of hooks alone.
	acked := commitHooked(t, s, 0, 60)
	want := dumpHookBucket(t, s)
	live, wal := snapshot(t, s)
	powerCutTrials(t, s.db.Info().PageSize, synced, live, wal, acked, want, nil)
}

// TestWALPowerCutLargeFreelist: a checkpoint whose freelist is too large
// to write at every checkpoint (here: any) leaves none, and a power cut
// back to it recovers as before the checkpoints wrote one: the pre-check
// reads every page and bbolt rebuilds the freelist by walking the tree.
func TestWALPowerCutLargeFreelist(t *testing.T) {
	defer func(n int) { checkpointFreelistPages = n }(checkpointFreelistPages)
	checkpointFreelistPages = -1
	TestWALPowerCut(t)
}

// powerCutStore opens a store in dir with topic t (3 queues) holding 300
// messages, for the power-cut tests.
func powerCutStore(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	s := openStore(t, dir, opts)
	if err := s.Update(func(tx Tx) error {
		_, _, err := tx.PutTopic(TopicRecord{Name: "t", Queues: 3, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	commitN(t, s, "t", 3, 300, 7, "before")
	return s
}

// powerCutTrials opens disk images made of synced (the file as synced at
// the checkpoint the log starts from) plus random subsets of the pages
// live (the file as the commits left it) differs in, each with the log
// wal (cut further by mutateWAL, when given, per trial). Each must open,
// hold every acked message and the hook writes want, take new commits
// and pass Verify once closed.
func powerCutTrials(t *testing.T, ps int, synced, live, wal []byte, acked []Placed, want string, mutateWAL func(trial int, wal []byte) []byte) {
	t.Helper()
	var written []int // pages that differ from the synced image
	for p := 0; p*ps < len(live); p++ {
		a := live[p*ps : min(len(live), (p+1)*ps)]
		if p*ps >= len(synced) || !bytes.Equal(a, synced[p*ps:min(len(synced), (p+1)*ps)]) {
			written = append(written, p)
		}
	}
	if len(written) < 20 {
		t.Fatalf("only %d pages written since the checkpoint: the test models nothing", len(written))
	}
	t.Logf("%d pages written since the checkpoint, log %d bytes", len(written), len(wal))

	for trial := range 12 {
		rnd := rand.New(rand.NewPCG(uint64(trial), 7))
		img := make([]byte, len(live))
		copy(img, synced)
		for _, p := range written {
			keep := rnd.IntN(2) == 0
			if trial == 0 {
				keep = true // nothing written since the checkpoint reached the disk
			}
			if trial == 1 {
				keep = false // everything did (a kill -9: the page cache survives)
			}
			if !keep {
				copy(img[p*ps:], live[p*ps:min(len(live), (p+1)*ps)])
			}
		}
		if trial%3 == 2 {
			// A meta page written half way.
			slot := rnd.IntN(2)
			copy(img[slot*ps+40:slot*ps+80], bytes.Repeat([]byte{0xAB}, 40))
		}
		cut := wal
		if trial%4 == 3 {
			// A record being appended when the power went: cut short.
			cut = append(bytes.Clone(wal), 0, 0, 1, 0, 9, 9, 9, 9, 1, 2, 3)
		}
		if mutateWAL != nil {
			cut = mutateWAL(trial, bytes.Clone(cut))
		}
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, FileName), img, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, WALName), cut, 0o600); err != nil {
			t.Fatal(err)
		}
		checkpointFreelist(t, trial, d)
		r, err := Open(d, Options{SegmentBytes: 64 << 10})
		if err != nil {
			t.Fatalf("trial %d: open after the power cut: %v", trial, err)
		}
		for _, p := range acked {
			var m *core.Message
			if err := r.View(func(tx ReadTx) (err error) { m, err = tx.MessageAt(p.CommitLogOffset); return err }); err != nil || m == nil {
				t.Fatalf("trial %d: acknowledged message at %d lost: %v", trial, p.CommitLogOffset, err)
			}
		}
		if got := dumpHookBucket(t, r); got != want {
			t.Fatalf("trial %d: hook writes after recovery\n got %s\nwant %s", trial, got, want)
		}
		commitN(t, r, "t", 3, 20, 5, fmt.Sprintf("again%d", trial))
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(filepath.Join(d, FileName)); err != nil {
			t.Fatalf("trial %d: the recovered file fails Verify: %v", trial, err)
		}
	}
}

// checkpointFreelist checks, on a copy of the power-cut image in dir, the
// state recovery puts the file back to: its meta page names the freelist
// the checkpoint wrote (so Open's pre-check skips the page walk and bbolt
// reads it instead of walking the tree), and the full pre-check, which
// walks the tree, finds that freelist listing exactly the pages the tree
// does not use, none in use, none lost.
func checkpointFreelist(t *testing.T, trial int, dir string) {
	t.Helper()
	d := t.TempDir()
	for _, name := range []string{FileName, WALName} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(d, FileName)
	if _, err := recoverWAL(path); err != nil {
		t.Fatalf("trial %d: recovery: %v", trial, err)
	}
	quick, err := PreCheckQuick(path)
	if want := checkpointFreelistPages >= 0; err != nil || quick.Quick != want {
		t.Fatalf("trial %d: the checkpoint recovered to lists a freelist: %v, want %v (%v)", trial, quick.Quick, want, err)
	}
	if _, err := PreCheck(path); err != nil {
		t.Fatalf("trial %d: the checkpoint's freelist against its tree: %v", trial, err)
	}
}

// commitHooked commits n groups of a few messages to topic t (3 queues)
// and the test bucket's hook writes, numbered from first, and returns
// where the messages landed.
func commitHooked(t *testing.T, s *Store, first, n int) []Placed {
	t.Helper()
	var acked []Placed
	for i := first; i < first+n; i++ {
		ops := []Op{}
		for j := range i % 4 {
			id := fmt.Sprintf("after-%d-%d", i, j)
			ops = append(ops, Op{Topic: "t", QueueID: (i + j) % 3, ID: id, Keys: []string{"k-" + id},
				Record: EncodeMessage(&core.Message{ID: id, Topic: "t", Body: bytes.Repeat([]byte{byte(i)}, 900)})})
		}
		placed, err := s.Commit(context.Background(), ops, walHook(i))
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, placed...)
	}
	return acked
}

// snapshot copies the store file and its log as they are, the writer held.
func snapshot(t *testing.T, s *Store) (file, wal []byte) {
	t.Helper()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	file, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	if wal, err = os.ReadFile(filepath.Join(filepath.Dir(s.path), WALName)); err != nil {
		t.Fatal(err)
	}
	return file, wal
}

// TestWALPowerCutRollingCheckpoint: a power cut while a rolling checkpoint
// is under way (its sync and header not done, while the writer commits on)
// recovers from the previous header, whose records run through the new
// checkpoint's; one after it recovers from the new header, whose records
// start where the writer was when it began. A torn new header is as good
// as none.
func TestWALPowerCutRollingCheckpoint(t *testing.T) {
	dir := t.TempDir()
	// No idle rewind behind the test's back.
	s := powerCutStore(t, dir, Options{SegmentBytes: 64 << 10, CheckpointIdle: time.Hour})
	synced, _ := snapshot(t, s) // the topic's rewind synced the file; model the commits since as all on disk

	acked := commitHooked(t, s, 0, 30)
	release := make(chan struct{})
	s.beforeRollingSync = func() { <-release }
	s.wmu.Lock()
	slot := s.wal.slot
	if err := s.beginRolling(); err != nil {
		t.Fatal(err)
	}
	// The records of the commits after the pin start where the writer
	// is now: after the freelist's empty group, logged before the pin.
	base, start := uint64(s.wal.rolling.pin.ID()), s.wal.off
	s.wmu.Unlock()
	acked = append(acked, commitHooked(t, s, 30, 30)...)
	during, duringWAL := snapshot(t, s)
	duringWant, duringAcked := dumpHookBucket(t, s), slices.Clone(acked)

	close(release)
	s.wmu.Lock()
	<-s.wal.rolling.done
	syncedX, err := os.ReadFile(s.path) // what the checkpoint's sync made durable
	s.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	acked = append(acked, commitHooked(t, s, 60, 30)...)
	s.wmu.Lock()
	next := s.wal.slot // the writer has installed the checkpoint
	s.wmu.Unlock()
	if next == slot {
		t.Fatalf("the next checkpoint would write over the newest header, in slot %d", slot)
	}
	live, wal := snapshot(t, s)
	want := dumpHookBucket(t, s)
	rec, err := readWAL(s.path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.header.base != base || rec.header.start != start || len(rec.records) != 60 {
		t.Fatalf("recovery would start at txid %d, log offset %d, with %d records; want %d, %d, 60",
			rec.header.base, rec.header.start, len(rec.records), base, start)
	}
	ps := s.db.Info().PageSize
	t.Run("during", func(t *testing.T) {
		powerCutTrials(t, ps, synced, during, duringWAL, duringAcked, duringWant, func(trial int, wal []byte) []byte {
			if trial%2 == 1 { // the new header torn half way
				copy(wal[slot*walSlotSize:], bytes.Repeat([]byte("MQGWAL02"), 600))
			}
			return wal
		})
	})
	t.Run("after", func(t *testing.T) {
		powerCutTrials(t, ps, syncedX, live, wal, acked, want, nil)
	})
}

// TestSecondOpenLeavesLiveFileAlone: an Open of a data dir a running
// store holds fails with ErrLocked and writes nothing, though the live
// file is ahead of its log's checkpoint (recovery would put its meta
// pages back to the checkpoint, under the running store's feet); the
// running store commits on and closes to a file that passes Verify.
func TestSecondOpenLeavesLiveFileAlone(t *testing.T) {
	dir := t.TempDir()
	s := powerCutStore(t, dir, Options{CheckpointIdle: time.Hour})
	commitHooked(t, s, 0, 10) // logged group commits: the file is past the checkpoint
	before, _ := snapshot(t, s)
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open of a live data dir: %v, want ErrLocked", err)
	}
	after, _ := snapshot(t, s)
	ps := s.db.Info().PageSize
	if !bytes.Equal(before[:2*ps], after[:2*ps]) {
		t.Fatal("the failed second open wrote the live file's meta pages")
	}
	commitHooked(t, s, 10, 10)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(filepath.Join(dir, FileName)); err != nil {
		t.Fatalf("the file after the failed second open: %v", err)
	}
}

// TestWALRefusesForeignFile: a log whose checkpoint is newer than the file
// beside it (the file was replaced, say by an older backup) is refused
// with a message naming the log, and the file is left unchanged.
func TestWALRefusesForeignFile(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	mustTopic(t, s, "t", 1)
	commitN(t, s, "t", 1, 10, 1, "m")
	older := t.TempDir()
	o := openStore(t, older, Options{})
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	s.wmu.Lock()
	wal, err := os.ReadFile(filepath.Join(dir, WALName))
	s.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(older, WALName), wal, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, filepath.Join(older, FileName))
	if _, err := Open(older, Options{}); err == nil || !bytes.Contains([]byte(err.Error()), []byte(WALName)) {
		t.Fatalf("open with a foreign log: %v", err)
	}
	if fileSum(t, filepath.Join(older, FileName)) != sum {
		t.Fatal("the refused file was changed")
	}
}

// TestWALOfflineToolsSettle: after a crash (the log holds records),
// reading the file offline is refused with a reason, and Compact redoes
// the log first and keeps every message.
func TestWALOfflineToolsSettle(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	mustTopic(t, s, "t", 2)
	placed := commitN(t, s, "t", 2, 50, 5, "m")
	// A crash: copy the file and the log as they are, without Close.
	s.wmu.Lock()
	img, err1 := os.ReadFile(filepath.Join(dir, FileName))
	wal, err2 := os.ReadFile(filepath.Join(dir, WALName))
	s.wmu.Unlock()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, FileName), img, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, WALName), wal, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(filepath.Join(d, FileName)); err == nil || !bytes.Contains([]byte(err.Error()), []byte("not closed cleanly")) {
		t.Fatalf("verify of an unsettled file: %v", err)
	}
	if _, err := Compact(d); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, WALName)); !os.IsNotExist(err) {
		t.Fatalf("the old log survived compaction: %v", err)
	}
	r := openStore(t, d, Options{})
	for _, p := range placed {
		if err := r.View(func(tx ReadTx) error {
			m, err := tx.MessageAt(p.CommitLogOffset)
			if err == nil && m == nil {
				err = fmt.Errorf("missing")
			}
			return err
		}); err != nil {
			t.Fatalf("message at %d after compaction: %v", p.CommitLogOffset, err)
		}
	}
}

// TestWALRecordsSkipEarlierRounds: the log is reused from its start at
// each rewind, so records of an earlier round lie behind the new
// header; reading stops at them (their txids do not follow on).
func TestWALRecordsSkipEarlierRounds(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	mustTopic(t, s, "t", 1)
	commitN(t, s, "t", 1, 40, 1, "a")
	s.wmu.Lock()
	if err := s.checkpoint(); err != nil {
		t.Fatal(err)
	}
	s.wmu.Unlock()
	commitN(t, s, "t", 1, 3, 1, "b")
	s.wmu.Lock()
	rec, err := readWAL(filepath.Join(dir, FileName))
	s.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.records) != 3 {
		t.Fatalf("%d records after the checkpoint, want 3", len(rec.records))
	}
	for i, p := range rec.records {
		if got := binary.BigEndian.Uint64(p[1:]); got != rec.header.base+1+uint64(i) {
			t.Fatalf("record %d has txid %d, base %d", i, got, rec.header.base)
		}
	}
}

// BenchmarkGroupCommitWAL: 64 publishers each committing one 1 KiB
// message at a time, the shape of the HTTP single publish, with the
// log-ahead and with bbolt's own synced commits, alternating so both see
// the same machine:
//
//	go test -run '^$' -bench GroupCommitWAL -benchtime 20000x -count 3 ./core/store
func BenchmarkGroupCommitWAL(b *testing.B) {
	for _, c := range []struct {
		name string
		wal  bool
		ckpt int64
	}{{"wal", true, 0}, {"wal-4MiB-checkpoints", true, 4 << 20}, {"bbolt-sync", false, 0}} {
		b.Run(c.name, func(b *testing.B) {
			defer func(old bool) { useWAL = old }(useWAL)
			useWAL = c.wal
			s := openStore(b, b.TempDir(), Options{CheckpointBytes: c.ckpt})
			if err := s.Update(func(tx Tx) error {
				_, _, err := tx.PutTopic(TopicRecord{Name: "t", Queues: 8, RetentionHours: 1})
				return err
			}); err != nil {
				b.Fatal(err)
			}
			body := bytes.Repeat([]byte("x"), 1024)
			var n atomic.Int64
			b.SetParallelism(32) // 64 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					id := fmt.Sprintf("m%d", i)
					op := Op{Topic: "t", QueueID: int(i % 8), ID: id,
						Record: EncodeMessage(&core.Message{ID: id, Topic: "t", Body: body})}
					if _, err := s.Commit(context.Background(), []Op{op}, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
			st := s.Stats()
			b.ReportMetric(float64(st.Requests)/float64(st.Groups), "reqs/group")
			b.ReportMetric(float64(st.Commit.Microseconds())/float64(st.Groups), "commit-µs/group")
			b.ReportMetric(float64(st.Checkpoints), "checkpoints")
		})
	}
}

// TestGatesHideWhatIsNotDurable: while the syncer has not yet synced a
// group the writer committed to bbolt, readers see each queue's max where
// it was; once synced, where the group left it.
func TestGatesHideWhatIsNotDurable(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	rec := mustTopic(t, s, "t", 2)
	commitN(t, s, "t", 2, 4, 4, "before") // 2 per queue
	entered, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open) // before the store's Close: a failed check must not leave the syncer held
	s.wmu.Lock()
	s.beforeSync = func() { entered <- struct{}{}; <-release }
	s.wmu.Unlock()
	done := make(chan error, 1)
	go func() {
		y := op("t", 1, "y")
		y.Keys = []string{"k"}
		_, err := s.Commit(context.Background(), []Op{op("t", 1, "x"), y}, nil)
		done <- err
	}()
	<-entered // committed to bbolt, not yet synced
	var raw, seen int64
	if err := s.View(func(tx ReadTx) (err error) {
		_, raw, _ = queueRange(tx.tx, rec.UID, 1)
		_, seen, err = tx.QueueRange(rec.UID, 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if raw != 4 || seen != 2 {
		t.Fatalf("before the sync: bbolt max %d (want 4), readers see %d (want 2)", raw, seen)
	}
	ranges := map[core.MessageQueue][2]int64{}
	if err := s.View(func(tx ReadTx) (err error) { ranges, err = tx.QueueRanges(); return err }); err != nil {
		t.Fatal(err)
	}
	if got := ranges[core.MessageQueue{Topic: "t", QueueID: 1}][1]; got != 2 {
		t.Fatalf("QueueRanges shows max %d before the sync, want 2", got)
	}
	var scanned []int64
	if err := s.View(func(tx ReadTx) error {
		return tx.ScanQueue(rec.UID, 1, 0, func(off int64, _ Unit) bool { scanned = append(scanned, off); return true })
	}); err != nil {
		t.Fatal(err)
	}
	if len(scanned) != 2 {
		t.Fatalf("a scan before the sync met offsets %v, want [0 1]", scanned)
	}
	if err := s.View(func(tx ReadTx) error {
		if _, ok, err := tx.UnitAt(rec.UID, 1, 2); ok || err != nil {
			t.Fatalf("UnitAt(2) before the sync: found %v, %v", ok, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lookUp := func(when string, want int) {
		t.Helper()
		var byID bool
		var byKey []int64
		if err := s.View(func(tx ReadTx) error {
			_, byID = tx.OffsetOfID("x")
			byKey = tx.OffsetsOfKey("t", "k", 10)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if byID != (want == 1) || len(byKey) != want {
			t.Fatalf("%s: message x found by id %v, key k at %v; want %d of each", when, byID, byKey, want)
		}
	}
	lookUp("before the sync", 0)
	open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.beforeSync = nil // the syncer is idle: its next read of the field follows this commit's answer
	if err := s.View(func(tx ReadTx) (err error) { _, seen, err = tx.QueueRange(rec.UID, 1); return err }); err != nil {
		t.Fatal(err)
	}
	if seen != 4 {
		t.Fatalf("after the sync readers see max %d, want 4", seen)
	}
	lookUp("after the sync", 1)
}

// TestWALRecoversVersion1Log: a log left by a crash of a build before the
// header slots (one header at 0, the records right after it) is redone,
// and the first checkpoint after it writes a version 2 header.
func TestWALRecoversVersion1Log(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{SegmentBytes: 64 << 10, CheckpointIdle: time.Hour})
	mustTopic(t, s, "t", 3)
	img, _ := snapshot(t, s) // synced by the topic's rewind; none of the commits below reach the disk
	acked := commitHooked(t, s, 0, 40)
	want := dumpHookBucket(t, s)
	_, wal := snapshot(t, s)
	rec, err := readWAL(s.path)
	if err != nil || len(rec.records) != 40 {
		t.Fatalf("%v records, err %v", len(rec.records), err)
	}
	// The version 1 layout of the same log.
	h := rec.header
	v1 := []byte(walMagicV1)
	v1 = binary.BigEndian.AppendUint64(v1, h.base)
	v1 = binary.BigEndian.AppendUint64(v1, uint64(h.segBytes))
	v1 = binary.BigEndian.AppendUint64(v1, uint64(h.segSpan))
	v1 = binary.BigEndian.AppendUint32(v1, h.rootSum)
	v1 = binary.BigEndian.AppendUint32(v1, uint32(len(h.meta)))
	v1 = append(v1, h.meta...)
	v1 = binary.BigEndian.AppendUint32(v1, crc32.Checksum(v1, crcTable))
	v1 = append(v1, wal[h.start:]...)

	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, FileName), img, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, WALName), v1, 0o600); err != nil {
		t.Fatal(err)
	}
	r := openStore(t, d, Options{SegmentBytes: 64 << 10})
	for _, p := range acked {
		var m *core.Message
		if err := r.View(func(tx ReadTx) (err error) { m, err = tx.MessageAt(p.CommitLogOffset); return err }); err != nil || m == nil {
			t.Fatalf("acknowledged message at %d lost: %v", p.CommitLogOffset, err)
		}
	}
	if got := dumpHookBucket(t, r); got != want {
		t.Fatalf("hook writes after recovery\n got %s\nwant %s", got, want)
	}
	_, wal = snapshot(t, r)
	if _, slot, err := newestHeader(wal); err != nil || slot != 0 || string(wal[:8]) != walMagic {
		t.Fatalf("after recovery the log's header is %q in slot %d (%v), want version 2 in slot 0", wal[:8], slot, err)
	}
}

// TestWALUnsettledWhenFileAheadOfCheckpoint: a power cut can lose every
// log record since the checkpoint (none was synced: no commit was
// answered) and keep some of those commits' page writes in the file, a
// newer meta page among them. The log holds no records, yet the file is
// not at the checkpoint: read as it is, it may look damaged (its meta
// names pages never written) or hold a state no start opens. The offline
// readers must call it unsettled and leave it alone; Open puts the
// checkpoint back, and Compact settles it so.
func TestWALUnsettledWhenFileAheadOfCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{CheckpointIdle: time.Hour})
	mustTopic(t, s, "t", 3)
	placed := commitN(t, s, "t", 3, 200, 5, "before")
	s.wmu.Lock()
	if err := s.checkpoint(); err != nil {
		s.wmu.Unlock()
		t.Fatal(err)
	}
	synced, wal := snapshotLocked(t, s)
	s.wmu.Unlock()
	commitHooked(t, s, 0, 40) // their records are what the power cut loses
	live, _ := snapshot(t, s)
	ps := s.db.Info().PageSize
	if bytes.Equal(live[:2*ps], synced[:2*ps]) {
		t.Fatal("the commits after the checkpoint wrote no meta page: the test models nothing")
	}

	metasOnly := bytes.Clone(synced)
	copy(metasOnly, live[:2*ps]) // the meta pages reached the disk, the pages they name did not
	for name, img := range map[string][]byte{"meta pages only": metasOnly, "every page": live} {
		d := t.TempDir()
		path := filepath.Join(d, FileName)
		if err := os.WriteFile(path, img, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, WALName), wal, 0o600); err != nil {
			t.Fatal(err)
		}
		if rec, err := readWAL(path); err != nil || rec == nil || len(rec.records) != 0 {
			t.Fatalf("%s: the log at the checkpoint should hold no records: %+v, %v", name, rec, err)
		}
		if _, err := Verify(path); !errors.Is(err, ErrUnsettled) {
			t.Fatalf("%s: Verify of a file ahead of its log's checkpoint: %v, want ErrUnsettled", name, err)
		}
		if _, err := BackupFile(path, io.Discard); !errors.Is(err, ErrUnsettled) {
			t.Fatalf("%s: BackupFile of a file ahead of its log's checkpoint: %v, want ErrUnsettled", name, err)
		}
		if !bytes.Equal(readFile(t, path), img) {
			t.Fatalf("%s: the offline readers changed the file", name)
		}

		// Compact settles a copy first; a plain Open and Close the original.
		c := t.TempDir()
		for _, n := range []string{FileName, WALName} {
			if err := os.WriteFile(filepath.Join(c, n), readFile(t, filepath.Join(d, n)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Compact(c); err != nil {
			t.Fatalf("%s: compact: %v", name, err)
		}
		for _, dd := range []string{d, c} {
			r, err := Open(dd, Options{})
			if err != nil {
				t.Fatalf("%s: open: %v", name, err)
			}
			for _, p := range placed {
				var m *core.Message
				if err := r.View(func(tx ReadTx) (err error) { m, err = tx.MessageAt(p.CommitLogOffset); return err }); err != nil || m == nil {
					t.Fatalf("%s: message at %d lost: %v", name, p.CommitLogOffset, err)
				}
			}
			if got := dumpHookBucket(t, r); got != "" {
				t.Fatalf("%s: the unanswered commits' hook writes survived: %s", name, got)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(filepath.Join(dd, FileName)); err != nil {
				t.Fatalf("%s: Verify after a start and a clean stop: %v", name, err)
			}
		}
	}
}

// snapshotLocked is snapshot with the writer already held.
func snapshotLocked(t *testing.T, s *Store) (file, wal []byte) {
	t.Helper()
	file = readFile(t, s.path)
	return file, readFile(t, filepath.Join(filepath.Dir(s.path), WALName))
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
