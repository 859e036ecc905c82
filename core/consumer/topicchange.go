package consumer

import "github.com/mqgate/mqgate/core"

// subscribesTo reports whether a change of topic (the engine's topic
// watch: created, grown, deleted) concerns this client: one of its
// subscriptions or its group's retry topic.
func (c *PushConsumer) subscribesTo(topic string) bool {
	c.mu.Lock()
	cfg := c.cfg
	c.mu.Unlock()
	if cfg.MessageModel != core.Broadcasting && topic == core.RetryTopic(cfg.Name) {
		return true
	}
	for _, s := range cfg.Subscriptions {
		if s.Topic == topic {
			return true
		}
	}
	return false
}

// otherIncarnation reports whether rebalance read pr's topic (topics) as
// another incarnation than the one pr was created for: the topic was
// deleted (UID 0) or deleted and created again (a new UID). pr's offsets
// then describe messages that no longer exist. A pr created before its
// %RETRY% topic existed has UID 0 and adopts the first one it reads.
func otherIncarnation(pr *pullRequest, topics map[string]core.Topic) bool {
	t, ok := topics[pr.mq.Topic]
	if !ok {
		return false // not read (unsubscribed, or unreadable and kept)
	}
	have := pr.uid.Load()
	return have != 0 && have != t.UID
}

// sameIncarnation is the pull's check that a read came from pr's topic
// incarnation (uid is GetResult.TopicUID). On false the pull must not use
// the read: the queue waits for rebalance to drop it.
func sameIncarnation(pr *pullRequest, uid uint64) bool {
	have := pr.uid.Load()
	if have == uid {
		return true
	}
	// A %RETRY% topic created by its first send-back: adopt it.
	return have == 0 && pr.uid.CompareAndSwap(0, uid)
}
