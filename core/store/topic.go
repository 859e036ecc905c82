package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// TopicRecord is a topic as kept in mq.topics. UID names the topic's
// consume-queue bucket and queue metadata: a topic deleted and created again
// under the same name gets a new UID, so the old incarnation's leftovers can
// be emptied in the background without touching the new one.
type TopicRecord struct {
	UID            uint64    `json:"uid"`
	Name           string    `json:"name"`
	Queues         int       `json:"queues"`
	RetentionHours int       `json:"retentionHours"`
	CreatedAt      time.Time `json:"createdAt"`
}

// Topic converts the record to the domain type.
func (r TopicRecord) Topic() core.Topic {
	return core.Topic{
		TopicConfig: core.TopicConfig{Name: r.Name, Queues: r.Queues, RetentionHours: r.RetentionHours},
		CreatedAt:   r.CreatedAt,
		UID:         r.UID,
	}
}

// topicRecordVersion prefixes the JSON so the record can change shape later.
const topicRecordVersion = 1

func (r TopicRecord) encode() []byte {
	b, _ := json.Marshal(r) // plain struct: cannot fail
	return append([]byte{topicRecordVersion}, b...)
}

func decodeTopicRecord(b []byte) (TopicRecord, error) {
	var r TopicRecord
	if len(b) == 0 || b[0] != topicRecordVersion {
		return r, fmt.Errorf("%w: topic record version", ErrCorrupt)
	}
	if err := json.Unmarshal(b[1:], &r); err != nil {
		return r, fmt.Errorf("%w: topic record: %v", ErrCorrupt, err)
	}
	return r, nil
}

// GetTopic reads a topic record in tx.
func GetTopic(tx *bolt.Tx, name string) (TopicRecord, bool, error) {
	v := tx.Bucket(bucketTopics).Get([]byte(name))
	if v == nil {
		return TopicRecord{}, false, nil
	}
	r, err := decodeTopicRecord(v)
	return r, err == nil, err
}

// ListTopics returns every topic record (system topics included), by name.
func ListTopics(tx *bolt.Tx) ([]TopicRecord, error) {
	var out []TopicRecord
	err := tx.Bucket(bucketTopics).ForEach(func(_, v []byte) error {
		r, err := decodeTopicRecord(v)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// PutTopic creates a topic (new UID, empty queues) or updates one: queues
// may only grow; new queues start empty.
func PutTopic(tx *bolt.Tx, rec TopicRecord) (TopicRecord, bool, error) {
	old, exists, err := GetTopic(tx, rec.Name)
	if err != nil {
		return TopicRecord{}, false, err
	}
	from := 0
	if exists {
		if rec.Queues < old.Queues {
			return TopicRecord{}, false, core.Errorf(core.EConflict,
				"topic %q has %d queues; the queue count may grow but never shrink", rec.Name, old.Queues)
		}
		rec.UID, rec.CreatedAt, from = old.UID, old.CreatedAt, old.Queues
	} else {
		if rec.UID, err = tx.Bucket(bucketTopics).NextSequence(); err != nil {
			return TopicRecord{}, false, err
		}
		if _, err := tx.Bucket(bucketCQ).CreateBucket(uidKey(rec.UID)); err != nil {
			return TopicRecord{}, false, err
		}
	}
	qb := tx.Bucket(bucketQueues)
	for q := from; q < rec.Queues; q++ {
		if err := qb.Put(queueKey(rec.UID, q), queueMeta{}.encode()); err != nil {
			return TopicRecord{}, false, err
		}
	}
	if err := tx.Bucket(bucketTopics).Put([]byte(rec.Name), rec.encode()); err != nil {
		return TopicRecord{}, false, err
	}
	return rec, !exists, nil
}

// QueueRange returns a queue's [min, max) offsets.
func QueueRange(tx *bolt.Tx, uid uint64, qid int) (min, max int64, err error) {
	v := tx.Bucket(bucketQueues).Get(queueKey(uid, qid))
	if v == nil {
		return 0, 0, fmt.Errorf("%w: no metadata for queue %d of topic uid %d", ErrCorrupt, qid, uid)
	}
	m, err := decodeQueueMeta(v)
	return m.Min, m.Max, err
}
