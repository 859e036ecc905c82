package consumer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// holdingSendBack is the engine's send-back held until release is closed:
// entered is closed when the first batch arrives.
type holdingSendBack struct {
	inner   SendBacker
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *holdingSendBack) SendMessagesBack(ctx context.Context, group string, backs []SendBack) error {
	h.once.Do(func() { close(h.entered) })
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.inner.SendMessagesBack(ctx, group, backs)
}

// nackFirstDropListener nacks the first delivery of a message, acks every
// other one, and records them all (body/reconsumeTimes → count).
type nackFirstDropListener struct {
	mu   sync.Mutex
	seen map[string]int
}

func (l *nackFirstDropListener) Consume(d *Delivery) {
	for i, m := range d.Msgs {
		key := fmt.Sprintf("%s/%d", m.Body, m.ReconsumeTimes)
		l.mu.Lock()
		l.seen[key]++
		first := m.ReconsumeTimes == 0 && l.seen[key] == 1
		l.mu.Unlock()
		if first {
			d.Nack(i, 0)
		} else {
			d.Ack(i)
		}
	}
}

func (l *nackFirstDropListener) QueueDropped(core.MessageQueue) {}

func (l *nackFirstDropListener) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[key]
}

// A message nacked just before a filter change drops its queue: the queue
// is not taken on again until the send-back has landed (its settlement in
// the stored position), so the original is not delivered again besides
// its retry copy — the e2e chaos rule "an acknowledged message is not
// redelivered while the server is live".
func TestSendBackPendingAtDropNotRedelivered(t *testing.T) {
	e := &env{t: t, dir: t.TempDir(), back: &recordingSendBack{}}
	for range 18 {
		e.delays = append(e.delays, 10*time.Millisecond)
	}
	e.open()
	t.Cleanup(e.close)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeFrom: core.ConsumeFromFirstOffset, MaxReconsumeTimes: 16})
	sb := &holdingSendBack{inner: engineSendBack{e.eng, e.reg}, entered: make(chan struct{}), release: make(chan struct{})}
	l := &nackFirstDropListener{seen: map[string]int{}}
	o := Options{Group: cfg, ClientID: "c", Listener: l, RebalanceInterval: time.Hour}
	c, err := New(o, Deps{Reader: e.eng, SendBack: sb, Coordinator: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, c)
	released := false
	defer func() {
		if !released {
			close(sb.release)
		}
	}()

	if _, err := e.eng.Put(t.Context(), "t", []core.PutMessage{{Body: []byte("x"), Tags: "a"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sb.entered: // x nacked, its send-back held
	case <-time.After(5 * time.Second):
		t.Fatal("no send-back")
	}
	cfg.Subscriptions = []core.Subscription{{Topic: "t", Filter: "a"}} // a new slice: the consumer holds the old one
	c.UpdateConfig(cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	// The drop, then the pass that would take the queue on again.
	for range 3 {
		if err := c.RebalanceWait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if owned := ownedOf(c, "t"); len(owned) != 0 {
		t.Errorf("queue taken on again with a send-back of its dropped request still out: %v", owned)
	}
	close(sb.release)
	released = true
	// The retry copy comes; the queue is taken on again (the send-back's
	// end kicks a rebalance) and delivers what comes after x, not x.
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := l.count("x/1"); n != 1 {
			return fmt.Errorf("retry copy delivered %d times", n)
		}
		return nil
	})
	if _, err := e.eng.Put(t.Context(), "t", []core.PutMessage{{Body: []byte("y"), Tags: "a"}}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if n := l.count("y/0"); n != 1 {
			return fmt.Errorf("y delivered %d times", n)
		}
		return nil
	})
	if n := l.count("x/0"); n != 1 {
		t.Fatalf("original x delivered %d times (nacked once, then again besides its retry copy)", n)
	}
}
