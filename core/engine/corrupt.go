package engine

import (
	"errors"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Records that fail their checksum at read time (store/corrupt.go). The
// reader that meets one sets it aside in mq.corrupt, durably, before it
// answers with a position past it: a pull moves past it, a GET answers
// ECorrupt, and topic stats, /metrics and CorruptMessages report it.

// setAside records recs, logging the ones not recorded before. It commits
// before returning, so a consumer's offset never moves past a record that
// is not yet accounted for.
func (e *Engine) setAside(recs []store.CorruptRecord) error {
	if len(recs) == 0 {
		return nil
	}
	var added []store.CorruptRecord
	err := e.update(func(tx store.Tx) error {
		added = added[:0]
		for _, r := range recs {
			ok, err := tx.RecordCorrupt(r)
			if err != nil {
				return err
			}
			if ok {
				added = append(added, r)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range added {
		e.log.Error().Uint64("topicUid", r.UID).Int("queue", r.QueueID).Int64("queueOffset", r.QueueOffset).
			Int64("commitLogOffset", r.CommitLogOffset).Str("msgId", r.MessageID).Str("reason", r.Reason).
			Msg("stored message is corrupt: set aside (counted in the topic's stats and mqgate_store_corrupt_records, listed by GET /v1/topics/{topic}/corrupt)")
	}
	return nil
}

// CorruptMessages lists the topic's messages set aside as corrupt, in
// commit log order. ENotFound when the topic does not exist.
func (e *Engine) CorruptMessages(topic string) ([]core.CorruptMessage, error) {
	var out []core.CorruptMessage
	err := e.view(func(tx store.ReadTx) error {
		rec, ok, err := tx.GetTopic(topic)
		if err != nil {
			return err
		}
		if !ok {
			return core.Errorf(core.ENotFound, "topic %q does not exist", topic)
		}
		all, err := tx.ListCorrupt()
		if err != nil {
			return err
		}
		out = []core.CorruptMessage{}
		for _, r := range all {
			if r.UID == rec.UID {
				out = append(out, corruptMessage(topic, r))
			}
		}
		return nil
	})
	return out, err
}

// CorruptCounts counts the set-aside messages per topic name (every topic,
// 0 included), for metrics; those whose record could not be placed in a
// topic count under "".
func (e *Engine) CorruptCounts() (map[string]int64, error) {
	out := map[string]int64{}
	err := e.view(func(tx store.ReadTx) error {
		topics, err := tx.ListTopics()
		if err != nil {
			return err
		}
		names := make(map[uint64]string, len(topics))
		for _, t := range topics {
			names[t.UID] = t.Name
			out[t.Name] = 0
		}
		all, err := tx.ListCorrupt()
		if err != nil {
			return err
		}
		for _, r := range all {
			if name, ok := names[r.UID]; ok || r.UID == 0 {
				out[name]++
			} // else: a deleted topic's, gone once the trash is emptied
		}
		return nil
	})
	return out, err
}

// corruptCount counts the set-aside records of one topic incarnation.
func corruptCount(tx store.ReadTx, uid uint64) (int64, error) {
	all, err := tx.ListCorrupt()
	var n int64
	for _, r := range all {
		if r.UID == uid {
			n++
		}
	}
	return n, err
}

func corruptMessage(topic string, r store.CorruptRecord) core.CorruptMessage {
	return core.CorruptMessage{Topic: topic, QueueID: r.QueueID, QueueOffset: r.QueueOffset,
		CommitLogOffset: r.CommitLogOffset, MessageID: r.MessageID, Reason: r.Reason, DetectedAt: r.DetectedAt}
}

// corruptError is what a read of a set-aside message answers.
func corruptError(topic, id string, r store.CorruptRecord) error {
	return core.Errorf(core.ECorrupt, "message %q of topic %q is corrupt (%s); it is set aside and listed by GET /v1/topics/%s/corrupt",
		id, topic, r.Reason, topic)
}

// isCorrupt tells a record that fails to decode from other read errors.
func isCorrupt(err error) bool { return errors.Is(err, store.ErrCorrupt) }
