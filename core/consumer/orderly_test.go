package consumer

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// orderlyListener answers deliveries on its own workers, failing a random
// 20% of batches (ack a prefix, nack the rest), records the order of first
// successful consumptions per sharding key, and can be paused to hold
// deliveries out across a rebalance or a restart.
type orderlyListener struct {
	t    *testing.T
	work chan *Delivery
	wg   sync.WaitGroup

	mu        sync.Mutex
	rng       *rand.Rand
	seen      map[string]bool
	firsts    map[string][]int // key → seqs in order of first success
	successes int
	failures  int
	pauseAt   int
	paused    int // workers blocked on release
	release   chan struct{}
	busy      int
}

func newOrderlyListener(t *testing.T, workers int) *orderlyListener {
	l := &orderlyListener{
		t: t, work: make(chan *Delivery, 1024), rng: rand.New(rand.NewPCG(1, 2)),
		seen: map[string]bool{}, firsts: map[string][]int{}, pauseAt: -1,
	}
	for range workers {
		l.wg.Go(l.worker)
	}
	return l
}

func (l *orderlyListener) Consume(d *Delivery) {
	if !d.Orderly {
		l.t.Errorf("orderly group got a concurrent delivery")
	}
	l.mu.Lock()
	l.busy++
	l.mu.Unlock()
	l.work <- d
}

func (l *orderlyListener) stop() {
	close(l.work)
	l.wg.Wait()
}

func (l *orderlyListener) pause(at int) {
	l.mu.Lock()
	l.pauseAt = at
	l.release = make(chan struct{})
	l.mu.Unlock()
}

func (l *orderlyListener) resume() {
	l.mu.Lock()
	l.pauseAt = -1
	close(l.release)
	l.mu.Unlock()
}

func (l *orderlyListener) state() (successes, paused, busy int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.successes, l.paused, l.busy
}

func (l *orderlyListener) worker() {
	for d := range l.work {
		l.mu.Lock()
		if l.pauseAt >= 0 && l.successes >= l.pauseAt {
			rel := l.release
			l.paused++
			l.mu.Unlock()
			<-rel
			l.mu.Lock()
			l.paused--
		}
		fail := l.rng.IntN(5) == 0
		cut := len(d.Msgs)
		if fail {
			cut = l.rng.IntN(len(d.Msgs))
			l.failures++
		}
		for i, m := range d.Msgs {
			if i >= cut {
				break
			}
			body := string(m.Body)
			if !l.seen[body] {
				l.seen[body] = true
				key, seq := parseOrderly(body)
				l.firsts[key] = append(l.firsts[key], seq)
				l.successes++
			}
		}
		l.busy--
		l.mu.Unlock()
		for i := range d.Msgs {
			if i < cut {
				d.Ack(i)
			} else {
				d.Nack(i, 0)
			}
		}
	}
}

func parseOrderly(body string) (key string, seq int) {
	k, s, _ := strings.Cut(body, ":")
	seq, _ = strconv.Atoi(s)
	return k, seq
}

// (2) ORDERLY: 10,000 messages over 50 sharding keys, 20% of batches fail;
// per key the sequence of first successful consumptions is exactly
// publish order — across a rebalance with batches out and across a
// restart of the engine.
func TestOrderlyAcrossRebalanceAndRestart(t *testing.T) {
	const total, keys = 10000, 50
	e := newEnv(t)
	e.topic("ledger", 8)
	cfg := e.group(core.GroupConfig{Name: "o", Subscriptions: []core.Subscription{{Topic: "ledger"}},
		ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 1000})
	// Bodies "k<key>:<seq>", seq = publish order within the key.
	var msgs []core.PutMessage
	for i := 0; i < total; i++ {
		k := i % keys
		msgs = append(msgs, core.PutMessage{Body: fmt.Appendf(nil, "k%d:%d", k, i/keys), ShardingKey: fmt.Sprintf("k%d", k)})
		if len(msgs) == 100 {
			if _, err := e.eng.Put(t.Context(), "ledger", msgs); err != nil {
				t.Fatal(err)
			}
			msgs = nil
		}
	}
	l := newOrderlyListener(t, 4)
	defer l.stop()
	mod := func(o *Options) {
		o.RebalanceInterval = time.Hour
		o.SuspendTime = 5 * time.Millisecond
		o.ConsumeMessageBatchMaxSize = 8
	}
	waitPaused := func() {
		checkFor(t, 10*time.Second, time.Millisecond, func() error {
			if s, p, _ := l.state(); p == 0 {
				return fmt.Errorf("not paused yet: %d successes", s)
			}
			return nil
		})
	}

	// Phase 1: one client; pause with batches out, then a second client
	// joins: o1's queues move while their batches are still unanswered.
	l.pause(3000)
	o1 := e.consumer(cfg, "o1", l, mod)
	waitPaused()
	o2 := e.consumer(cfg, "o2", l, mod)
	l.resume()
	checkFor(t, 5*time.Second, 2*time.Millisecond, func() error {
		a, b := ownedOf(o1, "ledger"), ownedOf(o2, "ledger")
		if len(a) != 4 || len(b) != 4 {
			return fmt.Errorf("after join: o1 %v o2 %v", a, b)
		}
		return nil
	})

	// Phase 2: pause mid-stream, shut both down with batches out, let the
	// listener answer into the void, restart the engine, continue.
	l.pause(6500)
	waitPaused()
	shutdown(t, o1)
	shutdown(t, o2)
	l.resume()
	checkFor(t, 5*time.Second, time.Millisecond, func() error {
		if _, _, busy := l.state(); busy != 0 {
			return fmt.Errorf("%d deliveries still being answered", busy)
		}
		return nil
	})
	e.restart()
	o1 = e.consumer(cfg, "o1", l, mod)
	o2 = e.consumer(cfg, "o2", l, mod)
	defer shutdown(t, o1)
	defer shutdown(t, o2)
	checkFor(t, 30*time.Second, 5*time.Millisecond, func() error {
		if s, _, _ := l.state(); s != total {
			return fmt.Errorf("%d of %d consumed", s, total)
		}
		return nil
	})

	l.mu.Lock()
	defer l.mu.Unlock()
	for k := 0; k < keys; k++ {
		seqs := l.firsts[fmt.Sprintf("k%d", k)]
		if len(seqs) != total/keys {
			t.Fatalf("key %d: %d messages", k, len(seqs))
		}
		for i, s := range seqs {
			if s != i {
				t.Fatalf("key k%d out of order at %d: %v", k, i, seqs[max(0, i-3):min(len(seqs), i+3)])
			}
		}
	}
	t.Logf("orderly: %d messages, %d failed batches; o1 %+v; o2 %+v", total, l.failures, o1.Stats(), o2.Stats())
}
