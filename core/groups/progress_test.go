package groups

import (
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

func TestProgressCodecRoundTripAndLegacy(t *testing.T) {
	for _, p := range []core.Progress{
		{},
		{Offset: 7, Epoch: 3, TopicUID: 9},
		{Offset: 1 << 40, Done: []core.OffsetRange{{From: 1<<40 + 2, To: 1<<40 + 5}, {From: 1<<40 + 9, To: 1<<40 + 10}}, Epoch: 1 << 50, TopicUID: 1},
	} {
		got, err := decodeProgress(encodeProgress(p))
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Fatalf("round trip %+v: %+v, %v", p, got, err)
		}
	}
	legacy := binary.BigEndian.AppendUint64(nil, 42)
	if got, err := decodeProgress(legacy); err != nil || got.Offset != 42 || got.Epoch != 0 || got.TopicUID != 0 {
		t.Fatalf("legacy: %+v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {2}, {3, 0, 0, 0, 0}, append(encodeProgress(core.Progress{Offset: 1}), 0)} {
		if _, err := decodeProgress(bad); err == nil {
			t.Fatalf("decoded garbage %x", bad)
		}
	}
}

func FuzzDecodeProgress(f *testing.F) {
	f.Add(encodeProgress(core.Progress{Offset: 5, Done: []core.OffsetRange{{From: 7, To: 9}}, Epoch: 2, TopicUID: 3}))
	f.Add(binary.BigEndian.AppendUint64(nil, 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProgress(b)
		if err != nil {
			return
		}
		prev := p.Offset
		for _, r := range p.Done {
			if r.From < prev || r.To <= r.From {
				t.Fatalf("decoded ranges out of order: %+v", p)
			}
			prev = r.To
		}
		again, err := decodeProgress(encodeProgress(p))
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("re-encode %+v: %+v, %v", p, again, err)
		}
	})
}

func TestNormalizeAndMerge(t *testing.T) {
	p := normalizeProgress(core.Progress{Offset: 5, Done: []core.OffsetRange{{From: 9, To: 10}, {From: 2, To: 4}, {From: 5, To: 7}, {From: 10, To: 12}}})
	want := core.Progress{Offset: 7, Done: []core.OffsetRange{{From: 9, To: 12}}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("normalize: %+v, want %+v", p, want)
	}
	m := mergeProgress(core.Progress{Offset: 3, Done: []core.OffsetRange{{From: 8, To: 9}}}, core.Progress{Offset: 4, Done: []core.OffsetRange{{From: 5, To: 6}}})
	want = core.Progress{Offset: 4, Done: []core.OffsetRange{{From: 5, To: 6}, {From: 8, To: 9}}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("merge: %+v, want %+v", m, want)
	}
	if !m.Contains(3) || !m.Contains(5) || m.Contains(6) || !m.Contains(8) || m.Contains(9) {
		t.Fatalf("contains: %+v", m)
	}
}

// The write rules that keep deleted and reset state from coming back.
func TestCommitProgressDropsStaleWrites(t *testing.T) {
	db := openDB(t)
	r := openRegistry(t, db, Options{})
	g, _, err := r.Put(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	mq := core.MessageQueue{Topic: "t"}
	commit := func(inc uint64, p core.Progress) {
		t.Helper()
		if err := r.CommitProgress(t.Context(), "g", inc, "", map[core.MessageQueue]core.Progress{mq: p}); err != nil {
			t.Fatal(err)
		}
	}
	read := func() core.Progress {
		t.Helper()
		p, _, err := r.CommittedProgress("g", "", mq)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	commit(g.Incarnation, core.Progress{Offset: 10, Done: []core.OffsetRange{{From: 12, To: 13}}, TopicUID: 4})
	// Merged, never backwards.
	commit(g.Incarnation, core.Progress{Offset: 8, Done: []core.OffsetRange{{From: 14, To: 15}}, TopicUID: 4})
	if p := read(); p.Offset != 10 || len(p.Done) != 2 {
		t.Fatalf("merge: %+v", p)
	}
	// An older topic incarnation is dropped; a newer one replaces.
	commit(g.Incarnation, core.Progress{Offset: 99, TopicUID: 3})
	if p := read(); p.Offset != 10 {
		t.Fatalf("older topic incarnation written: %+v", p)
	}
	commit(g.Incarnation, core.Progress{Offset: 2, TopicUID: 5})
	if p := read(); p.Offset != 2 || p.TopicUID != 5 || len(p.Done) != 0 {
		t.Fatalf("newer topic incarnation: %+v", p)
	}
	// A reset starts a new epoch: writes of the old one are dropped.
	if err := r.SetOffset("g", "", mq, 50); err != nil {
		t.Fatal(err)
	}
	reset := read()
	commit(g.Incarnation, core.Progress{Offset: 3, TopicUID: 5})
	if p := read(); p.Offset != 50 || p.Epoch != reset.Epoch {
		t.Fatalf("stale epoch written over a reset: %+v", p)
	}
	// Settle adds one finished offset in the transaction it is given.
	if err := db.Update(r.SettleHook("g", g.Incarnation, "", mq, 52, reset.Epoch, 0)); err != nil {
		t.Fatal(err)
	}
	if p := read(); !p.Contains(52) || p.Contains(51) {
		t.Fatalf("settle: %+v", p)
	}
	// A deleted group, or a new incarnation of it, takes no old writes.
	if err := r.Delete("g"); err != nil {
		t.Fatal(err)
	}
	commit(g.Incarnation, core.Progress{Offset: 70})
	if _, ok, _ := r.CommittedProgress("g", "", mq); ok {
		t.Fatal("a deleted group's position was written back")
	}
	g2, _, err := r.Put(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}})
	if err != nil || g2.Incarnation <= g.Incarnation {
		t.Fatalf("re-created: %+v, %v", g2, err)
	}
	commit(g.Incarnation, core.Progress{Offset: 70})
	if _, ok, _ := r.CommittedProgress("g", "", mq); ok {
		t.Fatal("an old incarnation's position was written into the new group")
	}
	if err := db.Update(r.SettleHook("g", g.Incarnation, "", mq, 1, 0, 0)); err != core.ErrGroupGone {
		t.Fatalf("settle for a gone incarnation: %v", err)
	}
}

// Starts are decided once at subscription: existing queues by consumeFrom,
// later queues (absent then) from their first offset.
func TestStartsDecidedAtSubscription(t *testing.T) {
	db := openDB(t)
	eng := fakeSearcher{queues: 2, min: 3, max: 100, at: 50}
	r := openRegistry(t, db, Options{Offsets: eng})
	g, _, err := r.Put(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}, ConsumeFrom: core.ConsumeFromLastOffset})
	if err != nil {
		t.Fatal(err)
	}
	for q := range 2 {
		p, ok, _ := r.CommittedProgress("g", "", core.MessageQueue{Topic: "t", QueueID: q})
		if !ok || p.Offset != 100 {
			t.Fatalf("queue %d start %+v, %v", q, p, ok)
		}
	}
	if ok, _ := r.StartsDecided("g", g.Incarnation, "", "t"); !ok {
		t.Fatal("t not decided")
	}
	if ok, _ := r.StartsDecided("g", g.Incarnation, "", "u"); ok {
		t.Fatal("u decided before it was subscribed")
	}
	// A consumerId of a BROADCASTING group decides its own when it appears.
	if _, _, err := r.Put(core.GroupConfig{Name: "b", Subscriptions: []core.Subscription{{Topic: "t"}},
		MessageModel: core.Broadcasting, ConsumeFrom: core.ConsumeFromTimestamp, ConsumeTimestamp: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := r.DecideStarts("b", "x"); err != nil {
		t.Fatal(err)
	}
	if p, ok, _ := r.CommittedProgress("b", "x", core.MessageQueue{Topic: "t", QueueID: 1}); !ok || p.Offset != 50 {
		t.Fatalf("broadcast start %+v %v", p, ok)
	}
	// Deleting the group forgets its decisions.
	if err := r.Delete("b"); err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx store.ReadTx) error {
		if k, _ := tx.Bucket(bucketStarts).Cursor().Seek([]byte("b\x00")); k != nil && string(k[:2]) == "b\x00" {
			t.Fatalf("marker %q left after delete", k)
		}
		return nil
	})
}

// An OFFSET_ILLEGAL correction lowers the stored offset (the merge of
// CommitProgress never would) under a fresh epoch, so a write from the
// client's earlier view cannot raise it again; it declines when the stored
// position is not the one the client read.
func TestCorrectOffsetLowersAndFreezes(t *testing.T) {
	db := openDB(t)
	r := openRegistry(t, db, Options{})
	g, _, err := r.Put(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	mq := core.MessageQueue{Topic: "t"}
	read := func() core.Progress {
		t.Helper()
		p, _, err := r.CommittedProgress("g", "", mq)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := r.CommitProgress(t.Context(), "g", g.Incarnation, "", map[core.MessageQueue]core.Progress{mq: {Offset: 100, Done: []core.OffsetRange{{From: 102, To: 103}}, TopicUID: 4}}); err != nil {
		t.Fatal(err)
	}
	// Not the epoch the client read: declined.
	if _, ok, err := r.CorrectOffset(t.Context(), "g", g.Incarnation, "", mq, 9, 4, 20); err != nil || ok {
		t.Fatalf("wrong epoch: ok %v, %v", ok, err)
	}
	epoch, ok, err := r.CorrectOffset(t.Context(), "g", g.Incarnation, "", mq, 0, 4, 20)
	if err != nil || !ok || epoch == 0 {
		t.Fatalf("correct: %d %v %v", epoch, ok, err)
	}
	if p := read(); p.Offset != 20 || p.Epoch != epoch || len(p.Done) != 0 || p.TopicUID != 4 {
		t.Fatalf("corrected: %+v", p)
	}
	// The client's earlier view (epoch 0) is dropped; its new one merges.
	if err := r.CommitProgress(t.Context(), "g", g.Incarnation, "", map[core.MessageQueue]core.Progress{mq: {Offset: 100, TopicUID: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := r.CommitProgress(t.Context(), "g", g.Incarnation, "", map[core.MessageQueue]core.Progress{mq: {Offset: 22, Epoch: epoch, TopicUID: 4}}); err != nil {
		t.Fatal(err)
	}
	if p := read(); p.Offset != 22 {
		t.Fatalf("after correction: %+v", p)
	}
	// Already at or below the max, a gone incarnation: nothing to do.
	if _, ok, _ := r.CorrectOffset(t.Context(), "g", g.Incarnation, "", mq, epoch, 4, 30); ok {
		t.Fatal("raised by a correction")
	}
	if _, ok, _ := r.CorrectOffset(t.Context(), "g", g.Incarnation+1, "", mq, epoch, 4, 1); ok {
		t.Fatal("corrected for another incarnation")
	}
}
