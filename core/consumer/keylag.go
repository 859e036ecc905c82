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
	var tally core.KeyLagTally
	for _, pr := range prs {
		pr.pq.mu.Lock()
		for _, m := range pr.pq.consuming {
			tally.Add(pr.mq, m)
		}
		for _, m := range pr.pq.msgs {
			tally.Add(pr.mq, m)
		}
		pr.pq.mu.Unlock()
	}
	return tally.Rows()
}
