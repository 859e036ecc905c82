package consumer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// scripted answers each message with fn and records deliveries.
type scripted struct {
	mu   sync.Mutex
	seen []*core.Message
	fn   func(d *Delivery, i int)
}

func (s *scripted) Consume(d *Delivery) {
	s.mu.Lock()
	s.seen = append(s.seen, d.Msgs...)
	s.mu.Unlock()
	for i := range d.Msgs {
		s.fn(d, i)
	}
}

func (s *scripted) deliveries() []*core.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*core.Message(nil), s.seen...)
}

func committed(t *testing.T, e *env, group string, mq core.MessageQueue) int64 {
	t.Helper()
	off, _, err := e.reg.CommittedOffset(group, "", mq)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// Concurrently: a nack sends the message back with the nack's delay level
// and the offset moves on; when send-back fails the message is consumed
// again locally after SendBackFailedDelay with reconsumeTimes+1.
func TestConcurrentNackSendBack(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}, MaxReconsumeTimes: 16})
	l := &scripted{fn: func(d *Delivery, i int) {
		if d.Msgs[i].ReconsumeTimes == 0 {
			d.Nack(i, 7)
		} else {
			d.Ack(i)
		}
	}}
	c := e.consumer(cfg, "c", l, func(o *Options) {
		o.PersistInterval = 10 * time.Millisecond
		o.SendBackFailedDelay = 30 * time.Millisecond
	})
	defer shutdown(t, c)
	mq := core.MessageQueue{Topic: "t"}

	e.publish("t", "a", 1, 1, nil)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if committed(t, e, "g", mq) != 1 {
			return fmt.Errorf("offset not moved")
		}
		return nil
	})
	calls := e.back.snapshot()
	if len(calls) != 1 || calls[0].delayLevel != 7 || string(calls[0].msg.Body) != "a0" {
		t.Fatalf("send-backs: %+v", calls)
	}

	e.back.setFail(true)
	start := time.Now()
	e.publish("t", "b", 1, 1, nil)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if committed(t, e, "g", mq) != 2 {
			return fmt.Errorf("offset not moved after local reconsume")
		}
		return nil
	})
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("reconsumed before SendBackFailedDelay")
	}
	seen := l.deliveries()
	last := seen[len(seen)-1]
	if string(last.Body) != "b0" || last.ReconsumeTimes != 1 || len(seen) != 3 {
		t.Fatalf("local reconsume: %d deliveries, last %s rt=%d", len(seen), last.Body, last.ReconsumeTimes)
	}
	if st := c.Stats(); st.SendBackFailed != 1 || st.SentBack != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A delivery unanswered past ConsumeTimeout is sent back with delay level 3
// and removed (cleanExpireMsg); a late answer is ignored.
func TestConcurrentConsumeTimeout(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}, MaxReconsumeTimes: 16})
	var mu sync.Mutex
	var held []*Delivery
	l := ListenerFunc(func(d *Delivery) { mu.Lock(); held = append(held, d); mu.Unlock() })
	c := e.consumer(cfg, "c", l, func(o *Options) { o.ConsumeTimeout = 50 * time.Millisecond; o.PersistInterval = 10 * time.Millisecond })
	defer shutdown(t, c)
	e.publish("t", "x", 3, 3, nil)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := len(e.back.snapshot()); n != 3 {
			return fmt.Errorf("%d sent back", n)
		}
		return nil
	})
	for _, call := range e.back.snapshot() {
		if call.delayLevel != 3 {
			t.Fatalf("expired message sent back with level %d", call.delayLevel)
		}
	}
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if off := committed(t, e, "g", core.MessageQueue{Topic: "t"}); off != 3 {
			return fmt.Errorf("offset %d", off)
		}
		return nil
	})
	mu.Lock()
	for _, d := range held {
		d.AckAll() // too late: ignored
	}
	mu.Unlock()
	if st := c.Stats(); st.Expired != 3 || st.Succeeded != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// BROADCASTING failures are dropped and counted, never sent back.
func TestBroadcastingFailureDropped(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "b", Subscriptions: []core.Subscription{{Topic: "t"}}, MessageModel: core.Broadcasting})
	c := e.consumer(cfg, "x", ListenerFunc(func(d *Delivery) { d.NackAll(0) }), func(o *Options) { o.PersistInterval = 10 * time.Millisecond })
	defer shutdown(t, c)
	e.publish("t", "x", 5, 5, nil)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		off, _, _ := e.reg.CommittedOffset("b", "x", core.MessageQueue{Topic: "t"})
		if off != 5 {
			return fmt.Errorf("offset %d", off)
		}
		return nil
	})
	if st := c.Stats(); st.BroadcastDropped != 5 || len(e.back.snapshot()) != 0 {
		t.Fatalf("stats %+v, send-backs %d", st, len(e.back.snapshot()))
	}
}

// Orderly: a message failing maxReconsumeTimes+1 times goes to the DLQ
// (send-back with delay level -1) and the queue moves on, in order.
func TestOrderlyDeadLetterAfterMax(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "o", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 3})
	var mu sync.Mutex
	var order []string
	l := ListenerFunc(func(d *Delivery) {
		for i, m := range d.Msgs {
			mu.Lock()
			order = append(order, fmt.Sprintf("%s/%d", m.Body, m.ReconsumeTimes))
			mu.Unlock()
			if string(m.Body) == "p1" {
				d.Nack(i, 0) // poison
			} else {
				d.Ack(i)
			}
		}
	})
	e.publish("t", "p", 3, 3, nil)
	c := e.consumer(cfg, "c", l, func(o *Options) { o.SuspendTime = 5 * time.Millisecond; o.PersistInterval = 10 * time.Millisecond })
	defer shutdown(t, c)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if off := committed(t, e, "o", core.MessageQueue{Topic: "t"}); off != 3 {
			return fmt.Errorf("offset %d", off)
		}
		return nil
	})
	mu.Lock()
	got := fmt.Sprint(order)
	mu.Unlock()
	if want := "[p0/0 p1/0 p1/1 p1/2 p1/3 p2/0]"; got != want {
		t.Fatalf("deliveries %s, want %s", got, want)
	}
	calls := e.back.snapshot()
	if len(calls) != 1 || calls[0].delayLevel != -1 || string(calls[0].msg.Body) != "p1" || calls[0].msg.ReconsumeTimes != 3 {
		t.Fatalf("DLQ send-backs: %+v", calls)
	}
	if st := c.Stats(); st.DeadLettered != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Orderly batch: acks commit the prefix; from the first nack the batch
// comes again after the suspend time, in order, the nacked one with
// reconsumeTimes+1 and the later (acked) ones unchanged.
func TestOrderlyPartialBatch(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "o", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 16})
	var mu sync.Mutex
	var batches []string
	first := true
	l := ListenerFunc(func(d *Delivery) {
		mu.Lock()
		s := ""
		for _, m := range d.Msgs {
			s += fmt.Sprintf("%s/%d ", m.Body, m.ReconsumeTimes)
		}
		batches = append(batches, s)
		fail := first
		first = false
		mu.Unlock()
		for i := range d.Msgs {
			if fail && i == 1 {
				d.Nack(i, 0)
			} else {
				d.Ack(i)
			}
		}
	})
	e.publish("t", "m", 4, 4, nil)
	c := e.consumer(cfg, "c", l, func(o *Options) {
		o.SuspendTime = 20 * time.Millisecond
		o.ConsumeMessageBatchMaxSize = 4
		o.PersistInterval = 10 * time.Millisecond
	})
	defer shutdown(t, c)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if off := committed(t, e, "o", core.MessageQueue{Topic: "t"}); off != 4 {
			return fmt.Errorf("offset %d", off)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(batches); got != "[m0/0 m1/0 m2/0 m3/0  m1/1 m2/0 m3/0 ]" {
		t.Fatalf("batches %s", got)
	}
}

// Tag filters apply; a live config change (filter) re-subscribes.
func TestFilterAndUpdateConfig(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 2)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t", Filter: "red"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	col := newCollector()
	c := e.consumer(cfg, "c", col, nil)
	defer shutdown(t, c)
	put := func(tag string, n int) {
		var msgs []core.PutMessage
		for i := 0; i < n; i++ {
			msgs = append(msgs, core.PutMessage{Body: fmt.Appendf(nil, "%s%d", tag, i), Tags: tag})
		}
		if _, err := e.eng.Put(t.Context(), "t", msgs); err != nil {
			t.Fatal(err)
		}
	}
	put("red", 10)
	put("blue", 10)
	put("red", 5)
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if n := col.distinct(); n != 10 {
			return fmt.Errorf("%d red", n)
		}
		return nil
	})
	for body := range col.snapshot() {
		if body[0] != 'r' {
			t.Fatalf("filter let %s through", body)
		}
	}
	cfg.Subscriptions = []core.Subscription{{Topic: "t", Filter: "blue"}}
	c.UpdateConfig(cfg)
	put("blue", 3) // bodies blue0..2 again: count goes to 2 for those
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if n := col.snapshot()["blue2"]; n != 1 {
			return fmt.Errorf("blue2 seen %d", n)
		}
		return nil
	})
}

// An offset reset reaches a running consumer: it restarts the queue from
// the reset offset and its stale in-memory offset does not overwrite it.
func TestResetOffsetsLive(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	col := newCollector()
	c := e.consumer(cfg, "c", col, func(o *Options) { o.PersistInterval = 10 * time.Millisecond })
	defer shutdown(t, c)
	e.publish("t", "r", 20, 20, nil)
	mq := core.MessageQueue{Topic: "t"}
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		if off := committed(t, e, "g", mq); off != 20 {
			return fmt.Errorf("offset %d", off)
		}
		return nil
	})
	if _, err := e.reg.ResetOffsets(e.eng, "g", "", "t", core.ConsumeFromFirstOffset, time.Time{}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		for i := 0; i < 20; i++ {
			if col.snapshot()[fmt.Sprintf("r%d", i)] != 2 {
				return fmt.Errorf("r%d not consumed again", i)
			}
		}
		if off := committed(t, e, "g", mq); off != 20 {
			return fmt.Errorf("offset %d", off)
		}
		return nil
	})
}
