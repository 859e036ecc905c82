package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// Idempotent publish (Idempotency-Key, a batch entry's deduplicationId).
//
// A publish carrying core.PutMessage.DedupID leaves a record, keyed by
// topic and id, written by a hook in the same transaction as the message:
// the original result (message id, queue, offset or due time), the
// request's hash, the topic incarnation and the expiry (now + window). A
// repeat within the window finds the record and answers it (Replayed)
// without storing anything; a repeat with another hash is refused.
//
// The authoritative check is check-then-insert inside the writer's
// transaction (dedupHook): two racing publishes of one id never both
// store. Put first looks records up in a read transaction, so a plain
// retry never reaches the writer; only a true race makes the hook fail its
// request (errDedupRace, the group is retried without it) and Put look
// again, by then seeing the winner's record.
//
// Expiry is exact at lookup (an expired record counts as absent); disk is
// reclaimed by the retention cleaner's pass (sweepDedup) through a
// time-ordered index, so nothing runs while idle.
var (
	// bucketDedup: topic, 0x00, id -> dedupRecord.
	bucketDedup = store.Register("core/engine", "dedup.records")
	// bucketDedupExp: expiry unix ms(8), topic, 0x00, id -> empty.
	bucketDedupExp = store.Register("core/engine", "dedup.expiry")
)

// DefaultDedupWindow is how long an idempotency key is remembered.
const DefaultDedupWindow = 5 * time.Minute

// maxDedupAttempts bounds Put's retries after losing a race: the second
// look normally sees the winner.
const maxDedupAttempts = 5

// errDedupRace fails a request whose id was stored by another request
// after Put looked it up; Put looks again.
var errDedupRace = errors.New("idempotency key stored concurrently")

// dedupRecord is the stored original result of an idempotent publish.
//
//	[0]      version 1
//	[1:9]    expires, unix ms
//	[9:17]   topic uid
//	[17:49]  request hash
//	[49:53]  queue id (int32; -1 for a delayed message)
//	[53:61]  queue offset
//	[61:69]  storedAt, unix ms
//	[69:77]  deliverAt, unix ms (0: not delayed)
//	[77:]    message id
type dedupRecord struct {
	expires   int64
	uid       uint64
	hash      [32]byte
	queueID   int
	offset    int64
	storedAt  int64
	deliverAt int64
	id        string
}

const dedupHdr = 77

func (r *dedupRecord) encode() []byte {
	b := make([]byte, dedupHdr, dedupHdr+len(r.id))
	b[0] = 1
	binary.BigEndian.PutUint64(b[1:], uint64(r.expires))
	binary.BigEndian.PutUint64(b[9:], r.uid)
	copy(b[17:49], r.hash[:])
	binary.BigEndian.PutUint32(b[49:], uint32(int32(r.queueID)))
	binary.BigEndian.PutUint64(b[53:], uint64(r.offset))
	binary.BigEndian.PutUint64(b[61:], uint64(r.storedAt))
	binary.BigEndian.PutUint64(b[69:], uint64(r.deliverAt))
	return append(b, r.id...)
}

func decodeDedup(b []byte) (dedupRecord, bool) {
	if len(b) < dedupHdr || b[0] != 1 {
		return dedupRecord{}, false
	}
	r := dedupRecord{
		expires:   int64(binary.BigEndian.Uint64(b[1:])),
		uid:       binary.BigEndian.Uint64(b[9:]),
		queueID:   int(int32(binary.BigEndian.Uint32(b[49:]))),
		offset:    int64(binary.BigEndian.Uint64(b[53:])),
		storedAt:  int64(binary.BigEndian.Uint64(b[61:])),
		deliverAt: int64(binary.BigEndian.Uint64(b[69:])),
		id:        string(b[dedupHdr:]),
	}
	copy(r.hash[:], b[17:49])
	return r, true
}

// result is the original PutResult, marked replayed.
func (r *dedupRecord) result(topic string) core.PutResult {
	out := core.PutResult{MessageID: r.id, Topic: topic, QueueID: r.queueID, QueueOffset: r.offset,
		StoredAt: time.UnixMilli(r.storedAt).UTC(), Replayed: true}
	if r.deliverAt != 0 {
		out.QueueID, out.QueueOffset = -1, -1
		out.DeliverAt = time.UnixMilli(r.deliverAt).UTC()
	}
	return out
}

func dedupKey(topic, id string) []byte {
	k := make([]byte, 0, len(topic)+1+len(id))
	k = append(k, topic...)
	k = append(k, 0)
	return append(k, id...)
}

// lookupDedup reads the live record of (topic, id) for incarnation uid:
// absent, expired or of another incarnation count as none.
func lookupDedup(tx store.ReadTx, topic string, uid uint64, id string, nowMs int64) (dedupRecord, bool) {
	return lookupDedupIn(tx.Bucket(bucketDedup), topic, uid, id, nowMs)
}

func lookupDedupIn(b *store.Bucket, topic string, uid uint64, id string, nowMs int64) (dedupRecord, bool) {
	r, ok := decodeDedup(b.Get(dedupKey(topic, id)))
	if !ok || r.uid != uid || r.expires <= nowMs {
		return dedupRecord{}, false
	}
	return r, true
}

func mismatch(topic, id string) error {
	return core.Errorf(core.EUnprocessable,
		"idempotency key %q was used on topic %q with a different request within the dedup window", id, topic)
}

// dedupPlan splits a Put into the messages to store (fresh, indexes into
// the Put's messages) and the answers already known: replays of stored
// records, and later entries of the same batch repeating an earlier id
// (alias[i] = the earlier index).
type dedupPlan struct {
	fresh   []int
	replay  map[int]core.PutResult
	alias   map[int]int
	touched bool // some message carries a DedupID
}

// planDedup looks up every DedupID of msgs (one read transaction).
func (e *Engine) planDedup(topic string, uid uint64, msgs []core.PutMessage, now time.Time) (*dedupPlan, error) {
	p := &dedupPlan{}
	for i := range msgs {
		if msgs[i].DedupID != "" {
			p.touched = true
			break
		}
	}
	if !p.touched {
		return p, nil
	}
	p.replay, p.alias = map[int]core.PutResult{}, map[int]int{}
	first := map[string]int{}
	nowMs := now.UnixMilli()
	err := e.view(func(tx store.ReadTx) error {
		// A record found answers the publish (a replay, or a mismatch),
		// so it must be durable first: a retry racing its original is
		// not told "stored" before the original is (the read barrier,
		// core/store/durable.go). A record not found answers nothing:
		// the group commit looks the key up again (dedupHook). So only
		// a find waits, and a fresh key never waits for others' syncs.
		b := tx.BucketUnsynced(bucketDedup)
		for i := range msgs {
			m := &msgs[i]
			if m.DedupID == "" {
				p.fresh = append(p.fresh, i)
				continue
			}
			if j, seen := first[m.DedupID]; seen {
				if msgs[j].DedupHash != m.DedupHash {
					return mismatch(topic, m.DedupID)
				}
				p.alias[i] = j
				continue
			}
			first[m.DedupID] = i
			if r, ok := lookupDedupIn(b, topic, uid, m.DedupID, nowMs); ok {
				tx.AwaitDurable(bucketDedup)
				if r.hash != m.DedupHash {
					return mismatch(topic, m.DedupID)
				}
				p.replay[i] = r.result(topic)
				continue
			}
			p.fresh = append(p.fresh, i)
		}
		return nil
	})
	return p, err
}

// dedupHook records the results of the stored messages that carry a
// DedupID, checking in the same transaction that no other request stored
// the id meanwhile. msgs and ops are the fresh messages and their ops (in
// the same order, before planDelays dropped timer ops); due[i] is message
// i's due time (0: not delayed).
func (e *Engine) dedupHook(topic string, uid uint64, msgs []core.PutMessage, ids []string, due []int64, now time.Time) store.Hook {
	expires := now.Add(e.opts.DedupWindow).UnixMilli()
	nowMs := now.UnixMilli()
	return func(tx store.Tx) error {
		recs, exp := tx.Bucket(bucketDedup), tx.Bucket(bucketDedupExp)
		for i := range msgs {
			m := &msgs[i]
			if m.DedupID == "" {
				continue
			}
			if r, ok := lookupDedup(tx.ReadTx, topic, uid, m.DedupID, nowMs); ok {
				if r.hash != m.DedupHash {
					return mismatch(topic, m.DedupID)
				}
				return errDedupRace
			}
			r := dedupRecord{expires: expires, uid: uid, hash: m.DedupHash, id: ids[i], queueID: -1, offset: -1}
			if due != nil && due[i] != 0 {
				r.deliverAt = due[i]
				r.storedAt = nowMs
			} else {
				qid, off, at, ok, err := tx.PositionOfID(ids[i])
				if err != nil {
					return err
				}
				if !ok {
					return core.Errorf(core.EInternal, "message %s not found in its own transaction", ids[i])
				}
				r.queueID, r.offset, r.storedAt = qid, off, at
			}
			key := dedupKey(topic, m.DedupID)
			if err := recs.Put(key, r.encode()); err != nil {
				return err
			}
			ek := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(key)), uint64(expires))
			if err := exp.Put(append(ek, key...), nil); err != nil {
				return err
			}
		}
		return nil
	}
}

// dedupSweepChunk bounds one sweep transaction, so publishers wait little.
const dedupSweepChunk = 1000

// sweepDedup removes expired records (called by the retention cleaner's
// pass): the expiry index is time-ordered, so the pass reads only what
// it removes. A record rewritten later (its id reused after expiry) has a
// newer expiry and is kept.
func (e *Engine) sweepDedup(now time.Time) (removed int, err error) {
	nowMs := uint64(now.UnixMilli())
	// Look first: an idle server (nothing expired) takes no write
	// transaction, so no fsync.
	due := false
	if err := e.view(func(tx store.ReadTx) error {
		k, _ := tx.Bucket(bucketDedupExp).Cursor().First()
		due = len(k) >= 8 && binary.BigEndian.Uint64(k) <= nowMs
		return nil
	}); err != nil || !due {
		return 0, err
	}
	for more := true; more; {
		select {
		case <-e.closing:
			return removed, nil
		default:
		}
		more = false
		err := e.update(func(tx store.Tx) error {
			recs, exp := tx.Bucket(bucketDedup), tx.Bucket(bucketDedupExp)
			c := exp.Cursor()
			n := 0
			for k, _ := c.First(); k != nil; k, _ = c.First() {
				if len(k) < 8 || binary.BigEndian.Uint64(k) > nowMs {
					return nil
				}
				if n == dedupSweepChunk {
					more = true
					return nil
				}
				key := k[8:]
				if r, ok := decodeDedup(recs.Get(key)); !ok || uint64(r.expires) <= nowMs {
					if err := recs.Delete(bytes.Clone(key)); err != nil {
						return err
					}
				}
				if err := c.Delete(); err != nil {
					return err
				}
				n++
				removed++
			}
			return nil
		})
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}
