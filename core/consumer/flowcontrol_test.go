package consumer

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// holder never answers (or answers only what keep allows).
type holder struct {
	mu        sync.Mutex
	delivered int
	keep      func(m *core.Message) bool // ack unless keep says hold
}

func (h *holder) Consume(d *Delivery) {
	h.mu.Lock()
	h.delivered += len(d.Msgs)
	h.mu.Unlock()
	if h.keep == nil {
		return
	}
	for i, m := range d.Msgs {
		if !h.keep(m) {
			d.Ack(i)
		}
	}
}

func (h *holder) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivered
}

// (5) Flow control: a listener that never answers leaves at most the
// per-queue thresholds cached while a large backlog waits, and the held
// pulls do not wake up. MQGATE_FLOW_MESSAGES=1000000 runs the full-size
// variant (default 100,000 to keep CI fast).
func TestFlowControlBoundsCache(t *testing.T) {
	total := 100_000
	if v := os.Getenv("MQGATE_FLOW_MESSAGES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		total = n
	}
	e := newEnv(t)
	e.topic("bulk", 8)
	cfg := e.group(core.GroupConfig{Name: "f", Subscriptions: []core.Subscription{{Topic: "bulk"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	start := time.Now()
	e.publish("bulk", "x", total, 1000, nil)
	t.Logf("published %d messages in %v", total, time.Since(start))

	h := &holder{}
	c := e.consumer(cfg, "c", h, func(o *Options) { o.ConsumeMessageBatchMaxSize = 32 })
	defer shutdown(t, c)
	limit := DefaultPullThresholdForQueue + DefaultPullBatchSize
	checkFor(t, 20*time.Second, 5*time.Millisecond, func() error {
		for _, s := range c.Status() {
			if s.Queue.Topic == "bulk" && s.Cached <= DefaultPullThresholdForQueue {
				return fmt.Errorf("queue %d cached %d, not yet at the threshold", s.Queue.QueueID, s.Cached)
			}
		}
		return nil
	})
	fc := c.Stats().FlowControlled
	time.Sleep(200 * time.Millisecond) // observe: nothing may move while held
	st := c.Stats()
	if st.FlowControlled != fc {
		t.Fatalf("held pulls woke up: flow-control checks %d → %d", fc, st.FlowControlled)
	}
	var cached int
	var bytes int64
	for _, s := range c.Status() {
		if s.Cached > limit {
			t.Fatalf("queue %v cached %d > %d", s.Queue, s.Cached, limit)
		}
		cached += s.Cached
		bytes += s.CachedBytes
	}
	if h.count() != cached || int(st.Delivered) != cached {
		t.Fatalf("delivered %d (stats %d), cached %d", h.count(), st.Delivered, cached)
	}
	t.Logf("%d messages waiting; cached %d messages (%d bytes) over 8 queues, in flight %d", total, cached, bytes, h.count())
}

// Concurrent span control: with every tenth message unanswered, pulling
// stops once the cached offsets span ConsumeConcurrentlyMaxSpan, long
// before the count threshold.
func TestFlowControlSpan(t *testing.T) {
	e := newEnv(t)
	e.topic("span", 2)
	cfg := e.group(core.GroupConfig{Name: "s", Subscriptions: []core.Subscription{{Topic: "span"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	e.publish("span", "x", 10000, 500, nil)
	h := &holder{keep: func(m *core.Message) bool { return m.QueueOffset%10 == 0 }}
	c := e.consumer(cfg, "c", h, func(o *Options) { o.ConsumeConcurrentlyMaxSpan = 300 })
	defer shutdown(t, c)
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if c.Stats().FlowControlled < 2 {
			return fmt.Errorf("not flow-controlled yet")
		}
		return nil
	})
	for _, s := range c.Status() {
		if s.Queue.Topic != "span" {
			continue
		}
		if s.Cached > (300+DefaultPullBatchSize)/10+2 || s.ConsumedOffset != 0 {
			t.Fatalf("queue %d: cached %d, offset %d", s.Queue.QueueID, s.Cached, s.ConsumedOffset)
		}
	}
}

// SetPrefetch lowers the per-queue window of an idle group and raising it
// wakes the held pulls at once.
func TestSetPrefetch(t *testing.T) {
	e := newEnv(t)
	e.topic("p", 1)
	cfg := e.group(core.GroupConfig{Name: "p", Subscriptions: []core.Subscription{{Topic: "p"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	e.publish("p", "x", 3000, 500, nil)
	h := &holder{}
	c, err := New(Options{Group: cfg, ClientID: "c", Listener: h, PullBatchSize: 8}, Deps{Reader: e.eng, SendBack: e.back, Coordinator: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	c.SetPrefetch(10) // before Start: the first pulls already obey it
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, c)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if c.Stats().FlowControlled == 0 {
			return fmt.Errorf("not held yet")
		}
		return nil
	})
	if n := h.count(); n > 10+8 {
		t.Fatalf("prefetch 10 cached %d", n)
	}
	c.SetPrefetch(0) // back to 1000
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if n := h.count(); n <= DefaultPullThresholdForQueue {
			return fmt.Errorf("cached %d after raising", n)
		}
		return nil
	})
}
