package store

import (
	"context"
	"sync"
	"testing"
	"time"
)

var durableTestBucket = Register("core/store durable test", "test.durable")

// syncHold is an Options.SyncHook that holds the syncs of one kind until
// released: entered receives once per held sync.
type syncHold struct {
	kind    SyncKind
	armed   chan struct{} // closed: hold from now on
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	armOnce sync.Once
}

// newSyncHold makes a hold; call t.Cleanup(h.open) after opening the
// store, so that it runs before the store's Close (a failed check must
// not leave a sync held).
func newSyncHold(kind SyncKind) *syncHold {
	h := &syncHold{kind: kind, armed: make(chan struct{}), entered: make(chan struct{}, 16), release: make(chan struct{})}
	return h
}

func (h *syncHold) arm()  { h.armOnce.Do(func() { close(h.armed) }) }
func (h *syncHold) open() { h.once.Do(func() { close(h.release) }) }

func (h *syncHold) hook(k SyncKind) {
	if k != h.kind {
		return
	}
	select {
	case <-h.armed:
	default:
		return
	}
	h.entered <- struct{}{}
	<-h.release
}

// notWithin fails unless done stays empty for d: the reader is waiting.
func notWithin[T any](t *testing.T, done <-chan T, d time.Duration, what string) {
	t.Helper()
	select {
	case v := <-done:
		t.Fatalf("%s answered before its state was durable: %v", what, v)
	case <-time.After(d):
	}
}

func within[T any](t *testing.T, done <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not answer once durable", what)
		panic("unreachable")
	}
}

// TestReadBarrierHidesHookWritesUntilSynced: a value a hook wrote in a
// group the writer committed to bbolt, but the syncer has not yet made
// durable, is not read until the group's fdatasync; a read of another
// area (queues, topics) in the same moment does not wait. Without the
// barrier the View reads the value at once.
func TestReadBarrierHidesHookWritesUntilSynced(t *testing.T) {
	h := newSyncHold(SyncLog)
	s := openStore(t, t.TempDir(), Options{SyncHook: h.hook})
	t.Cleanup(h.open)
	rec := mustTopic(t, s, "t", 1)
	if err := s.Update(func(tx Tx) error { _, err := tx.CreateBucketIfNotExists(durableTestBucket); return err }); err != nil {
		t.Fatal(err)
	}
	h.arm()
	committed := make(chan error, 1)
	go func() {
		_, err := s.Commit(context.Background(), []Op{op("t", 0, "m1")}, func(tx Tx) error {
			return tx.Bucket(durableTestBucket).Put([]byte("k"), []byte("v"))
		})
		committed <- err
	}()
	<-h.entered // committed to bbolt, its fdatasync held

	read := make(chan string, 1)
	go func() {
		var v string
		err := s.View(func(tx ReadTx) error {
			v = string(tx.Bucket(durableTestBucket).Get([]byte("k")))
			return nil
		})
		if err != nil {
			v = "error: " + err.Error()
		}
		read <- v
	}()
	// Another area does not wait: the topic and the queue (gated) answer now.
	other := make(chan int64, 1)
	go func() {
		var max int64 = -1
		_ = s.View(func(tx ReadTx) error {
			if _, ok, _ := tx.GetTopic("t"); ok {
				_, max, _ = tx.QueueRange(rec.UID, 0)
			}
			return nil
		})
		other <- max
	}()
	if got := within(t, other, "a read of the topic and its queue"); got != 0 {
		t.Fatalf("queue max %d while its append is not durable, want 0", got)
	}
	notWithin(t, read, 300*time.Millisecond, "a read of the hook's bucket")
	notWithin(t, committed, 0, "the commit")
	h.open()
	if v := within(t, read, "the read of the hook's bucket"); v != "v" {
		t.Fatalf("after the sync read %q, want v", v)
	}
	if err := within(t, committed, "the commit"); err != nil {
		t.Fatal(err)
	}
}

// TestReadBarrierHidesUpdateUntilCheckpoint: a topic created by
// Store.Update is committed to bbolt before its checkpoint syncs the
// file; a GetTopic in that moment waits for the checkpoint instead of
// reporting a topic a power cut would lose.
func TestReadBarrierHidesUpdateUntilCheckpoint(t *testing.T) {
	h := newSyncHold(SyncCheckpoint)
	s := openStore(t, t.TempDir(), Options{SyncHook: h.hook})
	t.Cleanup(h.open)
	h.arm()
	created := make(chan error, 1)
	go func() {
		created <- s.Update(func(tx Tx) error {
			_, _, err := tx.PutTopic(TopicRecord{Name: "fresh", Queues: 2, RetentionHours: 1})
			return err
		})
	}()
	<-h.entered // committed to bbolt, the checkpoint's sync held
	seen := make(chan bool, 1)
	go func() {
		var ok bool
		_ = s.View(func(tx ReadTx) (err error) { _, ok, err = tx.GetTopic("fresh"); return err })
		seen <- ok
	}()
	notWithin(t, seen, 300*time.Millisecond, "GetTopic of a topic being created")
	h.open()
	if !within(t, seen, "GetTopic") {
		t.Fatal("the topic is not found once durable")
	}
	if err := within(t, created, "the Update"); err != nil {
		t.Fatal(err)
	}
}

// TestReadBarrierFreeWhenDurable: with nothing pending a read does not
// wait at all (the figure the hot paths pay: two atomic loads).
func TestReadBarrierFreeWhenDurable(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	mustTopic(t, s, "t", 1)
	for i := range 50 {
		if _, err := s.Commit(context.Background(), []Op{op("t", 0, "m")}, func(tx Tx) error {
			b, err := tx.CreateBucketIfNotExists(durableTestBucket)
			if err != nil {
				return err
			}
			return b.Put([]byte{byte(i)}, []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
		// Answered: durable, so the read must find it without waiting.
		var v []byte
		if err := s.View(func(tx ReadTx) error { v = tx.Bucket(durableTestBucket).Get([]byte{byte(i)}); return nil }); err != nil || v == nil {
			t.Fatalf("read %d after its commit: %v %q", i, err, v)
		}
	}
	if d := s.dur.durable.Load(); d == 0 {
		t.Fatal("the durable txid never moved")
	}
}

// TestDurabilityEmptyCommit: a commit that wrote nothing (a checkpoint's
// freelist commit, which no syncer batch carries) is durable with the
// one before it, whichever of the two is noted first; a reader needing
// it is not left waiting for a sync that may not come.
func TestDurabilityEmptyCommit(t *testing.T) {
	d := newDurability()
	d.on = true
	d.mark(4)
	d.wroteNothing(6) // 5 is not durable yet
	if got := d.durable.Load(); got != 4 {
		t.Fatalf("durable %d, want 4", got)
	}
	woke := make(chan struct{})
	go func() { d.await(6); close(woke) }()
	d.mark(5)
	within(t, woke, "a reader of the empty commit")
	d.wroteNothing(7) // 6 is durable: so is 7 at once
	if got := d.durable.Load(); got != 7 {
		t.Fatalf("durable %d, want 7", got)
	}
	d.fail()
	done := make(chan struct{})
	go func() { d.await(100); close(done) }()
	within(t, done, "a reader after the log broke")
	if !d.lost(8) || d.lost(7) {
		t.Fatal("lost() wrong after the log broke")
	}
}

// TestReadBarrierUpdateWaitsOnlyForWhatItWrote: while the checkpoint of
// an Update that wrote one registered bucket is held, a read of that
// bucket waits and a read of the topics does not.
func TestReadBarrierUpdateWaitsOnlyForWhatItWrote(t *testing.T) {
	h := newSyncHold(SyncCheckpoint)
	s := openStore(t, t.TempDir(), Options{SyncHook: h.hook})
	t.Cleanup(h.open)
	mustTopic(t, s, "t", 1)
	h.arm()
	updated := make(chan error, 1)
	go func() {
		updated <- s.Update(func(tx Tx) error {
			b, err := tx.CreateBucketIfNotExists(durableTestBucket)
			if err != nil {
				return err
			}
			return b.Put([]byte("cfg"), []byte("v"))
		})
	}()
	<-h.entered
	topic := make(chan bool, 1)
	go func() {
		var ok bool
		_ = s.View(func(tx ReadTx) (err error) { _, ok, err = tx.GetTopic("t"); return err })
		topic <- ok
	}()
	if !within(t, topic, "a read of the topics") {
		t.Fatal("topic t not found")
	}
	cfg := make(chan string, 1)
	go func() {
		var v string
		_ = s.View(func(tx ReadTx) error {
			if b := tx.Bucket(durableTestBucket); b != nil {
				v = string(b.Get([]byte("cfg")))
			}
			return nil
		})
		cfg <- v
	}()
	notWithin(t, cfg, 300*time.Millisecond, "a read of the bucket the Update wrote")
	h.open()
	if v := within(t, cfg, "the read of the bucket"); v != "v" {
		t.Fatalf("read %q once durable, want v", v)
	}
	if err := within(t, updated, "the Update"); err != nil {
		t.Fatal(err)
	}
}
