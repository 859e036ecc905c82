package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
)

// TopicRecord is a topic as kept in mq.topics.2. UID names the topic's
// consume-queue units and queue metadata: a topic deleted and created again
// under the same name gets a new UID, so the old incarnation's leftovers can
// be emptied in the background without touching the new one.
type TopicRecord struct {
	UID            uint64    `json:"uid"`
	Name           string    `json:"name"`
	Queues         int       `json:"queues"`
	RetentionHours int       `json:"retentionHours"`
	CreatedAt      time.Time `json:"createdAt"`
	// Layouts is the growth history (core.TopicLayout), oldest first,
	// appended by putTopic each time Queues grows. Records written before
	// it existed decode with none.
	Layouts []TopicLayout `json:"layouts,omitempty"`
}

// TopicLayout is one growth: the queue count before it and each of those
// queues' max offset when it committed.
type TopicLayout struct {
	Queues int     `json:"queues"`
	Fence  []int64 `json:"fence"`
}

// Topic converts the record to the domain type.
func (r TopicRecord) Topic() core.Topic {
	return core.Topic{
		TopicConfig: core.TopicConfig{Name: r.Name, Queues: r.Queues, RetentionHours: r.RetentionHours},
		CreatedAt:   r.CreatedAt,
		UID:         r.UID,
		Layouts:     r.layouts(),
	}
}

func (r TopicRecord) layouts() []core.TopicLayout {
	if len(r.Layouts) == 0 {
		return nil
	}
	out := make([]core.TopicLayout, len(r.Layouts))
	for i, l := range r.Layouts {
		out[i] = core.TopicLayout{Queues: l.Queues, Fence: slices.Clone(l.Fence)}
	}
	return out
}

// topicRecordVersion prefixes the JSON so the record can change shape later.
// Layouts were added without a new version: the field is optional, so
// every record written before decodes unchanged (an older binary reading
// a grown topic ignores its layouts and with them the ORDERLY fence).
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

// getTopic reads a topic record in tx. The decoded record comes from
// decodedTopics when the stored bytes are those it was decoded from, so
// a pull or a publish group pays a map look-up and a byte comparison, not
// a JSON decode. The returned Layouts are shared: read them, never write.
func getTopic(tx *bolt.Tx, name string) (TopicRecord, bool, error) {
	v := tx.Bucket(bucketTopics).Get([]byte(name))
	if v == nil {
		return TopicRecord{}, false, nil
	}
	if r, ok := decodedTopics.get(name, v); ok {
		return r, true, nil
	}
	r, err := decodeTopicRecord(v)
	if err != nil {
		return r, false, err
	}
	decodedTopics.put(name, v, r)
	return r, true, nil
}

// decodedTopics memoises decodeTopicRecord, keyed by name and checked
// against the stored bytes. Decoding is a pure function of those bytes, so
// an entry can never be stale: a record changed by putTopic (or by a
// transaction that rolled back, or in another file) has other bytes and
// is decoded afresh, and a deleted one is not found before the memo is
// asked. Every transaction, read or write, of any snapshot, sees exactly
// the record its own bytes say. Nothing needs invalidating.
var decodedTopics = topicMemo{m: map[string]memoTopic{}}

// maxMemoTopics bounds the memo (a process normally has one store with
// far fewer topics); past it the memo starts over.
const maxMemoTopics = 1 << 14

type topicMemo struct {
	mu sync.RWMutex
	m  map[string]memoTopic
}

type memoTopic struct {
	raw []byte // the stored value it was decoded from (a copy)
	rec TopicRecord
}

func (c *topicMemo) get(name string, raw []byte) (TopicRecord, bool) {
	c.mu.RLock()
	e, ok := c.m[name]
	c.mu.RUnlock()
	if !ok || !bytes.Equal(e.raw, raw) {
		return TopicRecord{}, false
	}
	return e.rec, true
}

func (c *topicMemo) put(name string, raw []byte, rec TopicRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxMemoTopics {
		clear(c.m)
	}
	c.m[name] = memoTopic{raw: bytes.Clone(raw), rec: rec}
}

// listTopics returns every topic record (system topics included), by name.
func listTopics(tx *bolt.Tx) ([]TopicRecord, error) { return listTopicsIn(tx.Bucket(bucketTopics)) }

func listTopicsIn(b *bolt.Bucket) ([]TopicRecord, error) {
	var out []TopicRecord
	err := b.ForEach(func(_, v []byte) error {
		r, err := decodeTopicRecord(v)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// putTopic creates a topic (new UID, empty queues) or updates one: queues
// may only grow; new queues start empty, and a growth appends a layout
// fencing the old queues at their current max offsets. rec.Layouts is
// ignored (the history is the store's to keep).
func putTopic(tx *bolt.Tx, rec TopicRecord) (TopicRecord, bool, error) {
	old, exists, err := getTopic(tx, rec.Name)
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
		rec.Layouts = old.Layouts
		if rec.Queues > old.Queues {
			// Growth moves sharding keys to other queues: record where the
			// old layout ends in each old queue (the ORDERLY fence).
			l := TopicLayout{Queues: old.Queues, Fence: make([]int64, old.Queues)}
			for q := range old.Queues {
				if _, l.Fence[q], err = queueRange(tx, old.UID, q); err != nil {
					return TopicRecord{}, false, err
				}
			}
			rec.Layouts = append(slices.Clip(rec.Layouts), l)
		}
	} else {
		rec.Layouts = nil
		if rec.UID, err = tx.Bucket(bucketTopics).NextSequence(); err != nil {
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

// queueRange returns a queue's [min, max) offsets.
func queueRange(tx *bolt.Tx, uid uint64, qid int) (min, max int64, err error) {
	v := tx.Bucket(bucketQueues).Get(queueKey(uid, qid))
	if v == nil {
		return 0, 0, fmt.Errorf("%w: no metadata for queue %d of topic uid %d", ErrCorrupt, qid, uid)
	}
	m, err := decodeQueueMeta(v)
	return m.Min, m.Max, err
}
