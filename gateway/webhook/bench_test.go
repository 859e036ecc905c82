package webhook

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// BenchmarkPush measures deliveries to a fast local receiver with
// maxInFlight 64, fed the way the consume services feed a listener: a
// window of 8 deliveries of 32 messages outstanding (flow control). It
// reports messages/s and the Consume → answer latency per message.
//
//	go test -run '^$' -bench Push -benchmem ./gateway/webhook/
func BenchmarkPush(b *testing.B) {
	for _, batch := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch%d", batch), func(b *testing.B) { benchPush(b, batch) })
	}
}

func benchPush(b *testing.B, batch int) {
	srv := receiver(b, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	p := newTestPusher(b, core.PushConfig{URL: srv.URL, MaxInFlight: 64, BatchSize: batch}, Options{AllowLoopback: true})
	const perDelivery, window = 32, 8
	msgs := makeMsgs("bench", 0, perDelivery)
	lat := make([]time.Duration, b.N)
	slots := make(chan struct{}, window)
	var answered atomic.Int64
	done := make(chan struct{})

	b.ResetTimer()
	for sent := 0; sent < b.N; sent += perDelivery {
		slots <- struct{}{}
		n := min(perDelivery, b.N-sent)
		base, start := sent, time.Now()
		var left atomic.Int32
		left.Store(int32(n))
		d := consumer.NewDelivery("g", core.MessageQueue{Topic: "orders"}, false, msgs[:n], func(i int, ok bool, _ int) {
			if !ok {
				b.Error("nacked")
			}
			lat[base+i] = time.Since(start)
			if left.Add(-1) == 0 {
				<-slots
			}
			if answered.Add(1) == int64(b.N) {
				close(done)
			}
		})
		p.Consume(d)
	}
	<-done
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
