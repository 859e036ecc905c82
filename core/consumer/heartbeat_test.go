package consumer

import (
	"fmt"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// TestSharedHeartbeats: clients whose heartbeats go out on one shared
// timer stay live through many client timeouts, a crashed one goes
// silent and is expired (its queues move), and the shared loop stops
// with the last client.
func TestSharedHeartbeats(t *testing.T) {
	e := &env{t: t, dir: t.TempDir(), back: &recordingSendBack{}}
	e.regOpts.ClientTimeout = 300 * time.Millisecond
	e.open()
	t.Cleanup(e.close)
	e.heartbeats = NewHeartbeats(e.reg, 50*time.Millisecond)
	e.topic("t", 4)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}},
		ConsumeFrom: core.ConsumeFromFirstOffset})
	col := newCollector()
	// The clients' own heartbeat timers would be too slow to keep them
	// live: only the shared sender can.
	mod := func(o *Options) { o.RebalanceInterval = time.Hour; o.HeartbeatInterval = time.Hour }
	c1 := e.consumer(cfg, "c1", col, mod)
	c2 := e.consumer(cfg, "c2", col, mod)
	split := func() error {
		if a, b := ownedOf(c1, "t"), ownedOf(c2, "t"); len(a) != 2 || len(b) != 2 {
			return fmt.Errorf("c1 %v c2 %v", a, b)
		}
		return nil
	}
	checkFor(t, 5*time.Second, 5*time.Millisecond, split)
	time.Sleep(1200 * time.Millisecond) // four client timeouts
	if err := split(); err != nil {
		t.Fatalf("after four client timeouts with shared heartbeats: %v", err)
	}
	crash(t, c2)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if a := ownedOf(c1, "t"); len(a) != 4 {
			return fmt.Errorf("c1 %v after c2 crashed", a)
		}
		return nil
	})
	shutdown(t, c1)
	e.heartbeats.mu.Lock()
	defer e.heartbeats.mu.Unlock()
	if e.heartbeats.stop != nil || len(e.heartbeats.clients) != 0 {
		t.Fatalf("shared heartbeat loop still running with %d clients", len(e.heartbeats.clients))
	}
}
