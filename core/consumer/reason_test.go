package consumer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// NackReason's text rides with the retry copy (the listener sees it on
// the next delivery), a later Nack without one clears it, and the
// dead-letter copy carries the last failure's reason.
func TestNackReasonReachesRetryAndDLQ(t *testing.T) {
	for _, orderly := range []bool{false, true} {
		t.Run(fmt.Sprintf("orderly=%v", orderly), func(t *testing.T) {
			e := &env{t: t, dir: t.TempDir()}
			for range 18 {
				e.delays = append(e.delays, 10*time.Millisecond)
			}
			e.open()
			t.Cleanup(e.close)
			e.topic("t", 1)
			mode := core.Concurrently
			if orderly {
				mode = core.Orderly
			}
			cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
				MaxReconsumeTimes: 2, ConsumeMode: mode})
			var mu sync.Mutex
			var seen []string // LAST_REASON at each delivery
			l := ListenerFunc(func(d *Delivery) {
				for i, m := range d.Msgs {
					mu.Lock()
					seen = append(seen, m.SysProps[core.PropLastReason])
					n := len(seen)
					mu.Unlock()
					switch {
					case orderly:
						// Orderly retries locally; only the DLQ copy is
						// sent back, with the final reason.
						d.NackReason(i, 0, fmt.Sprintf("orderly failure %d", n))
					case n == 1:
						d.NackReason(i, 0, "first failure")
					case n == 2:
						d.Nack(i, 0)
					default:
						d.NackReason(i, 0, "last failure")
					}
				}
			})
			o := Options{Group: cfg, ClientID: "c", Listener: l, PersistInterval: 10 * time.Millisecond,
				SuspendTime: 10 * time.Millisecond}
			c, err := New(o, Deps{Reader: e.eng, SendBack: engineSendBack{e.eng, e.reg}, Coordinator: e.reg})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			defer shutdown(t, c)
			if _, err := e.eng.Put(t.Context(), "t", []core.PutMessage{{Body: []byte("x")}}); err != nil {
				t.Fatal(err)
			}
			var dl []*core.Message
			checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
				var err error
				dl, _, err = e.eng.DLQMessages("g", "", 10)
				if err != nil || len(dl) != 1 {
					return fmt.Errorf("dlq: %v %d", err, len(dl))
				}
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			if orderly {
				if got := dl[0].SysProps[core.PropLastReason]; got != fmt.Sprintf("orderly failure %d", len(seen)) {
					t.Fatalf("DLQ reason %q after %d deliveries", got, len(seen))
				}
				return
			}
			if fmt.Sprint(seen) != "[ first failure ]" {
				t.Fatalf("reasons seen at each delivery: %q", seen)
			}
			if got := dl[0].SysProps[core.PropLastReason]; got != "last failure" {
				t.Fatalf("DLQ reason %q", got)
			}
		})
	}
}
