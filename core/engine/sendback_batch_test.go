package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// SendMessagesBack: many copies in one request; a settle hook answering
// core.ErrGroupGone drops only its own copy, the others commit with their
// settlements; a guard answering core.ErrGroupGone drops the whole batch.
func TestSendMessagesBackBatch(t *testing.T) {
	e := openTest(t, Options{DelayLevels: ladderLevels})
	mustTopic(t, e, "orders", 1)
	for i := range 5 {
		mustPut(t, e, "orders", core.PutMessage{Body: []byte{byte('a' + i)}})
	}
	msgs := readAll(t, e, core.MessageQueue{Topic: "orders"})
	settled := make([]bool, len(msgs))
	var ran []int
	settle := func(i int) store.Hook {
		return func(tx store.Tx) error {
			ran = append(ran, i)
			if i == 2 {
				return core.ErrGroupGone
			}
			settled[i] = true
			return nil
		}
	}
	backs := make([]SendBack, len(msgs))
	for i, m := range msgs {
		backs[i] = SendBack{Msg: m, MaxReconsumeTimes: 16, Settle: settle(i)}
	}
	backs[4].DelayLevel = -1 // straight to the DLQ
	before := e.WriterStats().Groups
	if err := e.SendMessagesBack(t.Context(), "g", nil, backs); err != nil {
		t.Fatal(err)
	}
	// One attempt ran 0,1,2 then failed on 2; the retry ran 0,1,3,4.
	if want := []int{0, 1, 2, 0, 1, 3, 4}; !equalInts(ran, want) {
		t.Fatalf("hooks ran %v, want %v (in order, the gone one dropped)", ran, want)
	}
	// Two for the batch (one attempt rolled back, one committed); the
	// engine's own tasks may commit meanwhile on a loaded machine. One
	// commit per message would be at least five.
	if got := e.WriterStats().Groups - before; got > 4 {
		t.Fatalf("%d group commits for one batch of 5, want about 2 (one attempt rolled back)", got)
	}
	if c := e.Counters(); c.Retried != 3 || c.DeadLettered != 1 {
		t.Fatalf("counters %+v, want 3 retried, 1 dead-lettered", c)
	}
	retried := waitCount(t, e, core.MessageQueue{Topic: core.RetryTopic("g")}, 3, 5*time.Second)
	for _, m := range retried {
		if m.SysProps[core.PropOriginMessageID] == msgs[2].ID {
			t.Fatalf("the copy whose settle answered ErrGroupGone was stored")
		}
	}
	if dlq := readAll(t, e, core.MessageQueue{Topic: core.DLQTopic("g")}); len(dlq) != 1 || dlq[0].UserID() != msgs[4].ID {
		t.Fatalf("DLQ %+v", dlq)
	}

	// A guard answering ErrGroupGone: nothing written, nil returned.
	guard := func(store.Tx) error { return core.ErrGroupGone }
	if err := e.SendMessagesBack(t.Context(), "g", guard, backs[:2]); err != nil {
		t.Fatal(err)
	}
	if c := e.Counters(); c.Retried != 3 {
		t.Fatalf("guarded batch stored copies: %+v", c)
	}
	// Another hook error fails the batch, nothing stored.
	boom := errors.New("boom")
	backs[0].Settle = func(store.Tx) error { return boom }
	if err := e.SendMessagesBack(t.Context(), "g", nil, backs[:2]); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if c := e.Counters(); c.Retried != 3 {
		t.Fatalf("failed batch stored copies: %+v", c)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkSendMessagesBack compares one send-back per commit with one
// batch of b.N copies (the consumer's send-back loop).
func BenchmarkSendMessagesBack(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(map[int]string{1: "serial", 100: "batch100"}[batch], func(b *testing.B) {
			e := openTest(b, Options{})
			mustTopic(b, e, "orders", 1)
			for range 100 {
				mustPut(b, e, "orders", core.PutMessage{Body: []byte("x")})
			}
			msgs := readAll(b, e, core.MessageQueue{Topic: "orders"})
			b.ResetTimer()
			for range b.N {
				backs := make([]SendBack, 0, 100)
				for _, m := range msgs {
					backs = append(backs, SendBack{Msg: m, MaxReconsumeTimes: 16})
				}
				if batch == 1 {
					for _, sb := range backs {
						if err := e.SendMessagesBack(b.Context(), "g", nil, []SendBack{sb}); err != nil {
							b.Fatal(err)
						}
					}
					continue
				}
				if err := e.SendMessagesBack(b.Context(), "g", nil, backs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*100), "µs/msg")
		})
	}
}
