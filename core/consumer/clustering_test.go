package consumer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// (1) Three CLUSTERING clients over an 8-queue topic share the queues
// evenly; stopping one moves its queues to the others at once (the
// periodic rebalance is set to an hour, so only the registry's
// notification can do it); every message is consumed, none lost.
func TestClusteringShareAndMove(t *testing.T) {
	e := newEnv(t)
	e.topic("orders", 8)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "orders"}},
		ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 16})
	col := newCollector()
	mod := func(o *Options) { o.RebalanceInterval = time.Hour; o.ConsumeMessageBatchMaxSize = 4 }
	cs := []*PushConsumer{e.consumer(cfg, "c1", col, mod), e.consumer(cfg, "c2", col, mod), e.consumer(cfg, "c3", col, mod)}
	defer func() {
		for _, c := range cs {
			shutdown(t, c)
		}
	}()

	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		var all []int
		for _, c := range cs {
			all = append(all, ownedOf(c, "orders")...)
		}
		slices.Sort(all)
		if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
			return fmt.Errorf("queues owned: %v", all)
		}
		for _, c := range cs {
			if n := len(ownedOf(c, "orders")); n < 2 || n > 3 {
				return fmt.Errorf("uneven: %d", n)
			}
		}
		return nil
	})
	// The retry queue is owned by exactly one client.
	retry := 0
	for _, c := range cs {
		retry += len(ownedOf(c, core.RetryTopic("g")))
	}
	if retry != 1 {
		t.Fatalf("retry queue owned %d times", retry)
	}

	e.publish("orders", "a", 4000, 50, nil)
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := col.distinct(); n != 4000 {
			return fmt.Errorf("consumed %d of 4000", n)
		}
		return nil
	})

	// Stop c3 while publishing continues.
	var wg sync.WaitGroup
	wg.Go(func() { e.publish("orders", "b", 4000, 50, nil) })
	shutdown(t, cs[2])
	cs = cs[:2]
	checkFor(t, 2*time.Second, 5*time.Millisecond, func() error {
		a, b := ownedOf(cs[0], "orders"), ownedOf(cs[1], "orders")
		if len(a) != 4 || len(b) != 4 {
			return fmt.Errorf("after stop: %v %v", a, b)
		}
		return nil
	})
	wg.Wait()
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := col.distinct(); n != 8000 {
			return fmt.Errorf("consumed %d of 8000", n)
		}
		return nil
	})
	dups := 0
	for _, n := range col.snapshot() {
		dups += n - 1
	}
	t.Logf("8000 messages, %d duplicates (queues moved mid-stream)", dups)
}

// (3) BROADCASTING: two consumers each get every message, with their own
// offsets.
func TestBroadcastingEachGetsAll(t *testing.T) {
	e := newEnv(t)
	e.topic("news", 4)
	cfg := e.group(core.GroupConfig{Name: "b", Subscriptions: []core.Subscription{{Topic: "news"}},
		MessageModel: core.Broadcasting, ConsumeFrom: core.ConsumeFromFirstOffset})
	c1, c2 := newCollector(), newCollector()
	p1 := e.consumer(cfg, "x1", c1, nil)
	p2 := e.consumer(cfg, "x2", c2, nil)
	e.publish("news", "n", 1000, 25, nil)
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if c1.distinct() != 1000 || c2.distinct() != 1000 {
			return fmt.Errorf("x1 %d x2 %d", c1.distinct(), c2.distinct())
		}
		return nil
	})
	if len(ownedOf(p1, "news")) != 4 || len(ownedOf(p2, "news")) != 4 {
		t.Fatal("broadcasting consumers must own every queue")
	}
	if len(ownedOf(p1, core.RetryTopic("b"))) != 0 {
		t.Fatal("broadcasting must not consume the retry topic")
	}
	shutdown(t, p1)
	shutdown(t, p2)
	for _, id := range []string{"x1", "x2"} {
		offs, err := e.reg.Offsets("b", id)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, o := range offs {
			sum += o
		}
		if sum != 1000 {
			t.Fatalf("%s committed %d of 1000: %v", id, sum, offs)
		}
	}
	if offs, _ := e.reg.Offsets("b", ""); len(offs) != 0 {
		t.Fatalf("group-level offsets written for BROADCASTING: %v", offs)
	}
}

// A client that falls silent (crash: no unregister, no unlock) expires in
// the registry and its queues move to the others without waiting for the
// periodic rebalance; orderly locks of the dead client are free at once.
func TestSilentClientExpires(t *testing.T) {
	for _, mode := range []core.ConsumeMode{core.Concurrently, core.Orderly} {
		t.Run(string(mode), func(t *testing.T) {
			e := &env{t: t, dir: t.TempDir(), back: &recordingSendBack{}}
			e.regOpts.ClientTimeout = 300 * time.Millisecond
			e.open()
			t.Cleanup(e.close)
			e.topic("t", 4)
			cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
				ConsumeMode: mode, ConsumeFrom: core.ConsumeFromFirstOffset})
			col := newCollector()
			mod := func(o *Options) { o.RebalanceInterval = time.Hour; o.HeartbeatInterval = 50 * time.Millisecond }
			c1 := e.consumer(cfg, "c1", col, mod)
			defer shutdown(t, c1)
			c2 := e.consumer(cfg, "c2", col, mod)
			checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
				if a, b := ownedOf(c1, "t"), ownedOf(c2, "t"); len(a) != 2 || len(b) != 2 {
					return fmt.Errorf("c1 %v c2 %v", a, b)
				}
				return nil
			})
			crash(t, c2)
			start := time.Now()
			checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
				if a := ownedOf(c1, "t"); len(a) != 4 {
					return fmt.Errorf("c1 %v", a)
				}
				return nil
			})
			t.Logf("queues moved %v after the crash (client timeout 300ms)", time.Since(start).Round(time.Millisecond))
			e.publish("t", "s", 200, 10, nil)
			checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
				if n := col.distinct(); n != 200 {
					return fmt.Errorf("consumed %d", n)
				}
				return nil
			})
		})
	}
}
