package engine

import (
	"context"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Dead-letter queue access (SPEC §6, API "Dead letters"). %DLQ%<group> is
// append-only like every queue, so a redriven entry stays where it is and
// is marked in bucket dlq.redriven (DLQ topic uid + queue offset) in the
// transaction that puts its retry copy: an entry is redriven exactly once
// and is no longer listed.

// DLQ listing bounds: the default and largest page, and how many units one
// call scans past redriven entries before it answers with a cursor.
const (
	dlqDefaultLimit = 32
	dlqMaxLimit     = 1000
	dlqScanLimit    = 4096
)

// DLQMessages lists a group's dead letters oldest first, skipping redriven
// ones: up to limit messages from cursor ("" = the start), and the cursor
// of the next page ("" when the queue is exhausted). The messages are the
// stored dead-letter copies: UserID, UserTopic and ReconsumeTimes give the
// original id, topic and the failed delivery's count.
func (e *Engine) DLQMessages(group, cursor string, limit int) (msgs []*core.Message, next string, err error) {
	if !core.ValidName(group) {
		return nil, "", core.FieldError("group", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	from := int64(0)
	if cursor != "" {
		from, err = strconv.ParseInt(cursor, 10, 64)
		if err != nil || from < 0 {
			return nil, "", core.FieldError("cursor", "is not a cursor returned by this listing")
		}
	}
	if limit <= 0 {
		limit = dlqDefaultLimit
	}
	limit = min(limit, dlqMaxLimit)
	var corrupt []store.CorruptRecord
	err = e.view(func(tx store.ReadTx) error {
		corrupt = corrupt[:0]
		s, err := scanDLQ(tx, group, from, func() bool { return len(msgs) == limit },
			func(_ int64, m *core.Message) { msgs = append(msgs, m) },
			func(r store.CorruptRecord) { corrupt = append(corrupt, r) })
		if !s.done {
			next = strconv.FormatInt(s.at, 10)
		}
		return err
	})
	if err == nil {
		err = e.setAside(corrupt) // listed under %DLQ%<group>'s corrupt messages
	}
	if err != nil {
		return nil, "", err
	}
	return msgs, next, nil
}

// DLQDepth is how many dead letters of group are waiting (not redriven).
func (e *Engine) DLQDepth(group string) (n int64, err error) {
	err = e.view(func(tx store.ReadTx) error {
		rec, ok, err := tx.GetTopic(core.DLQTopic(group))
		if err != nil || !ok {
			return err
		}
		lo, hi, err := tx.QueueRange(rec.UID, 0)
		if err != nil {
			return err
		}
		n = hi - lo
		c := tx.Bucket(bucketRedriven).Cursor()
		end := redrivenKey(rec.UID, hi)
		for k, _ := c.Seek(redrivenKey(rec.UID, lo)); k != nil && string(k) < string(end); k, _ = c.Next() {
			n--
		}
		return nil
	})
	return n, err
}

// Redrive sends dead letters of group back through %RETRY%<group> (only
// this group sees them), at once and with reconsumeTimes reset to 0: those
// whose id (the original id) is in ids, or all when ids is empty. It
// returns how many went back. Entries already redriven are skipped; each
// chunk commits atomically with its marks, so a crash half-way leaves every
// entry either redriven once or still listed.
func (e *Engine) Redrive(ctx context.Context, group string, ids []string) (n int, err error) {
	moved, err := e.RedriveIDs(ctx, group, ids)
	return len(moved), err
}

// RedriveIDs is Redrive returning the original ids of the dead letters it
// sent back (the message timeline records REDRIVEN for those only); on an
// error, those of the chunks committed before it.
func (e *Engine) RedriveIDs(ctx context.Context, group string, ids []string) (moved []string, err error) {
	if !core.ValidName(group) {
		return nil, core.FieldError("group", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	e.sched.redriveMu.Lock()
	defer e.sched.redriveMu.Unlock()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	from := int64(0)
	for {
		var (
			uid   uint64
			ops   []putOp
			offs  []int64
			batch []string
			done  bool
		)
		now := time.Now().UTC()
		var corrupt []store.CorruptRecord
		err := e.view(func(tx store.ReadTx) error {
			corrupt = corrupt[:0]
			ops, offs, batch = ops[:0], offs[:0], batch[:0]
			size := 0
			s, err := scanDLQ(tx, group, from,
				func() bool { return len(ops) == moveBatch || size >= moveBatchBytes },
				func(off int64, m *core.Message) {
					if len(want) > 0 && !want[m.UserID()] && !want[m.ID] {
						return
					}
					cp := copyForGroup(m, now)
					size += len(cp.Body)
					ops = append(ops, putOp{topic: core.RetryTopic(group), queueID: 0, msg: cp})
					offs = append(offs, off)
					batch = append(batch, m.UserID())
				}, func(r store.CorruptRecord) { corrupt = append(corrupt, r) })
			uid, from, done = s.uid, s.at, s.done
			return err
		})
		if err == nil {
			err = e.setAside(corrupt)
		}
		if err != nil {
			return moved, err
		}
		if len(ops) > 0 {
			if err := e.commit(ctx, ops, redriveHook(uid, offs)); err != nil {
				return moved, err
			}
			moved = append(moved, batch...)
			e.sched.redriven.Add(int64(len(ops)))
		}
		if done {
			if len(moved) > 0 {
				e.log.Info().Str("group", group).Int("messages", len(moved)).Msg("dead letters redriven")
			}
			return moved, nil
		}
	}
}

// dlqScan is where a scanDLQ call stopped: the DLQ topic's uid, the
// offset to resume at, and whether the queue is exhausted (or absent).
type dlqScan struct {
	uid  uint64
	at   int64
	done bool
}

// scanDLQ walks group's %DLQ% queue from offset from, handing each waiting
// (not redriven) dead letter to visit, until full reports the caller's
// batch is full or dlqScanLimit entries were looked at, so that a long run
// of redriven entries cannot make one call unbounded. DLQMessages and
// Redrive both page through it. An entry whose message cannot be read and
// is not set aside yet goes to setAside, for the caller to record once the
// read is over (engine/corrupt.go).
func scanDLQ(tx store.ReadTx, group string, from int64, full func() bool,
	visit func(off int64, m *core.Message), setAside func(store.CorruptRecord)) (dlqScan, error) {
	rec, ok, err := tx.GetTopic(core.DLQTopic(group))
	if err != nil || !ok {
		return dlqScan{done: true}, err
	}
	lo, hi, err := tx.QueueRange(rec.UID, 0)
	if err != nil {
		return dlqScan{done: true}, err
	}
	marks := tx.Bucket(bucketRedriven)
	at, scanned := max(from, lo), 0
	err = tx.ScanQueue(rec.UID, 0, at, func(off int64, u store.Unit) bool {
		if off >= hi || full() || scanned == dlqScanLimit {
			return false
		}
		scanned++
		at = off + 1
		if marks.Get(redrivenKey(rec.UID, off)) != nil {
			return true
		}
		m, err := tx.MessageAt(u.CommitLogOffset)
		if err != nil || m == nil {
			if !tx.IsSetAside(u.CommitLogOffset) {
				setAside(tx.InspectCorrupt(u.CommitLogOffset, rec.UID, 0, off, err))
			}
			return true
		}
		visit(off, m)
		return true
	})
	return dlqScan{uid: rec.UID, at: at, done: at >= hi}, err
}

// redriveHook marks redriven entries in the transaction of their retry
// copies; an entry marked already fails the request (never twice).
func redriveHook(uid uint64, offs []int64) store.Hook {
	return func(tx store.Tx) error {
		b := tx.Bucket(bucketRedriven)
		for _, off := range offs {
			k := redrivenKey(uid, off)
			if b.Get(k) != nil {
				return core.Errorf(core.EConflict, "dead letter at offset %d was redriven concurrently", off)
			}
			if err := b.Put(k, []byte{}); err != nil {
				return err
			}
		}
		return nil
	}
}

func redrivenKey(uid uint64, off int64) []byte {
	k := binary.BigEndian.AppendUint64(nil, uid)
	return binary.BigEndian.AppendUint64(k, uint64(off))
}
