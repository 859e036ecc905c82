package groups

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Start positions are decided once, when a consumer subscribes, and
// persisted at once (SPEC §8.7, issue 9):
//
//   - when a group is created or gains a subscription (Put), for its
//     CLUSTERING consumer and every BROADCASTING consumerId it has;
//   - when a BROADCASTING consumerId first appears (its client starts).
//
// Each queue that exists then gets a stored position by consumeFrom, and
// the topic is listed in the consumer's marker in bucketStarts. From then
// on a queue of a listed topic with no stored position (or one of a
// deleted namesake of the topic) appeared after the subscription — the
// topic was created later or grew — and is consumed from its first
// offset. A restart never applies consumeFrom again, so LAST_OFFSET can
// never skip what was published before a crash.
var bucketStarts = store.Register("core/groups", "groups.starts")

// startMarker is what was decided for one consumer of a group incarnation.
type startMarker struct {
	Incarnation uint64   `json:"incarnation"`
	Topics      []string `json:"topics"`
}

func startKey(group, consumerID string) []byte {
	return append(append([]byte(group), 0), consumerID...)
}

func readMarker(tx store.ReadTx, group, consumerID string, incarnation uint64) startMarker {
	var m startMarker
	v := tx.Bucket(bucketStarts).Get(startKey(group, consumerID))
	if v == nil || json.Unmarshal(v, &m) != nil || m.Incarnation != incarnation {
		return startMarker{Incarnation: incarnation}
	}
	return m
}

// StartsDecided reports whether the start of (group, consumerID) in topic
// was decided: a queue of it without a stored position then starts at its
// first offset; otherwise the consumer applies consumeFrom itself (a group
// written by an older version).
func (r *Registry) StartsDecided(group string, incarnation uint64, consumerID, topic string) (bool, error) {
	var ok bool
	err := r.st.View(func(tx store.ReadTx) error {
		ok = slices.Contains(readMarker(tx, group, consumerID, incarnation).Topics, topic)
		return nil
	})
	return ok, err
}

// DecideStarts decides and persists the start positions of consumerID
// ("" for CLUSTERING) in every subscribed topic of the group not decided
// before. It is idempotent, and a no-op without Options.Offsets.
func (r *Registry) DecideStarts(group, consumerID string) error {
	g, err := r.Get(group)
	if err != nil {
		return err
	}
	return r.decideStarts(g.GroupConfig, consumerID)
}

func (r *Registry) decideStarts(cfg core.GroupConfig, consumerID string) error {
	eng := r.opts.Offsets
	if eng == nil {
		return nil
	}
	var marker startMarker
	if err := r.st.View(func(tx store.ReadTx) error {
		marker = readMarker(tx, cfg.Name, consumerID, cfg.Incarnation)
		return nil
	}); err != nil {
		return err
	}
	type start struct {
		mq core.MessageQueue
		p  core.Progress
	}
	var topics []string
	var starts []start
	for _, s := range cfg.Subscriptions {
		if slices.Contains(marker.Topics, s.Topic) {
			continue
		}
		topics = append(topics, s.Topic)
		t, err := eng.Topic(s.Topic)
		if core.ErrorCode(err) == core.ENotFound {
			continue // created later: every queue from its first offset
		} else if err != nil {
			return fmt.Errorf("groups: decide start in %q: %w", s.Topic, err)
		}
		for q := 0; q < t.Queues; q++ {
			mq := core.MessageQueue{Topic: s.Topic, QueueID: q}
			off, err := positionOf(eng, mq, cfg.ConsumeFrom, cfg.ConsumeTimestamp)
			if err != nil {
				return fmt.Errorf("groups: decide start in %s/%d: %w", s.Topic, q, err)
			}
			starts = append(starts, start{mq, core.Progress{Offset: off, TopicUID: t.UID}})
		}
	}
	if len(topics) == 0 {
		return nil
	}
	return r.st.Update(func(tx store.Tx) error {
		cur := tx.Bucket(bucketConfig).Get([]byte(cfg.Name))
		if cur == nil {
			return nil // deleted meanwhile
		}
		if inc, err := storedIncarnation(cur); err != nil || inc != cfg.Incarnation {
			return err
		}
		b, err := tx.Bucket(bucketOffsets).CreateBucketIfNotExists([]byte(cfg.Name))
		if err != nil {
			return err
		}
		for _, s := range starts {
			k := offsetKey(consumerID, s.mq)
			if v := b.Get(k); v != nil {
				if old, err := decodeProgress(v); err == nil && (old.TopicUID == 0 || old.TopicUID == s.p.TopicUID) {
					continue // already placed (a reset, or the consumer itself)
				}
			}
			if err := b.Put(k, encodeProgress(s.p)); err != nil {
				return err
			}
		}
		m := readMarker(tx.ReadTx, cfg.Name, consumerID, cfg.Incarnation)
		for _, t := range topics {
			if !slices.Contains(m.Topics, t) {
				m.Topics = append(m.Topics, t)
			}
		}
		enc, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketStarts).Put(startKey(cfg.Name, consumerID), enc)
	})
}

// consumersWithStarts lists the consumers of group that have a marker
// (BROADCASTING consumerIds that appeared; "" for CLUSTERING).
func (r *Registry) consumersWithStarts(group string) ([]string, error) {
	var out []string
	prefix := append([]byte(group), 0)
	err := r.st.View(func(tx store.ReadTx) error {
		c := tx.Bucket(bucketStarts).Cursor()
		for k, _ := c.Seek(prefix); k != nil && len(k) >= len(prefix) && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
			out = append(out, string(k[len(prefix):]))
		}
		return nil
	})
	return out, err
}

// deleteStartsTx removes the markers of group.
func deleteStartsTx(tx store.Tx, group string) error {
	prefix := append([]byte(group), 0)
	b := tx.Bucket(bucketStarts)
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && len(k) >= len(prefix) && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
