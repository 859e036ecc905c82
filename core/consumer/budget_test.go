package consumer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// A shared CacheBudget bounds what all groups cache together, and each
// group gets a share even when another group's backlog came first.
func TestCacheBudgetSharedAcrossGroups(t *testing.T) {
	e := newEnv(t)
	const limit = 256 << 10
	const body = 1 << 10
	budget := NewCacheBudget(limit)
	for _, name := range []string{"ta", "tb"} {
		e.topic(name, 4)
		var msgs []core.PutMessage
		for i := 0; i < 2000; i++ {
			msgs = append(msgs, core.PutMessage{Body: make([]byte, body)})
			if len(msgs) == 500 {
				if _, err := e.eng.Put(context.Background(), name, msgs); err != nil {
					t.Fatal(err)
				}
				msgs = nil
			}
		}
	}
	mod := func(o *Options) { o.CacheBudget = budget; o.ConsumeMessageBatchMaxSize = 32 }
	ha, hb := &holder{}, &holder{}
	ga := e.group(core.GroupConfig{Name: "ga", Subscriptions: []core.Subscription{{Topic: "ta"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	ca := e.consumer(ga, "c", ha, mod)
	defer shutdown(t, ca)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if u := budget.Used(); u < limit/2 {
			return fmt.Errorf("used %d", u)
		}
		return nil
	})
	// A queue whose pulls start after its siblings borrowed the room
	// still gets its fair share (entitled): at most twice the limit.
	if p := budget.Peak(); p > 2*limit {
		t.Fatalf("group a alone took the budget to %d > 2 × limit %d", p, limit)
	}
	t.Logf("group a alone: peak %d of limit %d", budget.Peak(), limit)
	gb := e.group(core.GroupConfig{Name: "gb", Subscriptions: []core.Subscription{{Topic: "tb"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	cb := e.consumer(gb, "c", hb, mod)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if hb.count() == 0 {
			return fmt.Errorf("group b got nothing")
		}
		return nil
	})
	// Group b claims its fair shares while a (which never answers) holds
	// what it borrowed: the documented bound is limit + borrowed, at most
	// twice the limit, and a borrows nothing more meanwhile.
	if p := budget.Peak(); p > 2*limit {
		t.Fatalf("budget peak %d > 2 × limit %d", p, limit)
	}
	t.Logf("budget %d: used %d, peak %d; group a cached %d msgs, group b %d", limit, budget.Used(), budget.Peak(), ha.count(), hb.count())
	shutdown(t, cb)
	if u := budget.Used(); u > 2*limit || u == 0 {
		t.Fatalf("after b left: used %d", u)
	}
}

// The budget is a FIFO semaphore: a borrowing request is not overtaken by
// a smaller one behind it, and a release grants (and wakes) only the
// waiters at the head that now fit.
func TestCacheBudgetFIFO(t *testing.T) {
	b := NewCacheBudget(100)
	b.register(1) // fair share 100: held >= 100 borrows
	if n, ok := b.reserve(100, 100, nil, nil); !ok || n != 100 {
		t.Fatalf("first reserve %d %v", n, ok)
	}
	type grant struct {
		name string
		n    int64
	}
	got := make(chan grant, 3)
	ask := func(name string, want int64) {
		go func() {
			n, ok := b.reserve(100, want, nil, nil)
			if ok {
				got <- grant{name, n}
			}
		}()
		waitWaiting(t, b, len(name)) // parked in FIFO order: B, then C
	}
	ask("B", 60)
	ask("CC", 30)
	waiters := slices.Clone(b.waiters)
	b.release(40) // 60 used: C would fit, B (head) does not
	if b.waiting() != 2 || waiters[0].granted || waiters[1].granted {
		t.Fatal("a release granted past the FIFO head")
	}
	b.release(60) // 0 used: B then C, both fit now
	if !waiters[0].granted || !waiters[1].granted || b.waiting() != 0 {
		t.Fatal("the release did not grant both waiters that fit")
	}
	<-got
	<-got
	if u := b.Used(); u != 90 {
		t.Fatalf("used %d, want 90", u)
	}
	// A waiter that does not fit is not woken by a release.
	ask("D", 50)
	w := b.waiters[0]
	b.release(10)
	select {
	case <-w.ready:
		t.Fatal("a waiter that does not fit was woken")
	default:
	}
	b.release(80)
	if g := <-got; g.name != "D" || b.Used() != 50 {
		t.Fatalf("got %v, used %d", g, b.Used())
	}
	// A cancelled waiter leaves the queue; the one behind it moves up.
	stop := make(chan struct{})
	go func() { b.reserve(100, 80, stop, nil) }()
	waitWaiting(t, b, 1)
	ask("EE", 40)
	close(stop)
	if g := <-got; g.name != "EE" || b.Used() != 90 {
		t.Fatalf("got %v, used %d; want EE granted after the head left", g, b.Used())
	}
}

// Borrowing never takes the total over the limit, however many pulls
// reserve and release concurrently.
func TestCacheBudgetBorrowBound(t *testing.T) {
	const limit = 1 << 20
	b := NewCacheBudget(limit)
	b.register(64)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 200 {
				want := int64(1 + r.IntN(limit/8))
				n, ok := b.reserve(limit, want, nil, nil) // held above the share: borrowing
				if !ok || n != want {
					t.Errorf("reserve %d: %d %v", want, n, ok)
					return
				}
				runtime.Gosched()
				b.release(n)
			}
		})
	}
	wg.Wait()
	if p, u := b.Peak(), b.Used(); p > limit || u != 0 {
		t.Fatalf("peak %d (limit %d), used %d after all released", p, limit, u)
	}
	t.Logf("64 goroutines × 200 reservations of up to limit/8: peak %d of %d", b.Peak(), int64(limit))
}

// A queue under its fair share is served at once, past waiting borrowers
// and above the limit, but never beyond twice the limit.
func TestCacheBudgetEntitled(t *testing.T) {
	b := NewCacheBudget(100)
	b.register(4) // fair share 25
	if n, ok := b.reserve(25, 100, nil, nil); !ok || n != 100 {
		t.Fatalf("borrow %d %v", n, ok) // one queue borrowed everything
	}
	stop := make(chan struct{})
	defer close(stop)
	go b.reserve(25, 10, stop, nil) // a borrower waits
	waitWaiting(t, b, 1)
	for i := range 4 {
		if n, ok := b.reserve(0, 40, nil, nil); !ok || n != 25 {
			t.Fatalf("entitled queue %d: granted %d %v, want its share 25 at once", i, n, ok)
		}
	}
	if u := b.Used(); u != 200 {
		t.Fatalf("used %d, want 200", u)
	}
	// Twice the limit is the hard bound: this one waits.
	got := make(chan int64, 1)
	go func() {
		n, _ := b.reserve(0, 40, nil, nil)
		got <- n
	}()
	waitWaiting(t, b, 2)
	b.release(30) // 170 + 25 <= 200: the entitled waiter goes first
	if n := <-got; n != 25 || b.Used() != 195 {
		t.Fatalf("entitled waiter got %d, used %d", n, b.Used())
	}
	if p := b.Peak(); p > 200 {
		t.Fatalf("peak %d above twice the limit", p)
	}
}

// waitWaiting polls until n requests wait on b (5 s deadline).
func waitWaiting(t *testing.T, b *CacheBudget, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for b.waiting() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests waiting, want %d", b.waiting(), n)
		}
		runtime.Gosched()
	}
}
