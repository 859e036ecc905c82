package consumer

import (
	"github.com/mqgate/mqgate/core"
)

// KeyLags aggregates the ProcessQueues of the client's ORDERLY queues per
// (queue, shardingKey). It sees what was pulled (up to the pull
// thresholds), not what is still only in the store. Cost: one pass over
// the cached messages, each queue under its own lock.
func (c *PushConsumer) KeyLags() []core.KeyLag {
	c.mu.Lock()
	prs := make([]*pullRequest, 0, len(c.table))
	for _, pr := range c.table {
		if pr.orderly && !pr.pq.Dropped() {
			prs = append(prs, pr)
		}
	}
	c.mu.Unlock()
	var out []core.KeyLag
	for _, pr := range prs {
		byKey := map[string]int{}
		add := func(m *core.Message) {
			i, ok := byKey[m.ShardingKey]
			if !ok {
				i = len(out)
				byKey[m.ShardingKey] = i
				out = append(out, core.KeyLag{Queue: pr.mq, ShardingKey: m.ShardingKey, Oldest: m.BornAt, OldestID: m.UserID()})
			}
			k := &out[i]
			k.Depth++
			if m.BornAt.Before(k.Oldest) {
				k.Oldest, k.OldestID = m.BornAt, m.UserID()
			}
		}
		pr.pq.mu.Lock()
		for _, m := range pr.pq.consuming {
			add(m)
		}
		for _, m := range pr.pq.msgs {
			add(m)
		}
		pr.pq.mu.Unlock()
	}
	return out
}
