package consumer

import (
	"context"
	"fmt"
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
	gb := e.group(core.GroupConfig{Name: "gb", Subscriptions: []core.Subscription{{Topic: "tb"}}, ConsumeFrom: core.ConsumeFromFirstOffset})
	cb := e.consumer(gb, "c", hb, mod)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if hb.count() == 0 {
			return fmt.Errorf("group b got nothing")
		}
		return nil
	})
	slack := int64(10 * DefaultPullBatchSize * body) // one pull per queue (4+4, plus retry queues)
	if u := budget.Used(); u > limit+slack {
		t.Fatalf("budget used %d > %d", u, limit+slack)
	}
	t.Logf("budget %d: used %d; group a cached %d msgs, group b %d", limit, budget.Used(), ha.count(), hb.count())
	shutdown(t, cb)
	if u := budget.Used(); u > limit+slack || u == 0 {
		t.Fatalf("after b left: used %d", u)
	}
}
