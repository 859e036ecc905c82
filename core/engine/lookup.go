package engine

import (
	"strconv"

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
	err := e.view(func(tx store.ReadTx) (err error) {
		rec, err := topicExists(tx, topic)
		if err != nil {
			return err
		}
		cl, ok := tx.OffsetOfID(id)
		if !ok {
			// Not placed yet: a timer message waits in the timer index
			// until it is due.
			if m, err = pendingTimer(tx, id); err != nil || m == nil {
				return err
			}
			if uid := realUID(m); uid != 0 && uid != rec.UID {
				m = nil // parked for an earlier incarnation of the topic
			}
			return nil
		}
		m, err = tx.MessageAt(cl)
		if isCorrupt(err) {
			r := tx.InspectCorrupt(cl, 0, -1, -1, err)
			if r.UID != 0 && r.UID != rec.UID {
				return nil // placed in another topic: not this topic's message
			}
			bad = &r
			return nil
		}
		if err != nil || m == nil {
			return err
		}
		if mine, err := ofIncarnation(tx, m, rec); err != nil || !mine {
			m = nil
			return err
		}
		return nil
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
	err := e.view(func(tx store.ReadTx) error {
		rec, err := topicExists(tx, topic)
		if err != nil {
			return err
		}
		for _, cl := range tx.OffsetsOfKey(topic, key, limit) {
			m, err := tx.MessageAt(cl)
			if isCorrupt(err) {
				return core.Errorf(core.ECorrupt, "a message of topic %q with key %q is corrupt (%s); GET /v1/topics/%s/corrupt lists the set-aside ones",
					topic, key, tx.InspectCorrupt(cl, 0, -1, -1, err).Reason, topic)
			}
			if err != nil {
				return err
			}
			if m == nil {
				continue
			}
			if mine, err := ofIncarnation(tx, m, rec); err != nil {
				return err
			} else if mine {
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
	err := e.view(func(tx store.ReadTx) (err error) {
		m, err = tx.MessageAt(commitLogOffset)
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

// topicExists returns topic's record (the zero record for a %RETRY% /
// %DLQ% topic no message created yet), ENotFound for an unknown topic.
func topicExists(tx store.ReadTx, topic string) (store.TopicRecord, error) {
	if rec, ok, err := tx.GetTopic(topic); err != nil || ok {
		return rec, err
	}
	if isGroupTopic(topic) {
		return store.TopicRecord{}, nil
	}
	return store.TopicRecord{}, core.Errorf(core.ENotFound, "topic %q does not exist", topic)
}

// ofIncarnation reports whether m, found through the id or key index,
// belongs to the current incarnation rec of the topic looked up: a
// deleted topic's messages stay in the indexes until the background pass
// removes them (trash.go), and must not show under a topic re-created with
// the same name. A message stored in the topic must be the unit at its
// queue position in rec's consume queue; one pending on the delay path
// must carry rec's UID (REAL_TOPIC_UID; none on messages parked before
// incarnations were recorded). Others (a retry or dead-letter copy found
// by its original topic) are not the topic's own and pass.
func ofIncarnation(tx store.ReadTx, m *core.Message, rec store.TopicRecord) (bool, error) {
	if rec.UID == 0 {
		return true, nil
	}
	if m.Topic == rec.Name {
		u, ok, err := tx.UnitAt(rec.UID, m.QueueID, m.QueueOffset)
		return ok && u.CommitLogOffset == m.CommitLogOffset, err
	}
	if m.SysProps[core.PropRealTopic] == rec.Name {
		s, ok := m.SysProps[core.PropRealTopicUID]
		return !ok || s == strconv.FormatUint(rec.UID, 10), nil
	}
	return true, nil
}
