package engine

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// BenchmarkPutWithPendingDelayed compares publishing into an engine holding
// many pending delayed messages (half delay levels, half timers, due in
// hours) with publishing into an empty one, alternating rounds in the same
// run, and reports the ratio of their publish times (issue 5: ≤ 1.10).
// MQGATE_BENCH_PENDING sets the backlog (default 100,000; the issue's
// figure is 1,000,000); MQGATE_BENCH_PENDING_KIND picks levels, timers
// or plain (the control below).
//
//	MQGATE_BENCH_PENDING=1000000 go test -run XXX -bench PendingDelayed -benchtime 20000x ./core/engine
func BenchmarkPutWithPendingDelayed(b *testing.B) {
	pending := 100_000
	if v, err := strconv.Atoi(os.Getenv("MQGATE_BENCH_PENDING")); err == nil && v > 0 {
		pending = v
	}
	empty := openTest(b, Options{})
	full := openTest(b, Options{})
	for _, e := range []*Engine{empty, full} {
		mustTopic(b, e, "bench", 8)
	}
	// "levels", "timers" or both; "plain" is the control: as many ordinary
	// messages on another topic, so the trees shared with plain publishes
	// (the segments' records and ids) and the file are as big as with levels.
	kind := os.Getenv("MQGATE_BENCH_PENDING_KIND")
	if kind == "plain" {
		mustTopic(b, full, "backlog", 8)
	}
	batch := make([]core.PutMessage, 1000)
	body := make([]byte, 1024)
	for i := 0; i < pending; i += len(batch) {
		for j := range batch {
			batch[j] = core.PutMessage{Body: body, DelayLevel: 17 + j%2}
			if kind == "timers" || (kind != "levels" && j%2 == 1) {
				batch[j] = core.PutMessage{Body: body, DeliverAt: time.Now().Add(time.Duration(1+j%900) * time.Hour)}
			}
			if kind == "plain" {
				batch[j] = core.PutMessage{Body: body}
			}
		}
		topic := "bench"
		if kind == "plain" {
			topic = "backlog"
		}
		mustPut(b, full, topic, batch...)
	}
	msg := []core.PutMessage{{Body: body, Tags: "t"}}
	run := func(e *Engine, n int) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for p := range publishers {
			wg.Go(func() {
				for i := p; i < n; i += publishers {
					if _, err := e.Put(context.Background(), "bench", msg); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	// Start both from a settled machine: the load's garbage collected and
	// its dirty file pages written back, which would otherwise slow the
	// first rounds' fsyncs and GC of whichever engine runs then.
	runtime.GC()
	syscall.Sync()
	b.ResetTimer()
	var tEmpty, tFull time.Duration
	const rounds = 4
	for range rounds {
		tEmpty += run(empty, b.N/rounds+1)
		tFull += run(full, b.N/rounds+1)
	}
	b.ReportMetric(float64(tFull)/float64(tEmpty), "pending/empty")
	b.ReportMetric(float64(b.N)/tEmpty.Seconds(), "empty-msgs/s")
	b.ReportMetric(float64(b.N)/tFull.Seconds(), "pending-msgs/s")
	// Free pages are what a freelist would hold: their count is the
	// usual reason a big file slows small transactions.
	for name, e := range map[string]*Engine{"pending": full, "empty": empty} {
		if ds, err := e.st.DiskStats(); err == nil {
			b.ReportMetric(float64(ds.FreePages), name+"-free-pages")
		}
	}
}
