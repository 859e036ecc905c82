package consumer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Issue 9: consumption is exact while topics, groups and offsets change,
// and across restarts. Each test here fails on the consumer as it was
// before positions carried finished ranges and starts were decided at
// subscription.

// holdFirst acks every message except the one with body held, which it
// never answers; it records what it saw.
type holdFirst struct {
	held string
	mu   sync.Mutex
	seen map[string]int
}

func (h *holdFirst) Consume(d *Delivery) {
	h.mu.Lock()
	for _, m := range d.Msgs {
		h.seen[string(m.Body)]++
	}
	h.mu.Unlock()
	for i, m := range d.Msgs {
		if string(m.Body) != h.held {
			d.Ack(i)
		}
	}
}

func (h *holdFirst) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

// (8) One message held unanswered pins the committed offset; the 200
// acknowledged after it must not come back after a clean restart, nor
// after a crash once their acknowledgements were written.
func TestAckedAboveHeldMessageNotRedelivered(t *testing.T) {
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			e := newEnv(t)
			e.topic("t", 1)
			cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
				ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 16})
			e.publish("t", "m", 201, 50, nil)
			h := &holdFirst{held: "m0", seen: map[string]int{}}
			c := e.consumer(cfg, "c", h, nil)
			checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
				if n := h.count(); n != 201 {
					return fmt.Errorf("saw %d of 201", n)
				}
				for _, q := range c.Status() {
					if q.Queue.Topic == "t" && q.InFlight != 1 {
						return fmt.Errorf("status %+v", q)
					}
				}
				return nil
			})
			if clean {
				shutdown(t, c)
			} else {
				// Wait until the acknowledgements are written, then crash.
				mq := core.MessageQueue{Topic: "t"}
				checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
					p, _, err := e.reg.CommittedProgress("g", "", mq)
					if err != nil || len(p.Done) != 1 || p.Done[0] != (core.OffsetRange{From: 1, To: 201}) || p.Offset != 0 {
						return fmt.Errorf("stored %+v, %v", p, err)
					}
					return nil
				})
				crash(t, c)
			}
			e.restart()
			col := newCollector()
			c2 := e.consumer(cfg, "c", col, nil)
			defer shutdown(t, c2)
			checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
				if n := col.distinct(); n != 1 {
					return fmt.Errorf("after restart got %d distinct", n)
				}
				return nil
			})
			e.publish("t", "after", 1, 1, nil)
			checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
				if n := col.distinct(); n != 2 {
					return fmt.Errorf("got %d distinct", n)
				}
				return nil
			})
			if got := col.snapshot(); got["m0"] != 1 || got["after0"] != 1 || len(got) != 2 {
				t.Fatalf("redelivered after restart: %v (want only m0 and after0)", got)
			}
		})
	}
}

// (1) Queues that appear after a group subscribed — the topic grows, or
// is created after the group — are consumed from their first offset,
// whatever consumeFrom says.
func TestNewQueuesConsumedFromFirstOffset(t *testing.T) {
	e := newEnv(t)
	e.topic("grow", 2)
	grow := e.group(core.GroupConfig{Name: "g1", Subscriptions: []core.Subscription{{Topic: "grow"}},
		ConsumeFrom: core.ConsumeFromLastOffset, MaxReconsumeTimes: 16})
	later := e.group(core.GroupConfig{Name: "g2", Subscriptions: []core.Subscription{{Topic: "later"}},
		ConsumeFrom: core.ConsumeFromLastOffset, MaxReconsumeTimes: 16})
	mod := func(o *Options) { o.RebalanceInterval = time.Hour }
	c1, c2 := newCollector(), newCollector()
	defer shutdown(t, e.consumer(grow, "c", c1, mod))
	defer shutdown(t, e.consumer(later, "c", c2, mod))

	e.publish("grow", "before", 4, 4, nil) // after subscribing: delivered
	e.topic("grow", 8)
	e.topic("later", 4)
	e.publish("grow", "g", 16, 16, nil)
	e.publish("later", "l", 8, 8, nil)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := c1.distinct(); n != 20 {
			return fmt.Errorf("grown topic: %d of 20", n)
		}
		if n := c2.distinct(); n != 8 {
			return fmt.Errorf("topic created after the group: %d of 8", n)
		}
		return nil
	})
}

// (11) A BROADCASTING consumerId's start is decided when it first appears
// and persisted at once: a crash before anything was consumed must not
// apply LAST_OFFSET again and skip what was published meanwhile.
func TestBroadcastStartSurvivesCrash(t *testing.T) {
	e := newEnv(t)
	e.topic("b", 2)
	e.publish("b", "old", 4, 4, nil) // before the consumer appears: not delivered
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "b"}},
		MessageModel: core.Broadcasting, ConsumeFrom: core.ConsumeFromLastOffset, MaxReconsumeTimes: 16})
	first := newCollector()
	c := e.consumer(cfg, "x", first, func(o *Options) { o.PersistInterval = time.Hour })
	crash(t, c)
	e.publish("b", "new", 6, 6, nil)
	e.restart()
	col := newCollector()
	defer shutdown(t, e.consumer(cfg, "x", col, nil))
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := col.distinct(); n != 6 {
			return fmt.Errorf("got %d of the 6 published after the consumer appeared", n)
		}
		return nil
	})
	if got := col.snapshot(); got["old0"] != 0 {
		t.Fatalf("delivered a message from before the consumer appeared: %v", got)
	}
}

// (9) Dead-lettering is one transaction with the original's settlement: a
// crash right after it must not dead-letter the message again.
func TestDeadLetterOnceAcrossCrash(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 0})
	e.publish("t", "poison", 3, 3, nil)
	nack := ListenerFunc(func(d *Delivery) { d.NackAll(0) })
	for round := range 3 {
		// PersistInterval: nothing is written but the settle.
		c, err := New(Options{Group: cfg, ClientID: "c", Listener: nack, PersistInterval: time.Hour},
			Deps{Reader: e.eng, SendBack: engineSendBack{e.eng, e.reg}, Coordinator: e.reg})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
			if n, err := e.eng.DLQDepth("g"); err != nil || n < 3 {
				return fmt.Errorf("round %d: DLQ depth %d, %v", round, n, err)
			}
			return nil
		})
		crash(t, c)
		e.restart()
	}
	if n, err := e.eng.DLQDepth("g"); err != nil || n != 3 {
		t.Fatalf("DLQ holds %d entries for 3 messages (%v)", n, err)
	}
}

// (3) A deleted group's still-running client cannot write its positions
// back: the group created again under the same name starts clean.
func TestDeletedGroupPositionsStayDeleted(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 16})
	e.publish("t", "m", 10, 10, nil)
	old := newCollector()
	c := e.consumer(cfg, "c", old, func(o *Options) { o.RebalanceInterval = time.Hour })
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := old.distinct(); n != 10 {
			return fmt.Errorf("got %d of 10", n)
		}
		return nil
	})
	if err := e.reg.Delete("g"); err != nil {
		t.Fatal(err)
	}
	cfg2 := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 16})
	if cfg2.Incarnation <= cfg.Incarnation {
		t.Fatalf("incarnation %d after %d", cfg2.Incarnation, cfg.Incarnation)
	}
	shutdown(t, c) // persists the old incarnation's offset 10: must be dropped
	col := newCollector()
	defer shutdown(t, e.consumer(cfg2, "c", col, nil))
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := col.distinct(); n != 10 {
			return fmt.Errorf("the re-created group got %d of 10", n)
		}
		return nil
	})
}

// An acknowledgement accepted before its queue was dropped (here by a
// filter change) but answered after the drop wrote the position is not
// lost: it is merged into the stored position.
func TestLateAckAfterDropIsKept(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 16})
	var mu sync.Mutex
	var held []*Delivery
	l := ListenerFunc(func(d *Delivery) {
		mu.Lock()
		held = append(held, d)
		mu.Unlock()
	})
	if _, err := e.eng.Put(t.Context(), "t", []core.PutMessage{{Body: []byte("x"), Tags: "a"}, {Body: []byte("y"), Tags: "a"}}); err != nil {
		t.Fatal(err)
	}
	c := e.consumer(cfg, "c", l, func(o *Options) { o.RebalanceInterval = time.Hour })
	defer shutdown(t, c)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(held) < 2 {
			return fmt.Errorf("%d deliveries", len(held))
		}
		return nil
	})
	mu.Lock()
	old := append([]*Delivery(nil), held...)
	mu.Unlock()
	cfg.Subscriptions = []core.Subscription{{Topic: "t", Filter: "a"}} // a new slice: the consumer holds the old one
	c.UpdateConfig(cfg)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if !old[0].Dropped() {
			return fmt.Errorf("not dropped yet")
		}
		return nil
	})
	for _, d := range old {
		d.AckAll()
	}
	p, _, err := e.reg.CommittedProgress("g", "", core.MessageQueue{Topic: "t"})
	if err != nil || !p.Contains(0) || !p.Contains(1) {
		t.Fatalf("late acknowledgements not kept: %+v, %v", p, err)
	}
}
