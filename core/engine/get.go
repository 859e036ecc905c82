package engine

import (
	"errors"
	"strings"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Read bounds of one GetMessages (RocketMQ maxFilterMessageCount and
// maxTransferBytesOnMessageInMemory): a filtered read scans at most
// maxScanUnits units (plus max), and stops once maxGetBytes of bodies are collected
// (always returning at least one message).
const (
	maxScanUnits = 800
	maxGetBytes  = 4 << 20
)

// queueIn resolves a queue for reading. ok is false for a system topic not
// created yet (it reads as an empty queue); a missing user topic or a queue
// beyond the topic's count is ENotFound.
func queueIn(tx store.ReadTx, mq core.MessageQueue) (rec store.TopicRecord, ok bool, err error) {
	rec, ok, err = tx.GetTopic(mq.Topic)
	if err != nil {
		return rec, false, err
	}
	if !ok {
		if core.IsSystemTopic(mq.Topic) {
			return rec, false, nil
		}
		return rec, false, core.Errorf(core.ENotFound, "topic %q does not exist", mq.Topic)
	}
	if mq.QueueID < 0 || mq.QueueID >= rec.Queues {
		return rec, false, core.Errorf(core.ENotFound, "topic %q has no queue %d", mq.Topic, mq.QueueID)
	}
	return rec, true, nil
}

// GetMessages reads up to max messages of one queue from offset, applying
// the filter (tags code, then exact tag; or a SQL92 expression over the
// properties, so unwanted messages never leave the engine) — RocketMQ
// getMessage. It works on
// system topics too; a %RETRY% topic not created yet reads as empty.
//
// Statuses: offset == max offset → NO_NEW_MSG (NextOffset = offset); offset
// below min, or above max → OFFSET_ILLEGAL with NextOffset the nearest valid
// offset (min, resp. max); otherwise FOUND with the matching messages, or
// NO_MATCHED_MSG when the scanned units all failed the filter — NextOffset
// then skips past them.
func (e *Engine) GetMessages(mq core.MessageQueue, offset int64, max int, filter core.Filter) (core.GetResult, error) {
	if max <= 0 {
		max = 1
	}
	var res core.GetResult
	var corrupt []store.CorruptRecord // met for the first time: set aside below
	err := e.view(func(tx store.ReadTx) error {
		corrupt = corrupt[:0]
		rec, ok, err := queueIn(tx, mq)
		if err != nil || !ok {
			return err
		}
		res.TopicUID, res.Layouts = rec.UID, len(rec.Layouts)
		res.MinOffset, res.MaxOffset, err = tx.QueueRange(rec.UID, mq.QueueID)
		if err != nil {
			return err
		}
		if offset < res.MinOffset || offset >= res.MaxOffset {
			return nil
		}
		scanned, bytes, scanCap := 0, 0, maxScanUnits+max
		retryQueue := strings.HasPrefix(mq.Topic, core.RetryTopicPrefix)
		var scanErr error
		next := offset
		purged := purgedIn(tx, mq.Topic, rec.UID, mq.QueueID) // purge.go
		records := tx.Records()
		err = tx.ScanQueue(rec.UID, mq.QueueID, offset, func(off int64, u store.Unit) bool {
			if scanned >= scanCap || len(res.Messages) == max || bytes >= maxGetBytes {
				return false
			}
			scanned++
			next = off + 1
			if !filter.MatchCode(int32(u.TagsCode)) || purged.has(off) {
				return true
			}
			m, err := records.MessageAt(u.CommitLogOffset)
			if err != nil || m == nil {
				// Never skipped silently: set aside (counted, listed) before
				// this read answers with a position past it.
				if !tx.IsSetAside(u.CommitLogOffset) {
					corrupt = append(corrupt, tx.InspectCorrupt(u.CommitLogOffset, rec.UID, mq.QueueID, off, err))
				}
				return true
			}
			if !filter.Match(m) { // the tag, or the SQL92 expression over properties
				return true
			}
			if retryQueue {
				// A retry of a deleted topic's message: skipped like a
				// filtered one (SPEC §8.9).
				if gone, gerr := retryOfGoneTopic(tx, m); gerr != nil || gone {
					scanErr = gerr
					return gerr == nil
				}
			}
			res.Messages = append(res.Messages, m)
			bytes += len(m.Body)
			return true
		})
		res.NextOffset = next
		return errors.Join(err, scanErr)
	})
	if err == nil {
		err = e.setAside(corrupt)
	}
	if err != nil {
		return core.GetResult{}, err
	}
	switch {
	case offset == res.MaxOffset:
		res.Status, res.NextOffset = core.NoNewMsg, offset
	case offset < res.MinOffset:
		res.Status, res.NextOffset = core.OffsetIllegal, res.MinOffset
	case offset > res.MaxOffset:
		res.Status, res.NextOffset = core.OffsetIllegal, res.MaxOffset
	case len(res.Messages) > 0:
		res.Status = core.Found
	default:
		res.Status = core.NoMatchedMsg
	}
	return res, nil
}

// QueueOffsets returns a queue's [min, max) offsets.
func (e *Engine) QueueOffsets(mq core.MessageQueue) (min, max int64, err error) {
	err = e.view(func(tx store.ReadTx) error {
		rec, ok, err := queueIn(tx, mq)
		if err != nil || !ok {
			return err
		}
		min, max, err = tx.QueueRange(rec.UID, mq.QueueID)
		return err
	})
	return min, max, err
}

// SearchOffset returns the smallest queue offset whose message was stored at
// or after t (RocketMQ getOffsetInQueueByTime), or the max offset when every
// message is older. Store times never decrease along a queue (the writer
// makes them monotonic), so this is a binary search on the consume queue.
func (e *Engine) SearchOffset(mq core.MessageQueue, t time.Time) (int64, error) {
	target := t.UnixMilli()
	var off int64
	err := e.view(func(tx store.ReadTx) error {
		rec, ok, err := queueIn(tx, mq)
		if err != nil || !ok {
			return err
		}
		lo, hi, err := tx.QueueRange(rec.UID, mq.QueueID)
		if err != nil {
			return err
		}
		for lo < hi {
			mid := lo + (hi-lo)/2
			u, found, err := tx.UnitAt(rec.UID, mq.QueueID, mid)
			if err != nil {
				return err
			}
			var ms int64
			if found {
				if ms, _, err = tx.StoredAtAt(u.CommitLogOffset); err != nil {
					return err
				}
			}
			if found && ms >= target {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		off = lo
		return nil
	})
	return off, err
}
