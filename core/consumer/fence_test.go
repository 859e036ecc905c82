package consumer

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// growKey finds a sharding key on queue h%from that moves to a queue
// >= from after growing to to (the engine's SelectMessageQueueByHash).
func growKey(t *testing.T, from, to int) (key string, oldQ, newQ int) {
	t.Helper()
	for i := range 10000 {
		k := fmt.Sprint("K", i)
		h := fnv.New32a()
		h.Write([]byte(k))
		s := h.Sum32()
		if int(s%uint32(to)) >= from {
			return k, int(s % uint32(from)), int(s % uint32(to))
		}
	}
	t.Fatal("no key moves")
	return "", 0, 0
}

// holdingListener keeps every delivery unanswered until the test acks it.
type holdingListener struct {
	mu  sync.Mutex
	got []*Delivery
}

func (h *holdingListener) Consume(d *Delivery) {
	h.mu.Lock()
	h.got = append(h.got, d)
	h.mu.Unlock()
}

// bodies returns every body delivered so far, in delivery order.
func (h *holdingListener) bodies() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, d := range h.got {
		for _, m := range d.Msgs {
			out = append(out, string(m.Body))
		}
	}
	return out
}

// ackNext acks the delivery of body, which must have been delivered.
func (h *holdingListener) ack(t *testing.T, body string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.got {
		for i, m := range d.Msgs {
			if string(m.Body) == body {
				d.Ack(i)
				return
			}
		}
	}
	t.Fatalf("%s was not delivered", body)
}

// heldAtFence reports whether c's pull of mq waits at a growth fence.
func heldAtFence(c *PushConsumer, mq core.MessageQueue) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	pr := c.table[mq]
	return pr != nil && pr.heldAtFence.Load()
}

func publishKey(e *env, topic, key string, from, to int, tag string) {
	e.t.Helper()
	for i := from; i < to; i++ {
		e.publishOne(topic, core.PutMessage{Body: []byte(fmt.Sprintf("%s:%d", key, i)), BodyIsText: true, ShardingKey: key, Tags: tag})
	}
}

func (e *env) publishOne(topic string, m core.PutMessage) {
	e.t.Helper()
	if _, err := e.eng.Put(e.t.Context(), topic, []core.PutMessage{m}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) grow(topic string, queues int) {
	e.t.Helper()
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: topic, Queues: queues}); err != nil {
		e.t.Fatal(err)
	}
}

// SPEC §8 item 8: a sharding key that moves from queue 0 to a new queue
// when the topic grows keeps its order in an ORDERLY group: K:3 (new
// queue) is not handed out while K:0 is in flight and K:1, K:2 (old queue)
// are not delivered; a CONCURRENTLY group is not held back.
func TestOrderlyHoldsNewLayoutUntilOldConsumed(t *testing.T) {
	e := newEnv(t)
	e.topic("grow", 2)
	key, oldQ, newQ := growKey(t, 2, 8)
	orderly := e.group(core.GroupConfig{Name: "ord", ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset,
		Subscriptions: []core.Subscription{{Topic: "grow", Filter: "*"}}})
	concurrent := e.group(core.GroupConfig{Name: "conc", ConsumeFrom: core.ConsumeFromFirstOffset,
		Subscriptions: []core.Subscription{{Topic: "grow", Filter: "*"}}})
	publishKey(e, "grow", key, 0, 3, "")

	hold := &holdingListener{}
	c := e.consumer(orderly, "o1", hold, nil)
	defer shutdown(t, c)
	col := newCollector()
	cc := e.consumer(concurrent, "c1", col, nil)
	defer shutdown(t, cc)

	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := hold.bodies(); !slices.Equal(got, []string{key + ":0"}) {
			return fmt.Errorf("delivered %v", got)
		}
		return nil
	})
	// K:0 is in flight. Grow: K now maps to a new queue.
	e.grow("grow", 8)
	publishKey(e, "grow", key, 3, 6, "")
	newMQ := core.MessageQueue{Topic: "grow", QueueID: newQ}

	// The CONCURRENTLY group gets the new queue's messages at once (the
	// topic watch, not the 20 s rebalance), fence or not.
	checkFor(t, 3*time.Second, 5*time.Millisecond, func() error {
		if n := col.distinct(); n != 6 {
			return fmt.Errorf("concurrent group has %d of 6", n)
		}
		return nil
	})
	// The ORDERLY group owns the new queue and holds it at the fence.
	checkFor(t, 3*time.Second, 5*time.Millisecond, func() error {
		if !heldAtFence(c, newMQ) {
			return fmt.Errorf("queue %d (K moved from %d) not held at the fence; delivered %v", newQ, oldQ, hold.bodies())
		}
		return nil
	})
	if got := hold.bodies(); !slices.Equal(got, []string{key + ":0"}) {
		t.Fatalf("while %s:0 is in flight the orderly group delivered %v", key, got)
	}
	// Consume the old layout one message at a time; the new one follows in
	// order.
	want := []string{key + ":0"}
	for i := 0; i < 6; i++ {
		if i > 0 {
			checkFor(t, 3*time.Second, 5*time.Millisecond, func() error {
				got := hold.bodies()
				if len(got) < len(want) {
					return fmt.Errorf("delivered %v, waiting for %v", got, want)
				}
				return nil
			})
		}
		if got := hold.bodies(); !slices.Equal(got, want) {
			t.Fatalf("delivered %v, want %v", got, want)
		}
		hold.ack(t, fmt.Sprintf("%s:%d", key, i))
		if i+1 < 6 {
			want = append(want, fmt.Sprintf("%s:%d", key, i+1))
		}
	}
}

// A fence is reached also when the old layout ends in messages the group's
// filter skips (nothing consumes them; the pull's own queue records them
// as done), and over two growths.
func TestOrderlyFenceFilteredTailAndTwoGrowths(t *testing.T) {
	e := newEnv(t)
	e.topic("g2", 2)
	key, _, _ := growKey(t, 2, 4)
	g := e.group(core.GroupConfig{Name: "ord", ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset,
		Subscriptions: []core.Subscription{{Topic: "g2", Filter: "A"}}})
	publishKey(e, "g2", key, 0, 2, "A")
	// Both old queues end in messages the group does not want.
	for q := range 2 {
		k := keyOn(t, 2, q)
		for i := range 3 {
			e.publishOne("g2", core.PutMessage{Body: []byte(fmt.Sprint("skip", q, i)), ShardingKey: k, Tags: "B"})
		}
	}
	e.grow("g2", 4)
	publishKey(e, "g2", key, 2, 4, "A")
	e.grow("g2", 16)
	publishKey(e, "g2", key, 4, 6, "A")

	col := &orderCollector{}
	c := e.consumer(g, "o1", col, nil)
	defer shutdown(t, c)
	want := []string{key + ":0", key + ":1", key + ":2", key + ":3", key + ":4", key + ":5"}
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := col.bodies(); !slices.Equal(got, want) {
			return fmt.Errorf("delivered %v, want %v", got, want)
		}
		return nil
	})
}

// keyOn finds a sharding key on queue q of n.
func keyOn(t *testing.T, n, q int) string {
	t.Helper()
	for i := range 10000 {
		k := fmt.Sprint("q", i)
		h := fnv.New32a()
		h.Write([]byte(k))
		if int(h.Sum32()%uint32(n)) == q {
			return k
		}
	}
	t.Fatal("no key")
	return ""
}

// orderCollector acks everything and records bodies in delivery order.
type orderCollector struct {
	mu  sync.Mutex
	got []string
}

func (o *orderCollector) Consume(d *Delivery) {
	o.mu.Lock()
	for _, m := range d.Msgs {
		o.got = append(o.got, string(m.Body))
	}
	o.mu.Unlock()
	d.AckAll()
}

func (o *orderCollector) bodies() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.got)
}

// SPEC §8 item 7: a group subscribed to a topic that does not exist yet
// consumes it as soon as it is created, and a grown topic's new queues at
// once — the engine's topic watch, not the periodic rebalance.
func TestTopicCreatedAndGrownReachConsumerAtOnce(t *testing.T) {
	e := newEnv(t)
	g := e.group(core.GroupConfig{Name: "early", ConsumeFrom: core.ConsumeFromFirstOffset,
		Subscriptions: []core.Subscription{{Topic: "later", Filter: "*"}}})
	col := newCollector()
	c := e.consumer(g, "c1", col, func(o *Options) { o.RebalanceInterval = time.Hour })
	defer shutdown(t, c)

	e.topic("later", 2)
	checkFor(t, 2*time.Second, 5*time.Millisecond, func() error {
		if n := len(ownedOf(c, "later")); n != 2 {
			return fmt.Errorf("owns %d queues of 2", n)
		}
		return nil
	})
	e.publish("later", "m", 4, 1, nil)
	checkFor(t, 2*time.Second, 5*time.Millisecond, func() error {
		if n := col.distinct(); n != 4 {
			return fmt.Errorf("got %d of 4", n)
		}
		return nil
	})
	e.grow("later", 6)
	checkFor(t, 2*time.Second, 5*time.Millisecond, func() error {
		if n := len(ownedOf(c, "later")); n != 6 {
			return fmt.Errorf("owns %d queues of 6", n)
		}
		return nil
	})
	for q := 2; q < 6; q++ {
		e.publishOne("later", core.PutMessage{Body: []byte(fmt.Sprint("n", q)), ShardingKey: keyOn(t, 6, q)})
	}
	checkFor(t, 2*time.Second, 5*time.Millisecond, func() error {
		if n := col.distinct(); n != 8 {
			return fmt.Errorf("got %d of 8", n)
		}
		return nil
	})
}

// A topic deleted and created again under a consumer: the queues of the
// old incarnation are dropped without committing their offsets, and the
// new topic's messages are consumed from its beginning.
func TestTopicRecreatedDropsOldQueues(t *testing.T) {
	for _, recreateFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("beforeRebalance=", recreateFirst), func(t *testing.T) {
			e := newEnv(t)
			e.topic("re", 2)
			g := e.group(core.GroupConfig{Name: "g", ConsumeFrom: core.ConsumeFromFirstOffset,
				Subscriptions: []core.Subscription{{Topic: "re", Filter: "*"}}})
			col := newCollector()
			// Nothing is persisted by the timer: whatever the registry
			// holds afterwards was committed by a drop.
			c := e.consumer(g, "c1", col, func(o *Options) { o.RebalanceInterval, o.PersistInterval = time.Hour, time.Hour })
			defer shutdown(t, c)
			e.publish("re", "old", 6, 3, nil) // 3 on one queue, 3 on the other
			checkFor(t, 3*time.Second, 5*time.Millisecond, func() error {
				if n := col.distinct(); n != 6 {
					return fmt.Errorf("got %d of 6", n)
				}
				return consumedTo(c, "re", 3)
			})
			before := tableOf(c, "re")

			if recreateFirst {
				// Delete and create while the service loop is busy, so the
				// rebalance sees only the new incarnation (otherIncarnation).
				c.mu.Lock()
				err := e.eng.DeleteTopic("re")
				if err == nil {
					_, _, err = e.eng.PutTopic(core.TopicConfig{Name: "re", Queues: 2})
				}
				c.mu.Unlock()
				if err != nil {
					t.Fatal(err)
				}
			} else {
				if err := e.eng.DeleteTopic("re"); err != nil {
					t.Fatal(err)
				}
				checkFor(t, 2*time.Second, 5*time.Millisecond, func() error {
					if n := len(ownedOf(c, "re")); n != 0 {
						return fmt.Errorf("still owns %d queues of the deleted topic", n)
					}
					return nil
				})
				e.topic("re", 2)
			}
			topic, err := e.eng.Topic("re")
			if err != nil {
				t.Fatal(err)
			}
			checkFor(t, 2*time.Second, 5*time.Millisecond, func() error {
				after := tableOf(c, "re")
				if len(after) != 2 {
					return fmt.Errorf("owns %d queues", len(after))
				}
				for mq, pr := range after {
					if pr == before[mq] || pr.uid.Load() != topic.UID {
						return fmt.Errorf("queue %d still the old incarnation's", mq.QueueID)
					}
				}
				return nil
			})
			for q := range 2 {
				mq := core.MessageQueue{Topic: "re", QueueID: q}
				// Positions of the old incarnation may stay behind (void:
				// another topic uid); the old in-memory offset (3) must
				// not have been written.
				if p, ok, _ := e.reg.CommittedProgress("g", "", mq); ok && p.Offset > 0 {
					t.Fatalf("the old incarnation's offset %d of queue %d was committed", p.Offset, q)
				}
			}
			e.publish("re", "new", 2, 1, nil)
			checkFor(t, 3*time.Second, 5*time.Millisecond, func() error {
				got := col.snapshot()
				if got["new0"] != 1 || got["new1"] != 1 {
					return fmt.Errorf("new incarnation: got %v", got)
				}
				return nil
			})
		})
	}
}

func consumedTo(c *PushConsumer, topic string, off int64) error {
	for _, s := range c.Status() {
		if s.Queue.Topic == topic && s.ConsumedOffset != off {
			return fmt.Errorf("queue %d consumed to %d", s.Queue.QueueID, s.ConsumedOffset)
		}
	}
	return nil
}

func tableOf(c *PushConsumer, topic string) map[core.MessageQueue]*pullRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[core.MessageQueue]*pullRequest{}
	for mq, pr := range c.table {
		if mq.Topic == topic {
			out[mq] = pr
		}
	}
	return out
}

func TestFitFence(t *testing.T) {
	msgs := func(offs ...int64) []*core.Message {
		var out []*core.Message
		for _, o := range offs {
			out = append(out, &core.Message{QueueOffset: o})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		in         core.GetResult
		bound      int64
		wantN      int
		wantNext   int64
		wantStatus core.GetStatus
	}{
		{"no fence", core.GetResult{Status: core.Found, Messages: msgs(5, 6), NextOffset: 7}, noFence, 2, 7, core.Found},
		{"below", core.GetResult{Status: core.Found, Messages: msgs(5, 6), NextOffset: 7}, 9, 2, 7, core.Found},
		{"cut", core.GetResult{Status: core.Found, Messages: msgs(5, 6, 9), NextOffset: 10}, 7, 2, 7, core.Found},
		{"all after", core.GetResult{Status: core.Found, Messages: msgs(8, 9), NextOffset: 10}, 7, 0, 7, core.NoMatchedMsg},
		{"skipped past", core.GetResult{Status: core.NoMatchedMsg, NextOffset: 40}, 7, 0, 7, core.NoMatchedMsg},
		{"no new", core.GetResult{Status: core.NoNewMsg, NextOffset: 3}, 7, 0, 3, core.NoNewMsg},
		{"illegal", core.GetResult{Status: core.OffsetIllegal, NextOffset: 20}, 7, 0, 20, core.OffsetIllegal},
	} {
		res := tc.in
		fitFence(&res, tc.bound)
		if len(res.Messages) != tc.wantN || res.NextOffset != tc.wantNext || res.Status != tc.wantStatus {
			t.Errorf("%s: got %d msgs next %d status %v", tc.name, len(res.Messages), res.NextOffset, res.Status)
		}
	}
}

func TestLayoutOf(t *testing.T) {
	ls := []core.TopicLayout{{Queues: 2, Fence: []int64{3, 1}}, {Queues: 4, Fence: []int64{5, 1, 2, 0}}}
	for _, tc := range []struct {
		q    int
		off  int64
		want int
	}{
		{0, 0, 0}, {0, 2, 0}, {0, 3, 1}, {0, 4, 1}, {0, 5, 2},
		{1, 0, 0}, {1, 1, 2},
		{2, 0, 1}, {2, 1, 1}, {2, 2, 2},
		{3, 0, 2}, {7, 0, 2},
	} {
		if got := core.LayoutOf(ls, tc.q, tc.off); got != tc.want {
			t.Errorf("LayoutOf(q%d, %d) = %d, want %d", tc.q, tc.off, got, tc.want)
		}
	}
}

// With two clients the fence spans them: the new queue's owner waits for
// the other client's committed offsets of the old queues (re-checked every
// PersistInterval, since another client's progress wakes nothing here).
func TestOrderlyFenceAcrossClients(t *testing.T) {
	e := newEnv(t)
	e.topic("two", 2)
	key, oldQ, newQ := growKey(t, 2, 4) // old queue 0/1 → client a; new 2/3 → client b
	g := e.group(core.GroupConfig{Name: "ord", ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset,
		Subscriptions: []core.Subscription{{Topic: "two", Filter: "*"}}})
	publishKey(e, "two", key, 0, 3, "")
	fast := func(o *Options) { o.PersistInterval = 20 * time.Millisecond }
	ha, hb := &holdingListener{}, &holdingListener{}
	a := e.consumer(g, "a", ha, fast)
	defer shutdown(t, a)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if got := ha.bodies(); !slices.Equal(got, []string{key + ":0"}) {
			return fmt.Errorf("a got %v", got)
		}
		return nil
	})
	e.grow("two", 4)
	b := e.consumer(g, "b", hb, fast)
	defer shutdown(t, b)
	publishKey(e, "two", key, 3, 5, "")
	newMQ := core.MessageQueue{Topic: "two", QueueID: newQ}
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if !heldAtFence(b, newMQ) {
			return fmt.Errorf("b's queue %d not held (a owns %v, b owns %v, b got %v)", newQ, ownedOf(a, "two"), ownedOf(b, "two"), hb.bodies())
		}
		if q := ownedOf(a, "two"); !slices.Contains(q, oldQ) {
			return fmt.Errorf("a owns %v, not the old queue %d", q, oldQ)
		}
		return nil
	})
	for i := range 3 {
		body := fmt.Sprintf("%s:%d", key, i)
		checkFor(t, 3*time.Second, 5*time.Millisecond, func() error {
			if got := ha.bodies(); len(got) != i+1 || got[i] != body {
				return fmt.Errorf("a got %v, want %s next", got, body)
			}
			return nil
		})
		if got := hb.bodies(); len(got) != 0 {
			t.Fatalf("b handed out %v while %s was unconsumed", got, body)
		}
		ha.ack(t, body)
	}
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		got := hb.bodies()
		if len(got) > 0 && got[len(got)-1] != key+":4" {
			hb.ack(t, got[len(got)-1])
		}
		if !slices.Equal(got, []string{key + ":3", key + ":4"}) {
			return fmt.Errorf("b got %v", got)
		}
		return nil
	})
}
