package store

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// BenchmarkApplyGroup measures the writer's appends of one group commit
// (txState.prepare and apply, no commit) in the shape of the batch
// publish load: 24 requests of 100 1 KiB messages, each request on one
// queue, into a segment already holding 20,000 messages; the
// transaction is rolled back, so every iteration sees the same file.
//
//	go test -run '^$' -bench ApplyGroup -benchmem ./core/store
func BenchmarkApplyGroup(b *testing.B) {
	s := openStore(b, b.TempDir(), Options{})
	if err := s.Update(func(tx Tx) error {
		_, _, err := tx.PutTopic(TopicRecord{Name: "bench", Queues: 8, RetentionHours: 1})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 1024)
	now := time.Now()
	request := func(q int) []Op {
		ops := make([]Op, 100)
		for i := range ops {
			id := core.NewMessageID(now)
			ops[i] = Op{Topic: "bench", QueueID: q, ID: id,
				Record: EncodeMessage(&core.Message{ID: id, Topic: "bench", Body: body, BodyIsText: true})}
		}
		return ops
	}
	for i := range 200 {
		if _, err := s.Commit(context.Background(), request(i%8), nil); err != nil {
			b.Fatal(err)
		}
	}
	group := make([][]Op, 24)
	for i := range group {
		group[i] = request(i % 8)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.wmu.Lock()
		tx, err := s.db.Begin(true)
		if err != nil {
			b.Fatal(err)
		}
		st := newTxState(tx, now.UnixMilli(), &s.opts)
		for _, ops := range group {
			if err := st.prepare(ops); err != nil {
				b.Fatal(err)
			}
			if _, err := st.apply(ops); err != nil {
				b.Fatal(err)
			}
		}
		_ = tx.Rollback()
		s.wmu.Unlock()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*24*100), "ns/msg")
}
