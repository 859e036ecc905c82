package engine

import (
	bolt "go.etcd.io/bbolt"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// maxByKey caps MessagesByKey (RocketMQ queryMessage's maxNum).
const maxByKey = 1000

// Message returns a message of topic by its user id. A retry copy shows its
// original's id (core.Message.UserID); the id looked up here is the id
// assigned at publish time, which finds the original message.
func (e *Engine) Message(topic, id string) (*core.Message, error) {
	var m *core.Message
	var bad *store.CorruptRecord // the record fails its checksum
	err := e.view(func(tx *bolt.Tx) (err error) {
		if err := topicExists(tx, topic); err != nil {
			return err
		}
		cl, ok := store.OffsetOfID(tx, id)
		if !ok {
			return nil
		}
		m, err = store.MessageAt(tx, cl)
		if isCorrupt(err) {
			r := store.InspectCorrupt(tx, cl, 0, -1, -1, err)
			if t, ok, _ := store.GetTopic(tx, topic); r.UID != 0 && (!ok || t.UID != r.UID) {
				return nil // placed in another topic: not this topic's message
			}
			bad = &r
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		if bad.UID != 0 { // placed: set aside, as a pull would
			if err := e.setAside([]store.CorruptRecord{*bad}); err != nil {
				return nil, err
			}
		}
		return nil, corruptError(topic, id, *bad)
	}
	if m == nil || (m.Topic != topic && m.UserTopic() != topic && m.SysProps[core.PropRealTopic] != topic) {
		return nil, core.Errorf(core.ENotFound, "message %q not found in topic %q", id, topic)
	}
	return m, nil
}

// MessagesByKey returns up to limit messages of topic carrying key, oldest
// first.
func (e *Engine) MessagesByKey(topic, key string, limit int) ([]*core.Message, error) {
	if limit <= 0 || limit > maxByKey {
		limit = maxByKey
	}
	var out []*core.Message
	err := e.view(func(tx *bolt.Tx) error {
		if err := topicExists(tx, topic); err != nil {
			return err
		}
		for _, cl := range store.OffsetsOfKey(tx, topic, key, limit) {
			m, err := store.MessageAt(tx, cl)
			if isCorrupt(err) {
				return core.Errorf(core.ECorrupt, "a message of topic %q with key %q is corrupt (%s); GET /v1/topics/%s/corrupt lists the set-aside ones",
					topic, key, store.InspectCorrupt(tx, cl, 0, -1, -1, err).Reason, topic)
			}
			if err != nil {
				return err
			}
			if m != nil {
				out = append(out, m)
			}
		}
		return nil
	})
	return out, err
}

// MessageAt returns the message at a commit log offset (sendMessageBack
// looks the original up this way); ENotFound once retention removed it.
func (e *Engine) MessageAt(commitLogOffset int64) (*core.Message, error) {
	var m *core.Message
	err := e.view(func(tx *bolt.Tx) (err error) {
		m, err = store.MessageAt(tx, commitLogOffset)
		return err
	})
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, core.Errorf(core.ENotFound, "no message at commit log offset %d", commitLogOffset)
	}
	return m, nil
}

func topicExists(tx *bolt.Tx, topic string) error {
	if _, ok, err := store.GetTopic(tx, topic); err != nil || ok {
		return err
	}
	if isGroupTopic(topic) {
		return nil
	}
	return core.Errorf(core.ENotFound, "topic %q does not exist", topic)
}
