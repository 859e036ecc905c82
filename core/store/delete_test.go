package store

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

func mustTopic(t *testing.T, s *Store, name string, queues int) TopicRecord {
	t.Helper()
	var rec TopicRecord
	if err := s.Update(func(tx Tx) (err error) {
		rec, _, err = tx.PutTopic(TopicRecord{Name: name, Queues: queues, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return rec
}

// commitN commits n messages of topic round robin over queues, one group
// commit of per messages at a time, ids prefix-i, each with a key.
func commitN(t *testing.T, s *Store, topic string, queues, n, per int, prefix string) []Placed {
	t.Helper()
	var out []Placed
	for b := 0; b < n; b += per {
		var ops []Op
		for i := b; i < min(n, b+per); i++ {
			id := fmt.Sprintf("%s-%d", prefix, i)
			keys := []string{"k-" + id, "shared"}
			ops = append(ops, Op{Topic: topic, QueueID: i % queues, ID: id, Keys: keys,
				Record: EncodeMessage(&core.Message{ID: id, Topic: topic, Keys: keys, Body: make([]byte, 1000)})})
		}
		placed, err := s.Commit(context.Background(), ops, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, placed...)
	}
	return out
}

func segmentCount(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.View(func(tx *bolt.Tx) error {
		segs, err := listSegments(tx)
		n = len(segs)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// dropAll drops every droppable segment and returns how many it dropped.
func dropAll(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	if err := s.db.Update(func(tx *bolt.Tx) error {
		starts, err := droppableSegments(tx)
		if err != nil {
			return err
		}
		for _, st := range starts {
			if _, ok, err := dropSegment(tx, st); err != nil {
				return err
			} else if ok {
				n++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRetentionDropsWholeSegments: the writer cuts segments by size;
// trimQueue moves the min offsets (no record removed); the segments whose
// units are all below their queues' min go whole, with their id and key
// index entries and set-aside records, the one that still holds a visible
// message stays, and every reader agrees.
func TestRetentionDropsWholeSegments(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{SegmentBytes: 20 << 10})
	rec := mustTopic(t, s, "t", 4)
	placed := commitN(t, s, "t", 4, 200, 10, "m")
	if n := segmentCount(t, s); n < 8 {
		t.Fatalf("%d segments for 200 KB with 20 KB segments", n)
	}
	// A record set aside in the first segment goes with it.
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, err := recordCorrupt(tx, CorruptRecord{CommitLogOffset: placed[3].CommitLogOffset, UID: rec.UID, Reason: "test"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := dropAll(t, s); n != 0 {
		t.Fatalf("dropped %d segments holding visible messages", n)
	}
	// Expire the messages stored before message 150: the groups before
	// it, less any that shared its millisecond (a commit takes under one).
	var cutoff int64
	if err := s.db.View(func(tx *bolt.Tx) (err error) {
		cutoff, _, err = storedAtAt(tx, placed[150].CommitLogOffset)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var trimmed int
	if err := s.db.Update(func(tx *bolt.Tx) error {
		for q := range 4 {
			n, more, err := trimQueue(tx, rec, q, cutoff, 100)
			if err != nil || more {
				return fmt.Errorf("trim: %v more %v", err, more)
			}
			trimmed += n
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	before := segmentCount(t, s)
	var segs []SegmentInfo
	s.db.View(func(tx *bolt.Tx) (err error) { segs, err = listSegments(tx); return err })
	for i, g := range segs {
		if g.FirstPage == 0 || (i > 0 && g.FirstPage < segs[i-1].FirstPage) {
			t.Errorf("segment %d: first page %d", i, g.FirstPage)
		}
		if err := s.PrefetchSegment(g.Start); err != nil {
			t.Fatal(err)
		}
	}
	dropped := dropAll(t, s)
	want := 0
	for _, p := range placed {
		if p.StoredAt.UnixMilli() < cutoff {
			want++
		}
	}
	if trimmed != want || want < 100 || dropped < before/2 || dropped == before {
		t.Fatalf("trimmed %d messages (%d stored before the cutoff), dropped %d of %d segments", trimmed, want, dropped, before)
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		if _, ok := offsetOfID(tx, "m-0"); ok {
			t.Error("id of a dropped message still indexed")
		}
		if _, ok := offsetOfID(tx, "m-199"); !ok {
			t.Error("id of a live message lost")
		}
		if m, _ := messageAt(tx, placed[0].CommitLogOffset); m != nil {
			t.Error("record of a dropped segment still readable")
		}
		if isSetAside(tx, placed[3].CommitLogOffset) {
			t.Error("set-aside entry outlived its segment")
		}
		keys := offsetsOfKey(tx, "t", "shared", 1000)
		if len(keys) < 50 || len(keys) > 100 || keys[len(keys)-1] != placed[199].CommitLogOffset {
			t.Errorf("key index after the drop: %d entries", len(keys))
		}
		for q := range 4 {
			lo, hi, _ := queueRange(tx, rec.UID, q)
			n := 0
			if err := scanQueue(tx, rec.UID, q, 0, func(off int64, u Unit) bool {
				if off != lo+int64(n) {
					t.Errorf("queue %d: offset %d, want %d", q, off, lo+int64(n))
				}
				n++
				return true
			}); err != nil {
				return err
			}
			if int64(n) != hi-lo || hi != 50 {
				t.Errorf("queue %d scanned %d of [%d, %d)", q, n, lo, hi)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Verify(s.Path()); err != nil {
		t.Fatal(err)
	}
}

// TestDeletedTopicsSegmentsGo: a deleted topic's own segments go at once,
// a segment it shares with a live topic stays until that one's messages
// expire, and the trash entry is cleared with its last segment.
func TestDeletedTopicsSegmentsGo(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{SegmentBytes: 20 << 10})
	mustTopic(t, s, "gone", 2)
	keep := mustTopic(t, s, "keep", 1)
	commitN(t, s, "gone", 2, 95, 10, "g")
	commitN(t, s, "keep", 1, 5, 5, "k") // shares gone's last segment
	if err := s.db.Update(func(tx *bolt.Tx) error { _, _, err := removeTopic(tx, "gone"); return err }); err != nil {
		t.Fatal(err)
	}
	before := segmentCount(t, s)
	for more := true; more; {
		if err := s.db.Update(func(tx *bolt.Tx) (err error) { more, err = emptyTrash(tx, 512); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if after := segmentCount(t, s); after != 1 || before < 4 {
		t.Fatalf("segments %d → %d, want 1 left (shared with keep)", before, after)
	}
	var pending bool
	s.db.View(func(tx *bolt.Tx) error { pending = hasTrash(tx); return nil })
	if !pending {
		t.Fatal("trash cleared while a segment still holds the deleted topic's units")
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := trimQueue(tx, keep, 0, time.Now().Add(time.Hour).UnixMilli(), 10)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := dropAll(t, s); n != 1 || segmentCount(t, s) != 0 {
		t.Fatalf("dropped %d", n)
	}
	s.db.View(func(tx *bolt.Tx) error { pending = hasTrash(tx); return nil })
	if pending {
		t.Fatal("trash entry left after its last segment went")
	}
	// The writer starts a new segment after the last one went.
	commitN(t, s, "keep", 1, 3, 3, "k2")
	s.db.View(func(tx *bolt.Tx) error {
		if _, ok := offsetOfID(tx, "k2-2"); !ok {
			t.Error("message after the drop not indexed")
		}
		lo, hi, _ := queueRange(tx, keep.UID, 0)
		if lo != 5 || hi != 8 {
			t.Errorf("keep range [%d, %d)", lo, hi)
		}
		return nil
	})
	s.Close()
	if _, err := Verify(s.Path()); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsAcrossSegments: a Records reader, which keeps the last
// record's segment open, reads every record the lookup-per-read path
// does, in forward, backward and shuffled order across many segments,
// and misses the same absent ones (an offset past the end, one below the
// first segment after it was dropped).
func TestRecordsAcrossSegments(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{SegmentBytes: 20 << 10})
	mustTopic(t, s, "t", 4)
	placed := commitN(t, s, "t", 4, 200, 10, "m")
	if n := segmentCount(t, s); n < 8 {
		t.Fatalf("%d segments for 200 KB with 20 KB segments", n)
	}
	offs := make([]int64, 0, len(placed)+1)
	for _, p := range placed {
		offs = append(offs, p.CommitLogOffset)
	}
	last := offs[len(offs)-1]
	offs = append(offs, last+1, last+1000, -1)
	orders := [][]int64{offs, slices.Clone(offs), slices.Clone(offs)}
	slices.Reverse(orders[1])
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(orders[2]), func(i, j int) { orders[2][i], orders[2][j] = orders[2][j], orders[2][i] })
	if err := s.View(func(tx ReadTx) error {
		for i, order := range orders {
			rs := tx.Records()
			for _, cl := range order {
				want, werr := messageAt(tx.tx, cl)
				got, gerr := rs.MessageAt(cl)
				if (werr == nil) != (gerr == nil) || (want == nil) != (got == nil) ||
					(want != nil && (got.ID != want.ID || got.CommitLogOffset != want.CommitLogOffset)) {
					t.Fatalf("order %d, offset %d: reader %+v %v; lookup %+v %v", i, cl, got, gerr, want, werr)
				}
				if cl >= 0 && cl <= last && got == nil {
					t.Fatalf("order %d: record %d not found", i, cl)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseMappingShrinksResidentMemory (Linux): reading records maps
// their pages into the process; once their segments are dropped,
// ReleaseMapping takes those pages out of the resident set again, as the
// cleaner does after every drop.
func TestReleaseMappingShrinksResidentMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("madvise is wired up on Linux only")
	}
	s := openStore(t, t.TempDir(), Options{SegmentBytes: 1 << 20})
	rec := mustTopic(t, s, "t", 4)
	placed := commitN(t, s, "t", 4, 8000, 200, "m") // about 9 MB of records
	touched := readThroughMap(t, s, placed)
	before := mappedKB(t)
	if err := s.db.Update(func(tx *bolt.Tx) error {
		for q := range 4 {
			if _, _, err := trimQueue(tx, rec, q, math.MaxInt64, 0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var starts []int64
	if err := s.db.View(func(tx *bolt.Tx) (err error) { starts, err = droppableSegments(tx); return err }); err != nil {
		t.Fatal(err)
	}
	for _, start := range starts {
		if err := s.PrefetchSegment(start); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Update(func(tx *bolt.Tx) error { _, _, err := dropSegment(tx, start); return err }); err != nil {
			t.Fatal(err)
		}
		if err := s.ReleaseMapping(); err != nil {
			t.Fatal(err)
		}
	}
	after := mappedKB(t)
	if len(starts) < 4 || before-after < int64(touched/2/1024) {
		t.Fatalf("dropped %d segments holding %d KiB read through the map: mapped resident memory %d -> %d KiB",
			len(starts), touched/1024, before, after)
	}
	t.Logf("dropped %d segments (%d KiB read through the map): mapped resident memory %d -> %d KiB", len(starts), touched/1024, before, after)
}

// readThroughMap reads the records at placed through bbolt's map and
// returns their bytes.
func readThroughMap(t *testing.T, s *Store, placed []Placed) int {
	t.Helper()
	touched := 0
	if err := s.db.View(func(tx *bolt.Tx) error {
		for _, p := range placed {
			touched += len(recordAt(tx, p.CommitLogOffset))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return touched
}

// mappedKB is the process's resident file-backed memory (RssFile plus
// RssShmem, for a test directory on tmpfs), from /proc/self/status.
func mappedKB(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && (f[0] == "RssFile:" || f[0] == "RssShmem:") {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			kb += n
		}
	}
	return kb
}

// TestCheckpointReleasesMapping (Linux): the pages the commits wrote and
// read back through bbolt's map stay in the process's resident memory
// (the map is never remapped); a checkpoint after enough of them
// releases the mapping, and everything still reads.
func TestCheckpointReleasesMapping(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("madvise is wired up on Linux only")
	}
	defer func(n uint64) { releaseMappingPages = n }(releaseMappingPages)
	releaseMappingPages = 16 << 10 // 64 MiB: a test-sized store
	s := openStore(t, t.TempDir(), Options{CheckpointIdle: time.Hour})
	mustTopic(t, s, "t", 4)
	placed := commitN(t, s, "t", 4, 20000, 10, "m") // small groups: many pages written
	if got := s.stats.pages.Load(); got < releaseMappingPages {
		t.Fatalf("the commits allocated %d pages, fewer than the %d that call for a release", got, releaseMappingPages)
	}
	touched := readThroughMap(t, s, placed)
	before := mappedKB(t)
	s.releasedAt.Store(0) // whatever the checkpoints during the commits released
	s.wmu.Lock()
	err := s.checkpoint()
	s.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	after := mappedKB(t)
	if before-after < int64(touched/2/1024) {
		t.Fatalf("%d KiB of records read through the map: mapped resident memory %d -> %d KiB after the checkpoint", touched/1024, before, after)
	}
	t.Logf("%d KiB of records read through the map: mapped resident memory %d -> %d KiB after the checkpoint", touched/1024, before, after)
	if touched = readThroughMap(t, s, placed); touched < 20000*1000 {
		t.Fatalf("read %d bytes of records after the release", touched)
	}
}
