package store

import (
	"context"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// BenchmarkCommitFragmented: one small group commit on a file with many
// free pages (100,000 messages of 1 KiB written, 90% of them deleted),
// with the freelist synced at each commit (before) and not (now).
func BenchmarkCommitFragmented(b *testing.B) {
	for _, synced := range []bool{true, false} {
		b.Run(fmt.Sprintf("freelist-synced=%v", synced), func(b *testing.B) {
			defer func(old bool) { syncFreelist = old }(syncFreelist)
			syncFreelist = synced
			s, op := fragmentedStore(b, 100_000)
			free := s.db.Stats().FreePageN
			before := s.Stats()
			for b.Loop() {
				op[0].Record = EncodeMessage(messageFor("t", make([]byte, 1024)))
				if _, err := s.Commit(context.Background(), op, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(free), "free-pages")
			after := s.Stats()
			b.ReportMetric(float64((after.Commit-before.Commit).Microseconds())/float64(after.Groups-before.Groups), "commit-µs/group")
		})
	}
}

// BenchmarkCheckpointFreelist: what writeFreelist costs a checkpoint (the
// writer stands still for it) on a fragmented file, by free page count.
func BenchmarkCheckpointFreelist(b *testing.B) {
	for _, n := range []int{100_000, 400_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			s, _ := fragmentedStore(b, n)
			st := s.db.Stats()
			s.wmu.Lock()
			defer s.wmu.Unlock()
			for b.Loop() {
				if err := s.writeFreelist(true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.FreePageN+st.PendingPageN), "free-pages")
		})
	}
}

// fragmentedStore writes n messages of 1 KiB to topic t and deletes 90%
// of them, every record but each tenth, so the free pages are scattered
// (a fragmented file). It returns the store and a one-message op for t.
func fragmentedStore(b *testing.B, n int) (*Store, []Op) {
	b.Helper()
	s := openStore(b, b.TempDir(), Options{})
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, _, err := putTopic(tx, TopicRecord{Name: "t", Queues: 1, RetentionHours: 1})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	for range n / 1000 {
		ops := make([]Op, 1000)
		for i := range ops {
			ops[i] = Op{Topic: "t", Record: EncodeMessage(messageFor("t", body))}
		}
		if _, err := s.Commit(context.Background(), ops, nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		for off := range int64(n) {
			if off%10 != 0 {
				if err := seg(tx, off).Bucket(segCL).Delete(u64(off)); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	// One more commit releases the pages the deletion freed.
	op := []Op{{Topic: "t", Record: EncodeMessage(messageFor("t", body))}}
	if _, err := s.Commit(context.Background(), op, nil); err != nil {
		b.Fatal(err)
	}
	return s, op
}

func messageFor(topic string, body []byte) *core.Message {
	return &core.Message{Topic: topic, Body: body}
}

func seg(tx *bolt.Tx, cl int64) *bolt.Bucket {
	b, _, _ := segmentOf(tx, cl)
	return b
}
