package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// publishers is the concurrency of the publish benchmarks (issue 2: 64
// concurrent clients).
const publishers = 64

// BenchmarkPut publishes 1 KiB messages from 64 goroutines, single and in
// batches of 100, each durably (synced group commit). It reports msgs/s.
//
//	go test -run XXX -bench Put -benchtime 5s ./core/engine
func BenchmarkPut(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			e := openTest(b, Options{})
			mustTopic(b, e, "bench", 8)
			msgs := make([]core.PutMessage, batch)
			for i := range msgs {
				msgs[i] = core.PutMessage{Body: make([]byte, 1024), Tags: "t", Keys: []string{"k"}}
			}
			b.SetParallelism(max(1, publishers/runtime.GOMAXPROCS(0)))
			b.SetBytes(int64(1024 * batch))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := e.Put(context.Background(), "bench", msgs); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "msgs/s")
			if st := e.st.Stats(); st.Groups > 0 {
				b.ReportMetric(float64(st.Requests)/float64(st.Groups), "reqs/group")
				b.ReportMetric(float64(st.PageWrites)/float64(st.Groups), "pwrites/group")
				b.ReportMetric(float64(st.Apply.Microseconds())/float64(st.Groups), "apply-us/group")
				b.ReportMetric(float64(st.Commit.Microseconds())/float64(st.Groups), "commit-us/group")
			}
		})
	}
}

// BenchmarkBoltBatch is the reference issue 2 compares against: the same 64
// publishers each committing one 1 KiB message through bbolt's db.Batch.
// It opens a bare bbolt file of its own (the one use of bbolt in this
// package): the point is a baseline without the store.
func BenchmarkBoltBatch(b *testing.B) {
	for _, size := range []int{1000, 64} {
		b.Run(fmt.Sprintf("maxBatch=%d", size), func(b *testing.B) {
			db, err := bolt.Open(b.TempDir()+"/bolt.db", 0o600, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.MaxBatchSize = size
			if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			var seq atomic.Uint64
			b.SetParallelism(max(1, publishers/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := u64key(seq.Add(1))
					if err := db.Batch(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put(k, body) }); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

func u64key(v uint64) []byte {
	return []byte{byte(v >> 56), byte(v >> 48), byte(v >> 40), byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// BenchmarkGetMessagesOne: a pull of one 1 KiB message from an 8-queue
// topic (the topic record comes from store's decoded-record memo).
func BenchmarkGetMessagesOne(b *testing.B) {
	e, mq := filledQueue(b, 100)
	b.ReportAllocs()
	for b.Loop() {
		if r, err := e.GetMessages(mq, 0, 1, core.MatchAll); err != nil || r.Status != core.Found {
			b.Fatal(r.Status, err)
		}
	}
}

// BenchmarkGetMessages32 reads a pull's worth (32 messages of 1 KiB) from
// one queue, the shape of every receive.
func BenchmarkGetMessages32(b *testing.B) {
	e, mq := filledQueue(b, 800)
	b.ReportAllocs()
	for b.Loop() {
		if r, err := e.GetMessages(mq, 0, 32, core.MatchAll); err != nil || r.Status != core.Found || len(r.Messages) != 32 {
			b.Fatal(r.Status, len(r.Messages), err)
		}
	}
}

// filledQueue publishes n messages of 1 KiB to a topic of 8 queues and
// returns one of its queues (about n/8 messages).
func filledQueue(b *testing.B, n int) (*Engine, core.MessageQueue) {
	e := openTest(b, Options{})
	mustTopic(b, e, "t", 8)
	body := make([]byte, 1024)
	batch := make([]core.PutMessage, n)
	for i := range batch {
		batch[i] = core.PutMessage{Body: body}
	}
	mustPut(b, e, "t", batch...)
	return e, core.MessageQueue{Topic: "t", QueueID: 1}
}
