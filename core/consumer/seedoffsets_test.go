package consumer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// heldAcks keeps every delivery unanswered until release.
type heldAcks struct {
	mu   sync.Mutex
	held []*Delivery
}

func (h *heldAcks) Consume(d *Delivery) {
	h.mu.Lock()
	h.held = append(h.held, d)
	h.mu.Unlock()
}

func (h *heldAcks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, d := range h.held {
		n += len(d.Msgs)
	}
	return n
}

func (h *heldAcks) ackAll() {
	h.mu.Lock()
	held := h.held
	h.held = nil
	h.mu.Unlock()
	for _, d := range held {
		d.AckAll()
	}
}

// A filtered-out tail read while a matching message is in flight moves
// the committed offset once that message is acknowledged (RocketMQ
// correctTagsOffset on NO_NEW_MSG / NO_MATCHED_MSG): offset 0 matches and is
// held, 1..5 do not match, the pull reads past them and parks; after the
// ack the committed offset is 6, not 1 (lag 5 forever, issue 23 item 3).
func TestFilteredTailAdvancesAfterAck(t *testing.T) {
	for _, mode := range []core.ConsumeMode{core.Concurrently, core.Orderly} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			e.topic("t", 1)
			cfg := e.group(core.GroupConfig{Name: "g", ConsumeMode: mode, Subscriptions: []core.Subscription{{Topic: "t", Filter: "red"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
			h := &heldAcks{}
			c := e.consumer(cfg, "c", h, func(o *Options) {
				o.PersistInterval = 10 * time.Millisecond
				o.LongPollingHold = 20 * time.Millisecond
			})
			defer shutdown(t, c)
			mq := core.MessageQueue{Topic: "t"}
			msgs := []core.PutMessage{{Body: []byte("r0"), Tags: "red"}}
			for i := 1; i <= 5; i++ {
				msgs = append(msgs, core.PutMessage{Body: fmt.Appendf(nil, "b%d", i), Tags: "blue"})
			}
			if _, err := e.eng.Put(t.Context(), "t", msgs); err != nil {
				t.Fatal(err)
			}
			// The pull read past the blue tail and parked with r0 out.
			checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
				if n := h.count(); n != 1 {
					return fmt.Errorf("%d delivered", n)
				}
				for _, s := range c.Status() {
					if s.Queue == mq && s.Parked {
						return nil
					}
				}
				return fmt.Errorf("not parked: %+v", c.Status())
			})
			h.ackAll()
			checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
				if off := committed(t, e, "g", mq); off != 6 {
					return fmt.Errorf("committed offset %d, want 6", off)
				}
				return nil
			})
		})
	}
}

// A stored offset above the queue's max offset is corrected to the max and
// persisted before anything is consumed past it (RocketMQ OFFSET_ILLEGAL:
// updateAndFreezeOffset(nextOffset), persist): a restart, even after a
// crash, starts from the corrected offset and delivers what was published
// since, instead of correcting again past it (issue 23 item 4).
func TestIllegalOffsetCorrectedAndPersisted(t *testing.T) {
	for _, mode := range []core.ConsumeMode{core.Concurrently, core.Orderly} {
		t.Run(string(mode), func(t *testing.T) { testIllegalOffsetCorrected(t, mode) })
	}
}

func testIllegalOffsetCorrected(t *testing.T, mode core.ConsumeMode) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", ConsumeMode: mode, Subscriptions: []core.Subscription{{Topic: "t"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	mq := core.MessageQueue{Topic: "t"}
	e.publish("t", "a", 5, 5, nil)
	if err := e.reg.CommitOffsets("g", "", map[core.MessageQueue]int64{mq: 100}); err != nil {
		t.Fatal(err)
	}
	col := newCollector()
	c := e.consumer(cfg, "c", col, func(o *Options) { o.PersistInterval = time.Hour })
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if off := committed(t, e, "g", mq); off != 5 {
			return fmt.Errorf("committed offset %d, want 5", off)
		}
		return nil
	})
	// A crash: nothing but the correction itself is persisted.
	crash(t, c)
	e.restart()
	e.publish("t", "b", 3, 3, nil)
	c = e.consumer(cfg, "c", col, func(o *Options) { o.PersistInterval = 10 * time.Millisecond })
	defer shutdown(t, c)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		for i := range 3 {
			if col.snapshot()[fmt.Sprintf("b%d", i)] != 1 {
				return fmt.Errorf("b%d not delivered: %v", i, col.snapshot())
			}
		}
		if off := committed(t, e, "g", mq); off != 8 {
			return fmt.Errorf("committed offset %d, want 8", off)
		}
		return nil
	})
	if n := col.distinct(); n != 3 {
		t.Fatalf("delivered %v, want only b0..b2", col.snapshot())
	}
}

func (h *heldAcks) bodies() map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]bool{}
	for _, d := range h.held {
		for _, m := range d.Msgs {
			out[string(m.Body)] = true
		}
	}
	return out
}

// What a filter read past is not committed past once the filter changed:
// an ack that empties the cache after UpdateConfig (before rebalance
// replaces the queue) leaves the old filter's tail to the new filter.
func TestFilterChangeKeepsTheTailForTheNewFilter(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t", Filter: "red"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	h := &heldAcks{}
	c := e.consumer(cfg, "c", h, func(o *Options) { o.LongPollingHold = 20 * time.Millisecond })
	defer shutdown(t, c)
	mq := core.MessageQueue{Topic: "t"}
	msgs := []core.PutMessage{{Body: []byte("r0"), Tags: "red"}}
	for i := 1; i <= 5; i++ {
		msgs = append(msgs, core.PutMessage{Body: fmt.Appendf(nil, "b%d", i), Tags: "blue"})
	}
	if _, err := e.eng.Put(t.Context(), "t", msgs); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		for _, s := range c.Status() {
			if s.Queue == mq && s.Parked && h.count() == 1 {
				return nil
			}
		}
		return fmt.Errorf("not parked with r0 out")
	})
	cfg.Subscriptions = []core.Subscription{{Topic: "t", Filter: "red || blue"}}
	c.UpdateConfig(cfg)
	h.ackAll()
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		got := h.bodies()
		for i := 1; i <= 5; i++ {
			if !got[fmt.Sprint("b", i)] {
				return fmt.Errorf("b%d not delivered after the filter change: %v", i, got)
			}
		}
		return nil
	})
}
