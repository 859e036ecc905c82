package store

import (
	"errors"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A topic record written before layouts existed decodes with none, and a
// record with layouts round-trips.
func TestTopicRecordLayoutsDecode(t *testing.T) {
	old := append([]byte{topicRecordVersion},
		`{"uid":7,"name":"t","queues":4,"retentionHours":72,"createdAt":"2026-01-02T15:04:05Z"}`...)
	r, err := decodeTopicRecord(old)
	if err != nil {
		t.Fatal(err)
	}
	if r.UID != 7 || r.Queues != 4 || r.Layouts != nil || r.Topic().Layouts != nil {
		t.Fatalf("old record decoded as %+v", r)
	}
	r.Layouts = []TopicLayout{{Queues: 2, Fence: []int64{5, 0}}, {Queues: 4, Fence: []int64{9, 3, 1, 0}}}
	back, err := decodeTopicRecord(r.encode())
	if err != nil {
		t.Fatal(err)
	}
	tp := back.Topic()
	if len(tp.Layouts) != 2 || tp.Layouts[1].Queues != 4 || !slices.Equal(tp.Layouts[1].Fence, []int64{9, 3, 1, 0}) {
		t.Fatalf("layouts round-tripped as %+v", tp.Layouts)
	}
	tp.Layouts[0].Fence[0] = 99 // the domain copy does not alias the record
	if back.Layouts[0].Fence[0] != 5 {
		t.Fatal("Topic() aliases the record's fences")
	}
}

// TestGetTopicMemoFollowsTheStoredBytes: the decoded-record memo never
// answers with a stale record: a read transaction begun before a change
// sees the record of its snapshot, one begun after sees the change, a
// rolled-back change leaves no trace, a deleted topic is not found.
func TestGetTopicMemoFollowsTheStoredBytes(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	db := s.db
	get := func(tx *bolt.Tx) TopicRecord {
		t.Helper()
		r, ok, err := getTopic(tx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return TopicRecord{}
		}
		return r
	}
	update := func(fn func(tx *bolt.Tx) error) {
		t.Helper()
		if err := db.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 2, RetentionHours: 1})
		return err
	})
	old, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback()
	if r := get(old); r.Queues != 2 {
		t.Fatalf("queues %d", r.Queues)
	}
	update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 4, RetentionHours: 9})
		return err
	})
	_ = db.Update(func(tx *bolt.Tx) error {
		if _, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 8, RetentionHours: 1}); err != nil {
			return err
		}
		if r := get(tx); r.Queues != 8 {
			t.Errorf("inside the changing transaction: %d queues", r.Queues)
		}
		return errors.New("roll back")
	})
	if err := db.View(func(tx *bolt.Tx) error {
		if r := get(tx); r.Queues != 4 || r.RetentionHours != 9 || len(r.Layouts) != 1 {
			t.Fatalf("after the change: %+v", r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r := get(old); r.Queues != 2 || r.RetentionHours != 1 || len(r.Layouts) != 0 {
		t.Fatalf("the older snapshot sees %+v", r)
	}
	update(func(tx *bolt.Tx) error { _, _, err := removeTopic(tx, "t"); return err })
	if err := db.View(func(tx *bolt.Tx) error {
		if _, ok, _ := getTopic(tx, "t"); ok {
			t.Fatal("a deleted topic is found")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkGetTopic: reading a topic record through the memo, against
// decoding it every time (what every pull and publish group did).
func BenchmarkGetTopic(b *testing.B) {
	s := openStore(b, b.TempDir(), Options{})
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "orders", Queues: 8, RetentionHours: 72})
		if err == nil {
			_, _, err = putTopic(tx, TopicRecord{Name: "orders", Queues: 16})
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	b.Run("memo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok, err := getTopic(tx, "orders"); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeTopicRecord(tx.Bucket(bucketTopics).Get([]byte("orders"))); err != nil {
				b.Fatal(err)
			}
		}
	})
}
