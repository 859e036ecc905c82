package groups

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// offsetKey is consumerID 0x00 topic 0x00 queueID (4 bytes big-endian)
// inside the group's nested bucket. Names never contain 0x00.
func offsetKey(consumerID string, mq core.MessageQueue) []byte {
	k := make([]byte, 0, len(consumerID)+len(mq.Topic)+6)
	k = append(k, consumerID...)
	k = append(k, 0)
	k = append(k, mq.Topic...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(mq.QueueID))
}

func decodeOffsetKey(k []byte) (consumerID string, mq core.MessageQueue, ok bool) {
	if len(k) < 6 {
		return "", mq, false
	}
	rest, qid := k[:len(k)-4], binary.BigEndian.Uint32(k[len(k)-4:])
	if rest[len(rest)-1] != 0 {
		return "", mq, false
	}
	rest = rest[:len(rest)-1]
	for i, c := range rest {
		if c == 0 {
			return string(rest[:i]), core.MessageQueue{Topic: string(rest[i+1:]), QueueID: int(qid)}, true
		}
	}
	return "", mq, false
}

// CommittedProgress returns the committed position of (group, consumer,
// mq); ok is false when none was committed. consumerID is "" for
// CLUSTERING. The caller compares TopicUID with the topic's current
// incarnation: a position of a deleted namesake counts as absent.
func (r *Registry) CommittedProgress(group, consumerID string, mq core.MessageQueue) (p core.Progress, ok bool, err error) {
	err = r.st.View(func(tx store.ReadTx) error {
		b := tx.Bucket(bucketOffsets).Bucket([]byte(group))
		if b == nil {
			return nil
		}
		v := b.Get(offsetKey(consumerID, mq))
		if v == nil {
			return nil
		}
		var derr error
		if p, derr = decodeProgress(v); derr != nil {
			return fmt.Errorf("groups: offset of %s/%s/%d: %w", group, mq.Topic, mq.QueueID, derr)
		}
		ok = true
		return nil
	})
	return p, ok, err
}

// CommittedOffset returns the committed offset of (group, consumer, mq)
// (every offset below it is finished); ok is false when none was committed.
func (r *Registry) CommittedOffset(group, consumerID string, mq core.MessageQueue) (offset int64, ok bool, err error) {
	p, ok, err := r.CommittedProgress(group, consumerID, mq)
	return p.Offset, ok, err
}

// Progress returns every committed position of a group's consumer
// (consumerID "" for CLUSTERING).
func (r *Registry) Progress(group, consumerID string) (map[core.MessageQueue]core.Progress, error) {
	out := map[core.MessageQueue]core.Progress{}
	err := r.st.View(func(tx store.ReadTx) error {
		b := tx.Bucket(bucketOffsets).Bucket([]byte(group))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			cid, mq, ok := decodeOffsetKey(k)
			if !ok || cid != consumerID {
				return nil
			}
			p, err := decodeProgress(v)
			if err != nil {
				return fmt.Errorf("groups: offset of %s/%s/%d: %w", group, mq.Topic, mq.QueueID, err)
			}
			out[mq] = p
			return nil
		})
	})
	return out, err
}

// Offsets returns every committed offset of a group's consumer.
func (r *Registry) Offsets(group, consumerID string) (map[core.MessageQueue]int64, error) {
	ps, err := r.Progress(group, consumerID)
	if err != nil {
		return nil, err
	}
	out := make(map[core.MessageQueue]int64, len(ps))
	for mq, p := range ps {
		out[mq] = p.Offset
	}
	return out, nil
}

// CommitProgress persists positions of one client of one group
// incarnation (RocketMQ updateConsumerOffset / persistAll, plus the
// finished ranges above each offset). It goes through the store's group
// commit when Options.Commit is set, so it shares a transaction and an
// fsync with publishes, and holds no registry lock meanwhile.
//
// A write never undoes a newer fact: it is dropped when the group is gone
// or is a newer incarnation (ErrGroupGone is not returned: the client is
// being stopped), per queue when its epoch differs from the stored one (an
// offset reset happened since the client read it) or its topic
// incarnation is older; otherwise it is merged with what is stored
// (offsets only move forward, finished ranges accumulate).
func (r *Registry) CommitProgress(ctx context.Context, group string, incarnation uint64, consumerID string, ps map[core.MessageQueue]core.Progress) error {
	if len(ps) == 0 {
		return nil
	}
	return r.commit(ctx, func(tx store.Tx) error {
		b, err := r.groupOffsetsTx(tx, group, incarnation)
		if err != nil || b == nil {
			return err
		}
		for mq, p := range ps {
			if err := putProgressTx(b, consumerID, mq, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// CommitOffsets persists bare offsets (no finished ranges) for the
// group's current incarnation, epoch 0; a convenience for tools and tests.
func (r *Registry) CommitOffsets(group, consumerID string, offsets map[core.MessageQueue]int64) error {
	ps := make(map[core.MessageQueue]core.Progress, len(offsets))
	for mq, off := range offsets {
		ps[mq] = core.Progress{Offset: off}
	}
	return r.CommitProgress(context.Background(), group, 0, consumerID, ps)
}

// groupOffsetsTx returns the group's offsets bucket (created if needed), or
// nil when the group does not exist or is not incarnation (0: any).
func (r *Registry) groupOffsetsTx(tx store.Tx, group string, incarnation uint64) (*store.Bucket, error) {
	v := tx.Bucket(bucketConfig).Get([]byte(group))
	if v == nil {
		return nil, nil
	}
	if incarnation != 0 {
		inc, err := storedIncarnation(v)
		if err != nil {
			return nil, err
		}
		if inc != incarnation {
			return nil, nil
		}
	}
	return tx.Bucket(bucketOffsets).CreateBucketIfNotExists([]byte(group))
}

// putProgressTx merges p into the stored position of (consumerID, mq)
// under the rules of CommitProgress.
func putProgressTx(b *store.Bucket, consumerID string, mq core.MessageQueue, p core.Progress) error {
	k := offsetKey(consumerID, mq)
	p = normalizeProgress(p)
	if v := b.Get(k); v != nil {
		old, err := decodeProgress(v)
		switch {
		case err != nil:
			// Unreadable: the client's view replaces it.
		case p.TopicUID != 0 && old.TopicUID > p.TopicUID:
			return nil // a newer incarnation of the topic is stored
		case p.TopicUID != 0 && old.TopicUID != 0 && old.TopicUID < p.TopicUID:
			// The topic was created again: the old position is void.
		case old.Epoch != p.Epoch:
			return nil // reset since the client read its start
		default:
			p = mergeProgress(old, p)
		}
	}
	return b.Put(k, encodeProgress(p))
}

// CorrectOffset lowers the stored position of (group incarnation,
// consumerID, mq) to offset, the queue's max offset, after a pull found
// the stored one beyond it (RocketMQ OFFSET_ILLEGAL: updateAndFreezeOffset
// and persist). CommitProgress's merge keeps the larger offset, so a
// correction cannot go through it; here it is written over the stored
// position, with no finished ranges (they lay beyond the queue), under a
// fresh epoch: a write still in flight from the client's earlier view is
// dropped as predating it (the "freeze"), and the client continues with
// the epoch returned. ok is false, and nothing is written, when the group
// incarnation is gone or the stored position is not the one the client
// read (another epoch: a reset since, which the client learns of anyway;
// a newer topic incarnation; already at or below offset). It goes through
// the group commit and returns once durable, so nothing is consumed past
// the correction before it would survive a crash.
func (r *Registry) CorrectOffset(ctx context.Context, group string, incarnation uint64, consumerID string, mq core.MessageQueue, epoch, topicUID uint64, offset int64) (newEpoch uint64, ok bool, err error) {
	err = r.commit(ctx, func(tx store.Tx) error {
		newEpoch, ok = 0, false // the hook may run again on a retried commit
		b, err := r.groupOffsetsTx(tx, group, incarnation)
		if err != nil || b == nil {
			return err
		}
		k := offsetKey(consumerID, mq)
		if v := b.Get(k); v != nil {
			old, derr := decodeProgress(v)
			switch {
			case derr != nil:
				// Unreadable: the correction replaces it.
			case old.Epoch != epoch:
				return nil
			case topicUID != 0 && old.TopicUID > topicUID:
				return nil
			case old.Offset <= offset:
				return nil
			}
		}
		e, err := tx.Bucket(bucketOffsets).NextSequence()
		if err != nil {
			return err
		}
		if err := b.Put(k, encodeProgress(core.Progress{Offset: offset, Epoch: e, TopicUID: topicUID})); err != nil {
			return err
		}
		newEpoch, ok = e, true
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return newEpoch, ok, nil
}

// GroupGuard returns a transaction hook answering ErrGroupGone unless the
// group incarnation still exists: run once ahead of a batch of settle hooks
// of that incarnation (engine.SendMessagesBack), it drops a deleted
// group's whole batch in one check.
func (r *Registry) GroupGuard(group string, incarnation uint64) store.Hook {
	return func(tx store.Tx) error {
		v := tx.Bucket(bucketConfig).Get([]byte(group))
		if v == nil {
			return core.ErrGroupGone
		}
		if incarnation != 0 {
			inc, err := storedIncarnation(v)
			if err != nil {
				return err
			}
			if inc != incarnation {
				return core.ErrGroupGone
			}
		}
		return nil
	}
}

// SettleHook returns a transaction hook that records offset of mq as
// finished for (group incarnation, consumerID) at epoch / topicUID: run in
// the transaction that stores a message's retry or dead-letter copy, it
// makes the copy and the original's settlement one atomic fact, so no crash
// can produce a second copy. It returns ErrGroupGone when the group
// incarnation no longer exists: the engine then writes nothing, neither
// the settle nor the copy.
func (r *Registry) SettleHook(group string, incarnation uint64, consumerID string, mq core.MessageQueue, offset int64, epoch, topicUID uint64) store.Hook {
	return func(tx store.Tx) error {
		b, err := r.groupOffsetsTx(tx, group, incarnation)
		if err != nil {
			return err
		}
		if b == nil {
			return core.ErrGroupGone
		}
		k := offsetKey(consumerID, mq)
		var cur core.Progress
		if v := b.Get(k); v != nil {
			if cur, err = decodeProgress(v); err != nil {
				return nil // unreadable: the client's next write replaces it
			}
			if cur.Epoch != epoch || (topicUID != 0 && cur.TopicUID != 0 && cur.TopicUID != topicUID) {
				return nil // the position was reset or belongs to another incarnation
			}
		} else {
			cur = core.Progress{Offset: 0, Epoch: epoch, TopicUID: topicUID}
		}
		if offset < cur.Offset {
			return nil
		}
		cur.Done = append(cur.Done, core.OffsetRange{From: offset, To: offset + 1})
		return b.Put(k, encodeProgress(normalizeProgress(cur)))
	}
}

// SetOffset overwrites an offset (offset reset); forward-only does not
// apply. A running consumer owning mq is told through Watch and takes the
// new offset with TakeResets.
func (r *Registry) SetOffset(group, consumerID string, mq core.MessageQueue, offset int64) error {
	return r.setOffsets(group, consumerID, map[core.MessageQueue]int64{mq: offset}, 0)
}

// setOffsets writes reset positions: each gets a fresh epoch, so a client
// write based on an earlier read of the queue is dropped (CommitProgress),
// and no finished ranges.
func (r *Registry) setOffsets(group, consumerID string, offsets map[core.MessageQueue]int64, topicUID uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.st.Update(func(tx store.Tx) error {
		ob := tx.Bucket(bucketOffsets)
		b, err := ob.CreateBucketIfNotExists([]byte(group))
		if err != nil {
			return err
		}
		for mq, off := range offsets {
			epoch, err := ob.NextSequence()
			if err != nil {
				return err
			}
			p := core.Progress{Offset: off, Epoch: epoch, TopicUID: topicUID}
			if err := b.Put(offsetKey(consumerID, mq), encodeProgress(p)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for mq, off := range offsets {
		r.resets[resetKey{group, consumerID, mq}] = off
	}
	r.notifyLocked(group)
	return nil
}

// resetKey names one pending offset reset.
type resetKey struct {
	group, consumerID string
	mq                core.MessageQueue
}

// TakeResets returns and forgets the pending offset resets of a client's
// queues among owned (RocketMQ resetOffset pushed to the client as
// RESET_CONSUMER_CLIENT_OFFSET). A consumer calls it when told of a change
// and before it creates a ProcessQueue; it then restarts those queues from
// their stored positions (which carry the reset's epoch).
func (r *Registry) TakeResets(group, consumerID string, owned []core.MessageQueue) map[core.MessageQueue]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out map[core.MessageQueue]int64
	for _, mq := range owned {
		k := resetKey{group, consumerID, mq}
		if off, ok := r.resets[k]; ok {
			if out == nil {
				out = map[core.MessageQueue]int64{}
			}
			out[mq] = off
			delete(r.resets, k)
		}
	}
	return out
}

// OffsetSearcher is what offset resets and start positions need from the
// engine.
type OffsetSearcher interface {
	Topic(name string) (core.Topic, error)
	QueueOffsets(mq core.MessageQueue) (min, max int64, err error)
	// SearchOffset returns the first offset of mq whose message was stored
	// at or after t (max offset if none): a binary search on store time.
	SearchOffset(mq core.MessageQueue, t time.Time) (int64, error)
}

// positionOf is where position puts a consumer in mq.
func positionOf(eng OffsetSearcher, mq core.MessageQueue, position core.ConsumeFromWhere, ts time.Time) (off int64, err error) {
	switch position {
	case core.ConsumeFromFirstOffset:
		off, _, err = eng.QueueOffsets(mq)
	case core.ConsumeFromLastOffset:
		_, off, err = eng.QueueOffsets(mq)
	case core.ConsumeFromTimestamp:
		off, err = eng.SearchOffset(mq, ts)
	default:
		return 0, core.FieldError("position", "must be LAST_OFFSET, FIRST_OFFSET or TIMESTAMP")
	}
	return off, err
}

// ResetOffsets sets every queue of topic to position (FIRST_OFFSET: the
// queue's min offset, LAST_OFFSET: its max, TIMESTAMP: the first message
// stored at or after ts) for one consumer of group (consumerID "" for
// CLUSTERING) and returns the new offsets (RocketMQ resetOffsetByTimestamp).
func (r *Registry) ResetOffsets(eng OffsetSearcher, group, consumerID, topic string, position core.ConsumeFromWhere, ts time.Time) (map[core.MessageQueue]int64, error) {
	if _, err := r.Get(group); err != nil {
		return nil, err
	}
	t, err := eng.Topic(topic)
	if err != nil {
		return nil, err
	}
	if position == core.ConsumeFromTimestamp && ts.IsZero() {
		return nil, core.FieldError("timestamp", "is required when position is TIMESTAMP")
	}
	offsets := make(map[core.MessageQueue]int64, t.Queues)
	for q := 0; q < t.Queues; q++ {
		mq := core.MessageQueue{Topic: topic, QueueID: q}
		off, err := positionOf(eng, mq, position, ts)
		if err != nil {
			if core.ErrorCode(err) == core.EInvalid {
				return nil, err
			}
			return nil, fmt.Errorf("groups: reset %s/%d: %w", topic, q, err)
		}
		offsets[mq] = off
	}
	if err := r.setOffsets(group, consumerID, offsets, t.UID); err != nil {
		return nil, err
	}
	return offsets, nil
}
