package groups

import (
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
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

// CommittedOffset returns the committed offset of (group, consumer, mq); ok
// is false when none was committed. consumerID is "" for CLUSTERING.
func (r *Registry) CommittedOffset(group, consumerID string, mq core.MessageQueue) (offset int64, ok bool, err error) {
	err = r.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOffsets).Bucket([]byte(group))
		if b == nil {
			return nil
		}
		v := b.Get(offsetKey(consumerID, mq))
		if len(v) == 8 {
			offset, ok = int64(binary.BigEndian.Uint64(v)), true
		}
		return nil
	})
	return offset, ok, err
}

// Offsets returns every committed offset of a group's consumer (consumerID
// "" for CLUSTERING).
func (r *Registry) Offsets(group, consumerID string) (map[core.MessageQueue]int64, error) {
	out := map[core.MessageQueue]int64{}
	err := r.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOffsets).Bucket([]byte(group))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			cid, mq, ok := decodeOffsetKey(k)
			if ok && cid == consumerID && len(v) == 8 {
				out[mq] = int64(binary.BigEndian.Uint64(v))
			}
			return nil
		})
	})
	return out, err
}

// CommitOffsets persists offsets of one client in one transaction
// (RocketMQ updateConsumerOffset / persistAll). Queues with an offset reset
// that the client has not yet taken (TakeResets) are skipped: the client's
// in-memory offset predates the reset and must not overwrite it.
func (r *Registry) CommitOffsets(group, consumerID string, offsets map[core.MessageQueue]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketOffsets).CreateBucketIfNotExists([]byte(group))
		if err != nil {
			return err
		}
		for mq, off := range offsets {
			if _, pending := r.resets[resetKey{group, consumerID, mq}]; pending {
				continue
			}
			if err := b.Put(offsetKey(consumerID, mq), binary.BigEndian.AppendUint64(nil, uint64(off))); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetOffset overwrites an offset (offset reset); forward-only does not
// apply. A running consumer owning mq is told through Watch and takes the
// new offset with TakeResets.
func (r *Registry) SetOffset(group, consumerID string, mq core.MessageQueue, offset int64) error {
	return r.setOffsets(group, consumerID, map[core.MessageQueue]int64{mq: offset})
}

func (r *Registry) setOffsets(group, consumerID string, offsets map[core.MessageQueue]int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketOffsets).CreateBucketIfNotExists([]byte(group))
		if err != nil {
			return err
		}
		for mq, off := range offsets {
			if err := b.Put(offsetKey(consumerID, mq), binary.BigEndian.AppendUint64(nil, uint64(off))); err != nil {
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
// the returned offsets.
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

// OffsetSearcher is what an offset reset needs from the engine.
type OffsetSearcher interface {
	Topic(name string) (core.Topic, error)
	QueueOffsets(mq core.MessageQueue) (min, max int64, err error)
	// SearchOffset returns the first offset of mq whose message was stored
	// at or after t (max offset if none): a binary search on store time.
	SearchOffset(mq core.MessageQueue, t time.Time) (int64, error)
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
		var off int64
		switch position {
		case core.ConsumeFromFirstOffset:
			off, _, err = eng.QueueOffsets(mq)
		case core.ConsumeFromLastOffset:
			_, off, err = eng.QueueOffsets(mq)
		case core.ConsumeFromTimestamp:
			off, err = eng.SearchOffset(mq, ts)
		default:
			return nil, core.FieldError("position", "must be LAST_OFFSET, FIRST_OFFSET or TIMESTAMP")
		}
		if err != nil {
			return nil, fmt.Errorf("groups: reset %s/%d: %w", topic, q, err)
		}
		offsets[mq] = off
	}
	if err := r.setOffsets(group, consumerID, offsets); err != nil {
		return nil, err
	}
	return offsets, nil
}
