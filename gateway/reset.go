package gateway

import (
	"context"
	"time"
)

// resetWaitTimeout bounds how long an offset reset waits for this
// gateway's clients of the group to rebalance (drop the reset queues'
// ProcessQueues and purge their messages from the inbox) before it
// answers. A rebalance takes milliseconds; the bound only matters for a
// client that is stuck or shutting down, and the reset applies then anyway.
const resetWaitTimeout = 5 * time.Second

// rebalanceWaiter is what a reset needs of a client
// (*consumer.PushConsumer).
type rebalanceWaiter interface {
	RebalanceWait(ctx context.Context) error
}

// awaitRebalance waits until every local client of group (consumerID: ""
// for CLUSTERING) has run a rebalance that started after the call: after an
// offset reset, the reset queues' old ProcessQueues are dropped and their
// buffered messages gone before the reset answers, so a receive right
// after it gets none of them.
func (e *Embedded) awaitRebalance(ctx context.Context, group, consumerID string) {
	var ws []rebalanceWaiter
	e.mu.Lock()
	if rt := e.groups[group]; rt != nil {
		if c := rt.clients[consumerID]; c != nil {
			if w, ok := c.pc.(rebalanceWaiter); ok {
				ws = append(ws, w)
			}
		}
	}
	e.mu.Unlock()
	if len(ws) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, resetWaitTimeout)
	defer cancel()
	for _, w := range ws {
		if err := w.RebalanceWait(ctx); err != nil {
			e.log.Warn().Err(err).Str("group", group).Msg("gateway: offset reset answered before the client rebalanced")
		}
	}
}
