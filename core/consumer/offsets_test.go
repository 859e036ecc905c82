package consumer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// gatedAcker acks synchronously (so within a queue acks form a prefix)
// until limit acks, then holds deliveries unanswered.
type gatedAcker struct {
	mu    sync.Mutex
	limit int // <0: no limit
	acked map[string]core.MessageQueue
	pos   map[string]int64
	held  int
	again int // deliveries of a body acked before (by any phase)
	prior map[string]bool
}

func newGatedAcker(limit int, prior map[string]bool) *gatedAcker {
	return &gatedAcker{limit: limit, acked: map[string]core.MessageQueue{}, pos: map[string]int64{}, prior: prior}
}

func (g *gatedAcker) Consume(d *Delivery) {
	g.mu.Lock()
	ack := g.limit < 0 || len(g.acked) < g.limit
	for _, m := range d.Msgs {
		if g.prior[string(m.Body)] {
			g.again++
		}
		if ack {
			g.acked[string(m.Body)] = core.MessageQueue{Topic: m.Topic, QueueID: m.QueueID}
			g.pos[string(m.Body)] = m.QueueOffset
		}
	}
	if !ack {
		g.held++
	}
	g.mu.Unlock()
	if ack {
		d.AckAll()
	}
}

func (g *gatedAcker) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.acked)
}

func (g *gatedAcker) snapshot() (map[string]core.MessageQueue, map[string]int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := make(map[string]core.MessageQueue, len(g.acked))
	p := make(map[string]int64, len(g.pos))
	for k, v := range g.acked {
		a[k], p[k] = v, g.pos[k]
	}
	return a, p
}

func crash(t *testing.T, c *PushConsumer) {
	t.Helper()
	if err := c.shutdown(context.Background(), false); err != nil {
		t.Fatal(err)
	}
}

// (4) Offsets persist: a crash (no shutdown persist) mid-stream resumes
// from the persisted offsets. After a quiet persist window nothing is
// delivered twice; during continuous consumption, only messages acked
// after the last persist can come again.
func TestOffsetsPersistAcrossCrash(t *testing.T) {
	e := newEnv(t)
	e.topic("pay", 4)
	cfg := e.group(core.GroupConfig{Name: "p", Subscriptions: []core.Subscription{{Topic: "pay"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	const window = 50 * time.Millisecond
	mod := func(o *Options) { o.PersistInterval = window }
	e.publish("pay", "m", 2000, 20, nil)

	// Phase A: ack 1000, hold the rest, let a persist window pass, crash.
	a := newGatedAcker(1000, nil)
	c := e.consumer(cfg, "c", a, mod)
	checkFor(t, 10*time.Second, 2*time.Millisecond, func() error {
		if n := a.count(); n < 1000 {
			return fmt.Errorf("acked %d", n)
		}
		return nil
	})
	checkFor(t, 5*time.Second, window/2, func() error {
		offs, _ := e.reg.Offsets("p", "")
		for _, s := range c.Status() {
			if offs[s.Queue] != s.ConsumedOffset {
				return fmt.Errorf("%v: committed %d, in memory %d", s.Queue, offs[s.Queue], s.ConsumedOffset)
			}
		}
		return nil
	})
	crash(t, c)
	e.restart()

	ackedA, _ := a.snapshot()
	prior := map[string]bool{}
	for k := range ackedA {
		prior[k] = true
	}
	b := newGatedAcker(-1, prior)
	c = e.consumer(cfg, "c", b, mod)
	checkFor(t, 10*time.Second, 2*time.Millisecond, func() error {
		if n := b.count(); n != 1000 {
			return fmt.Errorf("phase B acked %d of 1000", n)
		}
		return nil
	})
	if b.again != 0 {
		t.Fatalf("%d messages acked before the quiet window came again", b.again)
	}

	// Phase C: crash while consuming continuously.
	var wg sync.WaitGroup
	wg.Go(func() { e.publish("pay", "n", 4000, 10, nil) })
	checkFor(t, 10*time.Second, time.Millisecond, func() error {
		if n := b.count(); n < 2500 {
			return fmt.Errorf("phase C acked %d", n)
		}
		return nil
	})
	crash(t, c)
	wg.Wait()
	committed, err := e.reg.Offsets("p", "")
	if err != nil {
		t.Fatal(err)
	}
	ackedB, posB := b.snapshot()
	prior = map[string]bool{}
	for k := range ackedB {
		prior[k] = true
	}
	d := newGatedAcker(-1, prior)
	c = e.consumer(cfg, "c", d, mod)
	defer shutdown(t, c)
	checkFor(t, 10*time.Second, 2*time.Millisecond, func() error {
		ackedD, _ := d.snapshot()
		missing := 0
		for i := 0; i < 4000; i++ {
			body := fmt.Sprintf("n%d", i)
			if _, ok := ackedB[body]; !ok {
				if _, ok := ackedD[body]; !ok {
					missing++
				}
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d messages never consumed", missing)
		}
		return nil
	})
	ackedD, _ := d.snapshot()
	dups := 0
	for body := range ackedD {
		if mq, ok := ackedB[body]; ok {
			dups++
			if posB[body] < committed[mq] {
				t.Fatalf("%s at %v/%d delivered again though committed offset is %d", body, mq, posB[body], committed[mq])
			}
		}
	}
	t.Logf("crash mid-stream: %d duplicates, all above the persisted offsets (window %v)", dups, window)
}
