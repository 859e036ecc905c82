package engine

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// maxRetentionHours keeps retention arithmetic far from overflow (100 years).
const maxRetentionHours = 876000

// trashChunk is how many messages one transaction of topic deletion or
// retention removes, so publishers wait at most one small transaction.
const trashChunk = 512

// topicEntry is a cached user topic with its round-robin cursor
// (RocketMQ's sendWhichQueue).
type topicEntry struct {
	rec store.TopicRecord
	rr  atomic.Uint64
	// layout makes queue selection and growth exclusive: Put holds it for
	// reading from choosing its queues (with rec.Queues) until its commit
	// returns; growing the topic holds it for writing while it records the
	// fence. So every publish answered before a growth is below the fence
	// and every publish that chose its queue with the new count is above
	// it — the boundary ORDERLY groups rely on (core.TopicLayout).
	layout sync.RWMutex
}

func (e *Engine) cachedTopic(name string) *topicEntry {
	e.topicsMu.RLock()
	defer e.topicsMu.RUnlock()
	return e.topics[name]
}

// PutTopic creates or updates a topic; created reports which. Queue count
// may grow, never shrink (EConflict). On update a zero Queues or
// RetentionHours keeps the current value; on create it takes the default.
func (e *Engine) PutTopic(cfg core.TopicConfig) (t core.Topic, created bool, err error) {
	if !core.ValidName(cfg.Name) {
		return core.Topic{}, false, core.FieldError("name", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	if core.IsSystemTopic(cfg.Name) {
		return core.Topic{}, false, core.Errorf(core.EForbidden, "%q is a system topic", cfg.Name)
	}
	if cfg.Queues < 0 || cfg.Queues > core.MaxQueues {
		return core.Topic{}, false, core.FieldError("queues", "must be between 1 and %d", core.MaxQueues)
	}
	if cfg.RetentionHours < 0 || cfg.RetentionHours > maxRetentionHours {
		return core.Topic{}, false, core.FieldError("retentionHours", "must be between 1 and %d", maxRetentionHours)
	}
	e.adminMu.Lock()
	defer e.adminMu.Unlock()
	if ent := e.cachedTopic(cfg.Name); ent != nil && cfg.Queues > 0 {
		// It may grow: no publish may choose a queue meanwhile, and those
		// that chose one with the old count commit first (topicEntry.layout).
		ent.layout.Lock()
		defer ent.layout.Unlock()
	}
	var rec store.TopicRecord
	err = e.update(func(tx store.Tx) error {
		old, exists, err := tx.GetTopic(cfg.Name)
		if err != nil {
			return err
		}
		want := store.TopicRecord{Name: cfg.Name, Queues: cfg.Queues, RetentionHours: cfg.RetentionHours,
			CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
		if want.Queues == 0 {
			want.Queues = core.DefaultQueues
			if exists {
				want.Queues = old.Queues
			}
		}
		if want.RetentionHours == 0 {
			want.RetentionHours = core.DefaultRetentionHours
			if exists {
				want.RetentionHours = old.RetentionHours
			}
		}
		rec, created, err = tx.PutTopic(want)
		return err
	})
	if err != nil {
		return core.Topic{}, false, err
	}
	e.topicsMu.Lock()
	prev := 0
	if ent := e.topics[rec.Name]; ent != nil {
		prev = ent.rec.Queues
		ent.rec = rec
	} else {
		e.topics[rec.Name] = &topicEntry{rec: rec}
	}
	e.topicsMu.Unlock()
	for q := range rec.Queues {
		e.arrivals.ensure(core.MessageQueue{Topic: rec.Name, QueueID: q})
	}
	if created || rec.Queues != prev {
		e.watchers.Notify(rec.Name)
	}
	return rec.Topic(), created, nil
}

// Topic returns a topic (ENotFound if absent). A group's %RETRY% and %DLQ%
// topics are created by their first message; until then they are reported
// as existing with one queue, so consumers need no special case.
func (e *Engine) Topic(name string) (core.Topic, error) {
	var rec store.TopicRecord
	var ok bool
	err := e.view(func(tx store.ReadTx) (err error) {
		rec, ok, err = tx.GetTopic(name)
		return err
	})
	if err != nil {
		return core.Topic{}, err
	}
	if !ok {
		if isGroupTopic(name) {
			return core.Topic{TopicConfig: core.TopicConfig{Name: name, Queues: 1, RetentionHours: core.DefaultRetentionHours}}, nil
		}
		return core.Topic{}, core.Errorf(core.ENotFound, "topic %q does not exist", name)
	}
	return rec.Topic(), nil
}

func isGroupTopic(name string) bool {
	return strings.HasPrefix(name, core.RetryTopicPrefix) || strings.HasPrefix(name, core.DLQTopicPrefix)
}

// Topics lists user topics by name.
func (e *Engine) Topics() ([]core.Topic, error) {
	var out []core.Topic
	err := e.view(func(tx store.ReadTx) error {
		recs, err := tx.ListTopics()
		for _, r := range recs {
			if !core.IsSystemTopic(r.Name) {
				out = append(out, r.Topic())
			}
		}
		return err
	})
	return out, err
}

// DeleteTopic removes a topic and its messages: the topic disappears at
// once (readers get ENotFound, waiters wake, a topic created under the same
// name is a new incarnation that starts empty) and DeleteTopic returns;
// the messages are removed in the background in small transactions
// (trashLoop, trash.go), which resume after a restart if the process stops
// half-way. Delayed and timer messages pending for the topic are dropped
// when they come due (REAL_TOPIC_UID, schedule.go).
func (e *Engine) DeleteTopic(name string) error {
	if core.IsSystemTopic(name) {
		return core.Errorf(core.EForbidden, "%q is a system topic", name)
	}
	return e.removeTopic(name, true)
}

// DeleteSystemTopic removes a system topic (%RETRY%g, %DLQ%g) when its group
// is deleted; an absent one is not an error.
func (e *Engine) DeleteSystemTopic(name string) error {
	if !core.IsSystemTopic(name) {
		return core.Errorf(core.EInvalid, "%q is not a system topic", name)
	}
	return e.removeTopic(name, false)
}

func (e *Engine) removeTopic(name string, mustExist bool) error {
	e.adminMu.Lock()
	var found bool
	err := e.update(func(tx store.Tx) error {
		rec, ok, err := tx.RemoveTopic(name)
		if err != nil || !ok {
			return err
		}
		found = true
		// Its pending timers and redrive marks: removed by trashLoop.
		return tx.Bucket(bucketSweep).Put(uidKey(rec.UID), []byte{})
	})
	if err == nil {
		e.topicsMu.Lock()
		delete(e.topics, name)
		e.topicsMu.Unlock()
		e.arrivals.drop(name)
		if found {
			e.watchers.Notify(name)
		}
	}
	e.adminMu.Unlock()
	if err != nil {
		return err
	}
	if !found {
		if mustExist {
			return core.Errorf(core.ENotFound, "topic %q does not exist", name)
		}
		return nil
	}
	e.trashWake.notify() // trashLoop removes the messages (trash.go)
	return nil
}

// statsSample is how many units per queue TopicStats reads to estimate
// the topic's bytes.
const statsSample = 16

// TopicStats returns a topic's per-queue offset ranges, its corrupt count
// and an estimate of its stored bytes.
func (e *Engine) TopicStats(name string) (core.TopicStats, error) {
	var stats core.TopicStats
	err := e.view(func(tx store.ReadTx) error {
		rec, ok, err := tx.GetTopic(name)
		if err != nil {
			return err
		}
		if !ok {
			return core.Errorf(core.ENotFound, "topic %q does not exist", name)
		}
		stats.Queues = make([]core.QueueStats, rec.Queues)
		for q := range rec.Queues {
			min, max, err := tx.QueueRange(rec.UID, q)
			if err != nil {
				return err
			}
			stats.Queues[q] = core.QueueStats{QueueID: q, MinOffset: min, MaxOffset: max}
			stats.Messages += max - min
			n, err := tx.QueueBytes(rec.UID, q, statsSample)
			if err != nil {
				return err
			}
			stats.Bytes += n
		}
		stats.Corrupt, err = corruptCount(tx, rec.UID)
		return err
	})
	return stats, err
}
