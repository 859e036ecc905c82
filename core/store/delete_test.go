package store

import (
	"context"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// TestTrimRemovesIndexesOfDamagedRecords: retention removes a record's id
// and key index entries from the record's front, without decoding the
// body: a record whose body fails its checksum leaves no index entry
// behind, and neither does a healthy one; the record set aside goes too.
func TestTrimRemovesIndexesOfDamagedRecords(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	db := s.DB()
	if err := db.Update(func(tx *bolt.Tx) error {
		_, _, err := PutTopic(tx, TopicRecord{Name: "t", Queues: 1, RetentionHours: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ops := make([]Op, 10)
	for i := range ops {
		id := fmt.Sprintf("id-%d", i)
		keys := []string{"k-" + id, "shared"}
		ops[i] = Op{Topic: "t", ID: id, Keys: keys,
			Record: EncodeMessage(&core.Message{ID: id, Topic: "t", Keys: keys, Body: make([]byte, 5000)})}
	}
	placed, err := s.Commit(context.Background(), ops, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		cl := tx.Bucket(bucketCommitLog)
		for _, i := range []int{2, 7} { // damage two bodies
			k := u64(placed[i].CommitLogOffset)
			rec := append([]byte(nil), cl.Get(k)...)
			rec[len(rec)-50] ^= 0xff
			if err := cl.Put(k, rec); err != nil {
				return err
			}
		}
		_, err := RecordCorrupt(tx, CorruptRecord{CommitLogOffset: placed[2].CommitLogOffset, UID: 1, Reason: "test"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		rec, _, err := GetTopic(tx, "t")
		if err != nil {
			return err
		}
		n, more, err := TrimQueue(tx, rec, 0, 1<<62, 100)
		if n != 10 || more {
			t.Errorf("trimmed %d (more %v), want 10", n, more)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketCommitLog, bucketIDs, bucketKeys, bucketCorrupt} {
			if n := tx.Bucket(b).Stats().KeyN; n != 0 {
				t.Errorf("%s holds %d entries after retention removed everything", b, n)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
