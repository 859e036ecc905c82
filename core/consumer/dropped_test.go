package consumer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// holdingDropListener holds every delivery unanswered and records the
// QueueDropped calls.
type holdingDropListener struct {
	mu      sync.Mutex
	held    []*Delivery
	dropped []core.MessageQueue
}

func (l *holdingDropListener) Consume(d *Delivery) {
	l.mu.Lock()
	l.held = append(l.held, d)
	l.mu.Unlock()
}

func (l *holdingDropListener) QueueDropped(mq core.MessageQueue) {
	l.mu.Lock()
	l.dropped = append(l.dropped, mq)
	l.mu.Unlock()
}

func (l *holdingDropListener) snapshot() ([]*Delivery, []core.MessageQueue) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.held), slices.Clone(l.dropped)
}

// An offset reset drops an orderly queue with a batch out: RebalanceWait
// returns after the drop, the DropListener was told, the held delivery
// reports Dropped, and — the batch released rather than awaited — the queue
// is owned again at once and delivers from the reset position.
func TestDropListenerOrderlyResetReleasesBatch(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	cfg := e.group(core.GroupConfig{Name: "o", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset})
	e.publish("t", "m", 5, 5, nil)
	l := &holdingDropListener{}
	c := e.consumer(cfg, "o1", l, nil)
	defer shutdown(t, c)
	mq := core.MessageQueue{Topic: "t", QueueID: 0}
	checkFor(t, 5*time.Second, time.Millisecond, func() error {
		if held, _ := l.snapshot(); len(held) != 1 {
			return fmt.Errorf("%d deliveries", len(held))
		}
		return nil
	})
	if _, err := e.reg.ResetOffsets(e.eng, "o", "", "t", core.ConsumeFromLastOffset, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.RebalanceWait(ctx); err != nil {
		t.Fatal(err)
	}
	held, dropped := l.snapshot()
	if !slices.Contains(dropped, mq) || !held[0].Dropped() {
		t.Fatalf("after RebalanceWait: dropped %v, held delivery dropped %v", dropped, held[0].Dropped())
	}
	held[0].AckAll() // too late: changes nothing
	e.publish("t", "n", 1, 1, nil)
	checkFor(t, 5*time.Second, time.Millisecond, func() error {
		held, _ := l.snapshot()
		last := held[len(held)-1]
		if len(held) < 2 || last.Msgs[0].QueueOffset != 5 || last.Dropped() {
			return fmt.Errorf("%d deliveries, last at offset %d", len(held), last.Msgs[0].QueueOffset)
		}
		return nil
	})
	shutdown(t, c)
	if err := c.RebalanceWait(ctx); err != ErrClosed {
		t.Fatalf("RebalanceWait after shutdown: %v", err)
	}
}
