package consumer

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timing is a listener that reports when each message arrives.
type timing struct{ got chan time.Time }

func (l timing) Consume(d *Delivery) {
	now := time.Now()
	for range d.Msgs {
		l.got <- now
	}
	d.AckAll()
}

// An idle consumer (nothing to read) uses no measurable CPU: its pulls
// wait on Arrival channels, its timers are seconds apart. Then a message
// published to an idle queue reaches the listener within milliseconds.
func TestIdleCPUAndLatency(t *testing.T) {
	e := newEnv(t)
	e.topic("idle", 8)
	cfg := e.group(core.GroupConfig{Name: "i", Subscriptions: []core.Subscription{{Topic: "idle"}}})
	l := timing{got: make(chan time.Time, 16)}
	c := e.consumer(cfg, "c", l, nil)
	defer shutdown(t, c)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := len(c.Status()); n != 9 {
			return fmt.Errorf("owns %d queues", n)
		}
		return nil
	})
	time.Sleep(50 * time.Millisecond) // let the first pulls park on Arrival
	before := cpuTime(t)
	time.Sleep(2 * time.Second) // the measurement window, not a synchronisation
	used := cpuTime(t) - before
	t.Logf("idle consumer (9 queues): %v CPU over 2 s", used)
	if used > 40*time.Millisecond {
		t.Fatalf("idle consumer used %v CPU in 2 s", used)
	}

	lat, puts := publishLatency(t, e, "idle", l, 200)
	t.Logf("publish→listener latency over %d messages: p50 %v p99 %v max %v (of which Put itself, fsync included: p50 %v p99 %v)",
		len(lat), lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1], puts[len(puts)/2], puts[len(puts)*99/100])
	if p50 := lat[len(lat)/2]; p50 > 50*time.Millisecond {
		t.Fatalf("p50 latency %v", p50)
	}
}

// publishLatency publishes n single messages one at a time to idle queues
// and returns the sorted delays from the start of Put to the listener, and
// the sorted durations of Put (the durable commit) alone.
func publishLatency(t testing.TB, e *env, topic string, l timing, n int) (lat, puts []time.Duration) {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := e.eng.Put(context.Background(), topic, []core.PutMessage{{Body: []byte("ping")}}); err != nil {
			t.Fatal(err)
		}
		puts = append(puts, time.Since(start))
		select {
		case at := <-l.got:
			out = append(out, at.Sub(start))
		case <-time.After(5 * time.Second):
			t.Fatal("message never reached the listener")
		}
	}
	slices.Sort(out)
	slices.Sort(puts)
	return out, puts
}

func BenchmarkPublishToListener(b *testing.B) {
	e := &env{t: &testing.T{}, dir: b.TempDir(), back: &recordingSendBack{}}
	e.open()
	defer e.close()
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "lat", Queues: 8}); err != nil {
		b.Fatal(err)
	}
	g, _, err := e.reg.Put(core.GroupConfig{Name: "l", Subscriptions: []core.Subscription{{Topic: "lat"}}})
	if err != nil {
		b.Fatal(err)
	}
	l := timing{got: make(chan time.Time, 16)}
	c, err := New(Options{Group: g.GroupConfig, ClientID: "c", Listener: l}, Deps{Reader: e.eng, SendBack: e.back, Coordinator: e.reg})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	defer c.Shutdown(context.Background())
	b.ResetTimer()
	lat, puts := publishLatency(b, e, "lat", l, b.N)
	b.StopTimer()
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(puts[len(puts)/2].Microseconds()), "put-p50-µs")
}
