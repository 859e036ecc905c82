package consumer

import (
	"context"
	"time"
)

// correctOffset stores offset, the queue's max, as pr's position after a
// pull found the position beyond it (RocketMQ OFFSET_ILLEGAL:
// updateAndFreezeOffset, then persist before pulling on). It runs on the
// pull goroutine with nothing cached and returns once the correction is
// durable, or the registry declined it because the stored position moved
// on (an offset reset, a deleted group: those reach the client anyway);
// false means it could not be stored, so the caller must not pull past it.
func (c *PushConsumer) correctOffset(pr *pullRequest, offset int64) bool {
	c.mu.Lock()
	cid, inc := c.consumerID, c.cfg.Incarnation
	c.mu.Unlock()
	epoch, uid := c.offsets.position(pr.mq)
	if u := pr.uid.Load(); u != 0 {
		uid = u
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newEpoch, ok, err := c.deps.Coordinator.CorrectOffset(ctx, c.group, inc, cid, pr.mq, epoch, uid, offset)
	if err != nil {
		c.log.Warn().Err(err).Str("topic", pr.mq.Topic).Int("queue", pr.mq.QueueID).Msg("store corrected offset")
		return false
	}
	if ok {
		c.offsets.corrected(pr.mq, offset, newEpoch)
		pr.epoch.Store(newEpoch)
	}
	return true
}
