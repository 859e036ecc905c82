package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// errMoved is returned by a move hook that finds its offset already
// advanced: the request fails alone and the task re-reads (never a
// duplicate, even if two movers raced).
var errMoved = core.Errorf(core.EConflict, "schedule offset moved concurrently")

// levelTask is RocketMQ's DeliverDelayedMessageTimerTask for one delay
// level: it reads its schedule queue from the persisted offset, moves every
// due message to its real topic and advances the offset in the same
// transaction, then sleeps on one timer until the head is due (or until a
// put wakes it). Within a level due times follow queue order (same delay,
// accept order), so only the head matters.
type levelTask struct {
	e   *Engine
	qid int
	dueLoop
	// sinceTrim counts moves since the delivered head was last trimmed.
	sinceTrim int
}

func (t *levelTask) run() {
	t.dueLoop.run(t.e, t.pass, func(err error) {
		t.e.log.Error().Err(err).Int("level", t.qid+1).Msg("schedule: delivering delayed messages failed; retrying later")
	})
}

// pass delivers every due message of the level. It returns the due time
// of the first message not yet due, or 0 when the queue is drained.
func (t *levelTask) pass() (next int64, err error) {
	single := false // after a batch failed on one message, go one by one
	for {
		if isClosing(t.e) {
			return 0, core.ErrClosed
		}
		b, err := t.read(single)
		if err != nil {
			return 0, err
		}
		if b.end == b.start {
			t.trimMaybe(b.next == 0)
			return b.next, nil
		}
		err = t.e.commit(context.Background(), b.ops, t.advanceHook(b.uid, b.start, b.end))
		switch core.ErrorCode(err) {
		case "":
			t.e.sched.moved.Add(int64(len(b.ops)))
			t.sinceTrim += int(b.end - b.start)
		case core.EConflict:
			// Another commit advanced the offset: re-read it.
		case core.ENotFound, core.EInvalid:
			if len(b.ops) > 1 {
				single = true
				continue
			}
			// The real topic is gone (or lost that queue): drop the message,
			// keeping the offset move transactional.
			if err := t.dropOne(b); err != nil {
				return 0, err
			}
			single = false // stay one by one only until the culprit is dropped
		default:
			return 0, err
		}
	}
}

// moveBatchRead is one read of a schedule queue: the ops to commit for
// units [start, end), and the due time of the unit at end if not yet due.
type moveBatchRead struct {
	uid        uint64
	start, end int64
	ops        []putOp
	next       int64
	corrupt    []store.CorruptRecord // unreadable units met, to set aside
}

func (t *levelTask) read(single bool) (b moveBatchRead, err error) {
	now := time.Now().UnixMilli()
	err = t.e.view(func(tx store.ReadTx) error {
		rec, ok, err := tx.GetTopic(core.ScheduleTopic)
		if err != nil || !ok || t.qid >= rec.Queues {
			return err
		}
		b.uid = rec.UID
		min, max, err := tx.QueueRange(rec.UID, t.qid)
		if err != nil {
			return err
		}
		off := schedOffset(tx, t.qid, rec.UID)
		off = maxI64(off, min)
		b.start, b.end = off, off
		bytes := 0
		limit := moveBatch
		if single {
			limit = 1
		}
		return tx.ScanQueue(rec.UID, t.qid, off, func(o int64, u store.Unit) bool {
			if o >= max {
				return false
			}
			if u.TagsCode > now {
				b.next = u.TagsCode
				return false
			}
			if len(b.ops) == limit || bytes >= moveBatchBytes {
				b.next = u.TagsCode // due already: the pass loops at once
				return false
			}
			b.end = o + 1
			m, err := tx.MessageAt(u.CommitLogOffset)
			if err != nil || m == nil {
				t.e.sched.skip.Add(1)
				if !tx.IsSetAside(u.CommitLogOffset) { // set aside below (corrupt.go), not skipped silently
					b.corrupt = append(b.corrupt, tx.InspectCorrupt(u.CommitLogOffset, rec.UID, t.qid, o, err))
				}
				return true
			}
			op, ok := realTarget(m)
			if !ok {
				t.e.sched.skip.Add(1)
				t.e.log.Error().Str("msgId", m.ID).Int("level", t.qid+1).Msg("schedule: message without REAL_TOPIC/REAL_QID; skipped")
				return true
			}
			bytes += len(m.Body)
			b.ops = append(b.ops, op)
			return true
		})
	})
	if err == nil {
		err = t.e.setAside(b.corrupt)
	}
	return b, err
}

// dropOne advances past a single message whose real topic no longer takes
// it (deleted topic), counting it.
func (t *levelTask) dropOne(b moveBatchRead) error {
	err := t.e.commit(context.Background(), nil, t.advanceHook(b.uid, b.start, b.end))
	if err == nil {
		t.e.sched.dropped.Add(1)
		t.e.log.Warn().Str("topic", b.ops[0].topic).Str("msgId", b.ops[0].msg.ID).
			Msg("schedule: real topic of a delayed message is gone (deleted, maybe re-created); dropped")
		return nil
	}
	if core.ErrorCode(err) == core.EConflict {
		return nil
	}
	return err
}

// advanceHook moves the level's persisted offset from start to end inside
// the move's transaction; it refuses if the offset is no longer start.
func (t *levelTask) advanceHook(uid uint64, start, end int64) store.Hook {
	return func(tx store.Tx) error {
		if cur := schedOffset(tx.ReadTx, t.qid, uid); cur > start {
			return errMoved
		}
		return tx.Bucket(bucketSchedOffsets).Put(schedOffsetKey(t.qid), schedOffsetValue(uid, end))
	}
}

// trimMaybe removes delivered units (and their commit log records) from
// the head of the schedule queue once enough piled up or the level is
// idle, in one small transaction: the schedule topic is exempt from
// retention, so this is what keeps it from growing forever.
func (t *levelTask) trimMaybe(drained bool) {
	if t.sinceTrim == 0 || (!drained && t.sinceTrim < trashChunk) {
		return
	}
	t.sinceTrim = 0
	err := t.e.update(func(tx store.Tx) error {
		rec, ok, err := tx.GetTopic(core.ScheduleTopic)
		if err != nil || !ok {
			return err
		}
		// Store times never decrease along a queue, so every unit stored
		// before the first undelivered one (or the last delivered one)
		// is delivered: trim by that store time.
		_, max, err := tx.QueueRange(rec.UID, t.qid)
		if err != nil {
			return err
		}
		off := schedOffset(tx.ReadTx, t.qid, rec.UID)
		probe := off
		if off >= max {
			probe = max - 1
		}
		u, found, err := tx.UnitAt(rec.UID, t.qid, probe)
		if err != nil || !found {
			return err
		}
		cutoff, ok, err := tx.StoredAtAt(u.CommitLogOffset)
		if err != nil || !ok {
			return err
		}
		n, err := tx.TrimQueue(rec, t.qid, cutoff)
		if n > 0 {
			t.e.segsDue.Store(true) // the cleaner's next pass looks for droppable segments
		}
		return err
	})
	if err != nil && !errors.Is(err, core.ErrClosed) {
		t.e.log.Error().Err(err).Int("level", t.qid+1).Msg("schedule: trimming delivered messages failed")
	}
}

func schedOffsetKey(qid int) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(qid))
}

func schedOffsetValue(uid uint64, off int64) []byte {
	b := binary.BigEndian.AppendUint64(nil, uid)
	return binary.BigEndian.AppendUint64(b, uint64(off))
}

// schedOffset reads a level's persisted offset; an offset of another
// incarnation of the schedule topic (or none) is 0.
func schedOffset(tx store.ReadTx, qid int, uid uint64) int64 {
	v := tx.Bucket(bucketSchedOffsets).Get(schedOffsetKey(qid))
	if len(v) != 16 || binary.BigEndian.Uint64(v) != uid {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v[8:]))
}

func maxI64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
