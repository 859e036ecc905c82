package consumer

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// An idle queue's pull parks after LongPollingHold: no goroutine is left
// per queue (the retry queue included), and a message published to a
// parked queue still reaches the listener at once. Dropping parked queues
// (shutdown) cancels their wake-ups: nothing is started afterwards.
func TestIdleQueuesPark(t *testing.T) {
	e := newEnv(t)
	e.topic("quiet", 64)
	cfg := e.group(core.GroupConfig{Name: "p", Subscriptions: []core.Subscription{{Topic: "quiet"}}})
	before := runtime.NumGoroutine()
	l := timing{got: make(chan time.Time, 16)}
	c := e.consumer(cfg, "c", l, func(o *Options) { o.LongPollingHold = 50 * time.Millisecond })
	parked := func() (n int) {
		for _, q := range c.Status() {
			if q.Parked {
				n++
			}
		}
		return n
	}
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n, all := parked(), len(c.Status()); all != 65 || n != all {
			return fmt.Errorf("%d of %d queues parked", n, all)
		}
		return nil
	})
	// The client's own goroutines (service loop, scheduler, send-back
	// loop, watches) remain; the 65 pull goroutines are gone.
	if extra := runtime.NumGoroutine() - before; extra > 10 {
		t.Fatalf("%d goroutines more than before the client started, with every queue parked", extra)
	}
	if got := c.Stats().Parks; got < 65 {
		t.Fatalf("Stats.Parks %d, want at least 65", got)
	}

	// A parked queue is woken by an arrival, as fast as a held one.
	lat, _ := publishLatency(t, e, "quiet", l, 20)
	if p50 := lat[len(lat)/2]; p50 > 50*time.Millisecond {
		t.Fatalf("publish→listener p50 %v from parked queues", p50)
	}
	// ... and parks again.
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := parked(); n != 65 {
			return fmt.Errorf("%d of 65 queues parked again", n)
		}
		return nil
	})
	shutdown(t, c)
	e.publish("quiet", "after", 64, 64, nil)
	select {
	case <-l.got:
		t.Fatal("a message reached the listener after shutdown")
	case <-time.After(100 * time.Millisecond):
	}
}
