package jetstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Blocked ordering keys of ORDERLY groups (API.md "Blocked keys",
// docs/stuck-consumers.md) on JetStream. Every queue of an ORDERLY group
// is its own durable consumer with MaxAckPending 1, so a queue's head is
// the one message its consumer has out: the first message on the queue's
// subject past the consumer's ack floor. All state is in the KV bucket
// MQGATE_ORDERLY, so every instance answers the same:
//
//   - h.<group>.<topic>.<queue> (b.<group>.<consumerId>.<topic>.<queue>
//     for BROADCASTING): the queue's last failing head (headRecord),
//     written on the failure path only: a nack of an ORDERLY lease, and a
//     lease of an ORDERLY message delivered again (its lease ran out or it
//     was nacked). It holds while the consumer's ack floor is below its
//     sequence; an acked head's record is stale and ignored.
//   - r.<group> (r.<group>.<consumerId>): the group's rules (ruleSet): its
//     parked keys and pending skips. ORDERLY leases read it from the
//     bucket's leader once per receive, so a rule set through one
//     instance holds on every other at once.
//   - p.<group>.<hash of topic, queue, key>: one park (parkRecord) with
//     the ids it dead-lettered. It is the authority: a message is parked
//     only once its id is appended here (compare-and-set), so no dead
//     letter of a parked key goes unrecorded and resume, which first marks
//     the park "resuming", never races an instance that has not seen it.
//
// Skip and park dead-letter through the consumer's own path (deadLetter:
// the DLQ copy deduplicated by delivery, then +TERM on the message's ack
// subject), after a lease override that expires every handle of the head.

const orderlyBucket = "MQGATE_ORDERLY"

// headRecord is a queue's failing head.
type headRecord struct {
	Seq       uint64    `json:"seq"`
	ID        string    `json:"id"`
	Key       string    `json:"key"`
	Since     time.Time `json:"since"`     // its first failure in a row
	Delivered uint64    `json:"delivered"` // the latest delivery seen (JetStream's count)
	Attempts  int       `json:"attempts"`  // failed deliveries
	Reason    string    `json:"reason,omitempty"`
	Nacked    bool      `json:"nacked,omitempty"` // delivery Delivered was nacked
}

type parkRule struct {
	Topic string    `json:"topic"`
	Queue int       `json:"queue"`
	Key   string    `json:"key"`
	Since time.Time `json:"since"`
}

type skipRule struct {
	Topic string `json:"topic"`
	Queue int    `json:"queue"`
	Seq   uint64 `json:"seq"`
}

// ruleSet is a group's (or a BROADCASTING consumer's) rules.
type ruleSet struct {
	Parks []parkRule `json:"parks,omitempty"`
	Skips []skipRule `json:"skips,omitempty"`
	// Resets counts the offsets resets of its consumers: a reset moves
	// ack floors back, so growth-fence checks remembered before it no
	// longer hold (fence.go). Kept here because every ORDERLY lease call
	// reads this record from the leader anyway.
	Resets uint64 `json:"resets,omitempty"`
}

// maxSkipRules bounds the skips a rule set remembers (each matters only
// until the skipped message has left every stash).
const maxSkipRules = 256

type parkRecord struct {
	parkRule
	Resuming bool     `json:"resuming,omitempty"`
	IDs      []string `json:"ids"`
}

// maxParkedIDs bounds the ids one park records, as on embedded.
const maxParkedIDs = 100_000

func headKey(group, consumerID, topic string, q int) string {
	if consumerID != "" {
		return "b." + group + "." + consumerID + "." + topic + "." + strconv.Itoa(q)
	}
	return "h." + group + "." + topic + "." + strconv.Itoa(q)
}

func rulesKey(group, consumerID string) string {
	if consumerID != "" {
		return "r." + group + "." + consumerID
	}
	return "r." + group
}

func parkKey(group string, mq core.MessageQueue, key string) string {
	h := sha256.Sum256([]byte(mq.Topic + "\x00" + strconv.Itoa(mq.QueueID) + "\x00" + key))
	return "p." + group + "." + hex.EncodeToString(h[:20])
}

// kvRead reads key of the orderly bucket from its stream's leader: the
// value and its revision (0: absent or deleted).
func (b *Backend) kvRead(ctx context.Context, key string, into any) (uint64, error) {
	m, err := b.leaderMsg(ctx, "KV_"+orderlyBucket, msgGet{LastBySubj: "$KV." + orderlyBucket + "." + key})
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, mapErr(err)
	}
	if len(m.Data) == 0 { // a delete or purge marker
		return 0, nil
	}
	if err := json.Unmarshal(m.Data, into); err != nil {
		return 0, fmt.Errorf("jetstream: %s: %w", key, err)
	}
	return m.Sequence, nil
}

// kvWrite stores v under key if its revision is still rev (0: absent);
// false on a conflict (read again).
func (b *Backend) kvWrite(ctx context.Context, key string, rev uint64, v any) (bool, error) {
	raw, _ := json.Marshal(v)
	var err error
	if rev == 0 {
		_, err = b.orderly.Create(ctx, key, raw)
	} else {
		_, err = b.orderly.Update(ctx, key, raw, rev)
	}
	var ae *jsapi.APIError
	if errors.Is(err, jsapi.ErrKeyExists) || (errors.As(err, &ae) && (ae.ErrorCode == jsapi.JSErrCodeStreamWrongLastSequence ||
		ae.ErrorCode == jsapi.JSErrCodeStreamWrongLastSequenceConstant)) {
		return false, nil
	}
	return err == nil, mapErr(err)
}

// kvUpdate applies fn to key's value until the compare-and-set holds;
// fn answers false to write nothing.
func kvUpdate[T any](ctx context.Context, b *Backend, key string, fn func(v *T, found bool) bool) error {
	for range 20 {
		var v T
		rev, err := b.kvRead(ctx, key, &v)
		if err != nil {
			return err
		}
		if !fn(&v, rev != 0) {
			return nil
		}
		ok, err := b.kvWrite(ctx, key, rev, v)
		if err != nil || ok {
			return err
		}
	}
	return core.Errorf(core.EConflict, "%s: too many concurrent changes; retry", key)
}

func (b *Backend) createOrderlyBucket(ctx context.Context) error {
	var err error
	b.orderly, err = b.js.CreateOrUpdateKeyValue(ctx, jsapi.KeyValueConfig{
		Bucket: orderlyBucket, Replicas: b.opts.Replicas, History: 1, Storage: jsapi.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("jetstream: orderly bucket: %w", err)
	}
	return nil
}

// orderlyGroup loads group and checks it is ORDERLY; consumerID is
// required (and checked) for BROADCASTING and dropped otherwise.
func (b *Backend) orderlyGroup(ctx context.Context, group, consumerID string) (core.Group, string, error) {
	g, err := b.Group(ctx, group)
	if err != nil {
		return g, "", err
	}
	if g.ConsumeMode != core.Orderly {
		return g, "", core.Errorf(core.EConflict, "group %q is not ORDERLY: it has no blocked keys", group)
	}
	if g.MessageModel != core.Broadcasting {
		return g, "", nil
	}
	if consumerID == "" {
		return g, "", core.FieldError("consumerId", "is required for a BROADCASTING group (each consumer has its own blocked keys)")
	}
	if !core.ValidName(consumerID) {
		return g, "", core.FieldError("consumerId", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	return g, consumerID, nil
}

// queueHead is a queue's head as its consumer sees it.
type queueHead struct {
	ref   consumerRef
	floor uint64 // the consumer's ack floor (stream sequence)
	out   bool   // the consumer has a message out (delivered or waiting to be redelivered)
	rec   headRecord
	ok    bool // rec holds: a failing head not yet settled
}

// failedHeads lists the failing heads of (g, consumerID)'s queues.
func (b *Backend) failedHeads(ctx context.Context, g core.Group, consumerID string) ([]queueHead, error) {
	refs, err := b.subscribedConsumers(g, consumerID)
	if err != nil {
		return nil, err
	}
	var out []queueHead
	for _, ref := range refs {
		var rec headRecord
		rev, err := b.kvRead(ctx, headKey(g.Name, consumerID, ref.topic, ref.queue), &rec)
		if err != nil {
			return nil, err
		}
		if rev == 0 {
			continue
		}
		h, err := b.head(ctx, ref)
		if err != nil {
			return nil, err
		}
		h.rec = rec
		if !h.out || rec.Seq <= h.floor {
			continue // settled since
		}
		// The record names the consumer's head now (not a message of
		// a topic deleted and made again, or of a consumer reset).
		if seq, id, err := b.headMsg(ctx, g.Name, h); err != nil {
			return nil, err
		} else if seq != rec.Seq || id != rec.ID {
			continue
		}
		h.ok = true
		out = append(out, h)
	}
	return out, nil
}

// headMsg is the sequence and id of the first message of h's consumer
// past its ack floor: on the queue's subject, and for queue 0 also on the
// group's redrive subject (0, "": none).
func (b *Backend) headMsg(ctx context.Context, group string, h queueHead) (uint64, string, error) {
	subjects := []string{queueSubject(h.ref.topic, h.ref.queue)}
	if h.ref.queue == 0 {
		subjects = append(subjects, redriveSubject(h.ref.topic, group))
	}
	var seq uint64
	var id string
	for _, subj := range subjects {
		m, err := b.leaderMsg(ctx, h.ref.stream, msgGet{Seq: h.floor + 1, NextBySubj: subj})
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			continue
		} else if err != nil {
			return 0, "", mapErr(err)
		}
		if seq == 0 || m.Sequence < seq {
			seq = m.Sequence
			id = decodeMessage(m.Subject, m.Header, m.Data, m.Sequence, m.Time).UserID()
		}
	}
	return seq, id, nil
}

// head reads ref's consumer state.
func (b *Backend) head(ctx context.Context, ref consumerRef) (queueHead, error) {
	h := queueHead{ref: ref}
	c, err := b.consumer(ctx, ref.stream, ref.name)
	if errors.Is(err, jsapi.ErrConsumerNotFound) {
		return h, nil
	} else if err != nil {
		return h, mapErr(err)
	}
	ci := c.CachedInfo()
	h.floor, h.out = ci.AckFloor.Stream, ci.NumAckPending > 0
	return h, nil
}

// Blocked lists group's blocked queues and parked keys, by topic, queue
// and key (consumerID: a BROADCASTING group's consumer), as embedded does
// (gateway.Embedded.Blocked).
func (b *Backend) Blocked(group, consumerID string) ([]core.BlockedEntry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*b.opts.RequestTimeout)
	defer cancel()
	g, consumerID, err := b.orderlyGroup(ctx, group, consumerID)
	if err != nil {
		return nil, err
	}
	heads, err := b.failedHeads(ctx, g, consumerID)
	if err != nil {
		return nil, err
	}
	var out []core.BlockedEntry
	for _, h := range heads {
		out = append(out, core.BlockedEntry{Queue: core.MessageQueue{Topic: h.ref.topic, QueueID: h.ref.queue},
			ShardingKey: h.rec.Key, MessageID: h.rec.ID, Since: h.rec.Since, Attempts: h.rec.Attempts,
			LastReason: h.rec.Reason, State: core.StateBlocked})
	}
	if consumerID == "" {
		var rs ruleSet
		if _, err := b.kvRead(ctx, rulesKey(group, ""), &rs); err != nil {
			return nil, err
		}
		for _, p := range rs.Parks {
			mq := core.MessageQueue{Topic: p.Topic, QueueID: p.Queue}
			var pr parkRecord
			rev, err := b.kvRead(ctx, parkKey(group, mq, p.Key), &pr)
			if err != nil {
				return nil, err
			}
			if rev == 0 {
				continue // a park whose record was never written (ParkKey failed half-way)
			}
			en := core.BlockedEntry{Queue: mq, ShardingKey: p.Key, Since: pr.Since, Attempts: len(pr.IDs), State: core.StateParked}
			if len(pr.IDs) > 0 {
				en.MessageID = pr.IDs[0]
			}
			out = append(out, en)
		}
	}
	slices.SortFunc(out, core.CompareBlocked)
	return out, nil
}

// skipReason is the lastReason of a skipped head's dead letter, as on
// embedded.
func skipReason(last string) string {
	if last == "" {
		return "skipped by operator"
	}
	return core.ClipReason("skipped by operator; last: " + last)
}

// SkipBlocked sends the failed head of (mq, key) to the DLQ and lets the
// queue continue; BROADCASTING: drops it for consumerID (no DLQ copy).
// ENotFound when that queue is not blocked on key.
func (b *Backend) SkipBlocked(group, consumerID string, mq core.MessageQueue, key string) (core.BlockedEntry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*b.opts.RequestTimeout)
	defer cancel()
	g, consumerID, err := b.orderlyGroup(ctx, group, consumerID)
	if err != nil {
		return core.BlockedEntry{}, err
	}
	heads, err := b.failedHeads(ctx, g, consumerID)
	if err != nil {
		return core.BlockedEntry{}, err
	}
	i := slices.IndexFunc(heads, func(h queueHead) bool {
		return h.ref.topic == mq.Topic && h.ref.queue == mq.QueueID && h.rec.Key == key
	})
	if i < 0 {
		return core.BlockedEntry{}, core.Errorf(core.ENotFound, "queue %s/%d is not blocked on key %q", mq.Topic, mq.QueueID, key)
	}
	h := heads[i]
	// The rule first: an instance that pulled the head again and has not
	// leased it yet drops it instead of handing it out.
	err = kvUpdate(ctx, b, rulesKey(group, consumerID), func(rs *ruleSet, _ bool) bool {
		rs.Skips = append(rs.Skips, skipRule{Topic: mq.Topic, Queue: mq.QueueID, Seq: h.rec.Seq})
		if n := len(rs.Skips); n > maxSkipRules {
			rs.Skips = rs.Skips[n-maxSkipRules:]
		}
		return true
	})
	if err != nil {
		return core.BlockedEntry{}, err
	}
	reason := skipReason(h.rec.Reason)
	if consumerID != "" {
		reason = "" // BROADCASTING: dropped, no copy
	}
	if err := b.endHead(ctx, group, consumerID, h.ref, h.rec.Seq, h.rec.Attempts, reason); err != nil {
		return core.BlockedEntry{}, err
	}
	b.recordID(group, h.rec.ID, tlEvent{Type: core.EventSkipped})
	if consumerID == "" {
		b.recordID(group, h.rec.ID, tlEvent{Type: core.EventDeadLettered})
	}
	return core.BlockedEntry{Queue: mq, ShardingKey: key, MessageID: h.rec.ID, Since: h.rec.Since,
		Attempts: h.rec.Attempts, LastReason: h.rec.Reason, State: core.StateSkipped}, nil
}

// ackSubject is an ack subject for message seq of ref's consumer: the
// server settles a pending message by stream sequence (the delivery
// numbers are its own), so the head can be ended without its delivery's
// reply subject.
func ackSubject(ref consumerRef, seq uint64) string {
	return fmt.Sprintf("$JS.ACK.%s.%s.1.%d.1.0.0", ref.stream, ref.name, seq)
}

// endedDelivery is the delivery count of the override endHead writes:
// past any real delivery, so every handle of the message is expired.
const endedDelivery = 1 << 40

// endHead ends message seq of ref's consumer now, whoever holds it:
// every handle of it answers expired from here on (an override past any
// delivery), then it is dead-lettered with reason (CLUSTERING) or dropped
// (BROADCASTING: consumerID set).
func (b *Backend) endHead(ctx context.Context, group, consumerID string, ref consumerRef, seq uint64, times int, reason string) error {
	reply := ackSubject(ref, seq)
	meta, _ := parseAck(reply)
	l := lease{sseq: seq, delivered: 1, reply: reply, meta: meta, group: group}
	if err := b.putOverride(ctx, l, override{delivered: endedDelivery, nacked: true, deadline: time.Now()}); err != nil {
		return err
	}
	if consumerID != "" {
		if errs := b.requestAll(ctx, []string{reply}, []byte("+TERM skipped")); errs[0] != nil {
			return errs[0]
		}
		return nil
	}
	return b.deadLetterLease(ctx, group, l, times, reason)
}

// parkableGroup is group when its keys can be parked and resumed, or why
// not: it is unknown, BROADCASTING ORDERLY, or not ORDERLY.
func (b *Backend) parkableGroup(ctx context.Context, group string) (core.Group, error) {
	g, err := b.Group(ctx, group)
	if err != nil {
		return core.Group{}, err
	}
	if g.ConsumeMode == core.Orderly && g.MessageModel == core.Broadcasting {
		return core.Group{}, errBroadcastPark(group)
	}
	if _, _, err := b.orderlyGroup(ctx, group, ""); err != nil {
		return core.Group{}, err
	}
	return g, nil
}

// ParkKey sets (mq, key) aside: its messages go to the DLQ as they reach
// the head of the queue, recorded for resume, and the other keys continue.
// CLUSTERING only.
func (b *Backend) ParkKey(group, consumerID string, mq core.MessageQueue, key string) (core.BlockedEntry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*b.opts.RequestTimeout)
	defer cancel()
	g, err := b.parkableGroup(ctx, group)
	if err != nil {
		return core.BlockedEntry{}, err
	}
	since := time.Now().UTC()
	rule := parkRule{Topic: mq.Topic, Queue: mq.QueueID, Key: key, Since: since}
	// The record first, then the rule that makes leases look at it.
	var pr parkRecord
	err = kvUpdate(ctx, b, parkKey(group, mq, key), func(p *parkRecord, found bool) bool {
		if found && !p.Resuming {
			pr = *p
			return false // parked already
		}
		*p = parkRecord{parkRule: rule, IDs: []string{}}
		pr = *p
		return true
	})
	if err != nil {
		return core.BlockedEntry{}, err
	}
	err = kvUpdate(ctx, b, rulesKey(group, ""), func(rs *ruleSet, _ bool) bool {
		if slices.ContainsFunc(rs.Parks, func(p parkRule) bool { return p.Topic == mq.Topic && p.Queue == mq.QueueID && p.Key == key }) {
			return false
		}
		rs.Parks = append(rs.Parks, pr.parkRule)
		return true
	})
	if err != nil {
		return core.BlockedEntry{}, err
	}
	// The queue's head, if it is of this key (leased, waiting out a
	// nack, or in some instance's stash), goes now.
	if err := b.parkHead(ctx, g, mq, key); err != nil {
		return core.BlockedEntry{}, err
	}
	if _, err := b.kvRead(ctx, parkKey(group, mq, key), &pr); err != nil {
		return core.BlockedEntry{}, err
	}
	en := core.BlockedEntry{Queue: mq, ShardingKey: key, Since: pr.Since, Attempts: len(pr.IDs), State: core.StateParked}
	if len(pr.IDs) > 0 {
		en.MessageID = pr.IDs[0]
	}
	return en, nil
}

// parkHead dead-letters the head of mq's consumer when it is of key.
func (b *Backend) parkHead(ctx context.Context, g core.Group, mq core.MessageQueue, key string) error {
	t, err := b.cachedTopic(mq.Topic)
	if err != nil || mq.QueueID < 0 || mq.QueueID >= t.Queues {
		return nil // nothing to catch now; later messages are caught at lease
	}
	ref := b.consumersOf(g, "", t)[mq.QueueID]
	h, err := b.head(ctx, ref)
	if err != nil || !h.out {
		return err
	}
	m, err := b.leaderMsg(ctx, ref.stream, msgGet{Seq: h.floor + 1, NextBySubj: queueSubject(mq.Topic, mq.QueueID)})
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		return nil
	} else if err != nil {
		return mapErr(err)
	}
	if m.Header.Get(hSharding) != key {
		return nil
	}
	if !b.recordParked(ctx, g.Name, mq, key, m.Header.Get(hID)) {
		return nil
	}
	var rec headRecord
	b.kvRead(ctx, headKey(g.Name, "", mq.Topic, mq.QueueID), &rec) //nolint:errcheck // only the attempt count
	times := 0
	if rec.Seq == m.Sequence {
		times = rec.Attempts
	}
	if err := b.endHead(ctx, g.Name, "", ref, m.Sequence, times, ""); err != nil {
		return err
	}
	b.recordID(g.Name, m.Header.Get(hID), tlEvent{Type: core.EventDeadLettered})
	return nil
}

// recordParked appends id to the park of (mq, key) and reports whether
// the message is to be dead-lettered (the park holds and is not being
// resumed).
func (b *Backend) recordParked(ctx context.Context, group string, mq core.MessageQueue, key, id string) bool {
	parked := false
	err := kvUpdate(ctx, b, parkKey(group, mq, key), func(p *parkRecord, found bool) bool {
		parked = found && !p.Resuming
		if !parked || len(p.IDs) >= maxParkedIDs || slices.Contains(p.IDs, id) {
			return false
		}
		p.IDs = append(p.IDs, id)
		return true
	})
	if err != nil {
		b.log.Warn().Err(err).Str("group", group).Str("shardingKey", key).Msg("recording a parked message; it is delivered instead")
		return false
	}
	return parked
}

// errBroadcastPark refuses park and resume on BROADCASTING groups, with
// embedded's reason.
func errBroadcastPark(group string) error {
	return core.Errorf(core.EConflict, "group %q is BROADCASTING: a key cannot be parked, because a broadcast "+
		"failure is dropped for its consumer (RocketMQ), with no retry or dead-letter copy to release later; "+
		"skip the blocked head instead (it is dropped for that consumer only)", group)
}

// ResumeKey ends the park of (mq, key): it is marked resuming (leases
// stop catching the key), its ids are handed to release (the caller
// redrives them), and only then is it forgotten. When release fails the
// park holds again and the error is returned; a crash in between leaves
// it listed as parked, and a second resume ends it. CLUSTERING only.
func (b *Backend) ResumeKey(group, consumerID string, mq core.MessageQueue, key string, release func(ids []string) error) (core.BlockedEntry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*b.opts.RequestTimeout)
	defer cancel()
	_, err := b.parkableGroup(ctx, group)
	if err != nil {
		return core.BlockedEntry{}, err
	}
	pk := parkKey(group, mq, key)
	var pr parkRecord
	found := false
	err = kvUpdate(ctx, b, pk, func(p *parkRecord, ok bool) bool {
		found, pr = ok, *p
		if !ok || p.Resuming {
			return false
		}
		p.Resuming = true
		return true
	})
	if err != nil {
		return core.BlockedEntry{}, err
	}
	if !found {
		return core.BlockedEntry{}, core.Errorf(core.ENotFound, "key %q of queue %s/%d is not parked", key, mq.Topic, mq.QueueID)
	}
	ids := slices.Clone(pr.IDs)
	if release != nil && len(ids) > 0 {
		if err := release(ids); err != nil {
			_ = kvUpdate(ctx, b, pk, func(p *parkRecord, ok bool) bool {
				if !ok {
					return false
				}
				p.Resuming = false
				return true
			})
			return core.BlockedEntry{}, err
		}
	}
	err = kvUpdate(ctx, b, rulesKey(group, ""), func(rs *ruleSet, _ bool) bool {
		n := len(rs.Parks)
		rs.Parks = slices.DeleteFunc(rs.Parks, func(p parkRule) bool { return p.Topic == mq.Topic && p.Queue == mq.QueueID && p.Key == key })
		return len(rs.Parks) != n
	})
	if err == nil {
		err = mapErr(b.orderly.Delete(ctx, pk))
	}
	if err != nil {
		// Released: the key is still listed as parked, with nothing of it
		// left to release unless it caught more; resume again.
		b.log.Warn().Err(err).Str("group", group).Str("shardingKey", key).Msg("resumed key still stored as parked")
	}
	en := core.BlockedEntry{Queue: mq, ShardingKey: key, Since: pr.Since, Attempts: len(ids), State: core.StateResumed, ParkedIDs: ids}
	if len(ids) > 0 {
		en.MessageID = ids[0]
	}
	return en, nil
}

// orderlyRules is what ORDERLY leases check: the rules of (group,
// consumerID), read from the bucket's leader (nil: unreadable; an absent
// record is an empty set).
func (b *Backend) orderlyRules(ctx context.Context, group, consumerID string) (*ruleSet, error) {
	var rs ruleSet
	if _, err := b.kvRead(ctx, rulesKey(group, consumerID), &rs); err != nil {
		return nil, err
	}
	return &rs, nil
}

// caught reports whether an ORDERLY delivery was taken by a rule: a
// skipped head pulled again is dropped (ended again: idempotent), a
// parked key's message is recorded and dead-lettered. Only messages on
// the queue's own subject are caught: a redriven copy (a resume's
// release, a redrive) is delivered, as on embedded, where it comes
// through %RETRY%<group>.
func (b *Backend) caught(ctx context.Context, g core.Group, consumerID string, rs *ruleSet, p pulled, meta ackMeta, m *core.Message) bool {
	if rs == nil || p.ref.queue < 0 {
		return false
	}
	if _, q := subjectQueue(p.msg.Subject); q != p.ref.queue {
		return false
	}
	for _, s := range rs.Skips {
		if s.Topic == p.ref.topic && s.Queue == p.ref.queue && s.Seq == meta.sseq {
			if err := b.endHead(ctx, g.Name, consumerID, p.ref, meta.sseq, m.ReconsumeTimes, skipReason("")); err != nil {
				b.log.Warn().Err(err).Str("group", g.Name).Msg("ending a skipped head again")
			}
			return true
		}
	}
	if consumerID != "" {
		return false
	}
	for _, pk := range rs.Parks {
		if pk.Topic != p.ref.topic || pk.Queue != p.ref.queue || pk.Key != m.ShardingKey {
			continue
		}
		mq := core.MessageQueue{Topic: pk.Topic, QueueID: pk.Queue}
		if !b.recordParked(ctx, g.Name, mq, pk.Key, m.UserID()) {
			return false
		}
		if err := b.deadLetter(ctx, g.Name, p.msg, meta, m.ReconsumeTimes, ""); err != nil {
			b.log.Warn().Err(err).Str("group", g.Name).Msg("dead-lettering a parked message; retried at redelivery")
		} else {
			b.recordID(g.Name, m.UserID(), tlEvent{Type: core.EventDeadLettered})
		}
		return true
	}
	return false
}

// noteFailure records an ORDERLY head's failure: a nack of its delivery
// (nacked, with the nack's reason) or a delivery after a failed one
// (delivered > 1 once fence returns are discounted; times = its
// reconsumeTimes). Failure path only: one leader read and one write.
func (b *Backend) noteFailure(ctx context.Context, group, consumerID string, ref consumerRef, m *core.Message, delivered uint64, times int, nacked bool, reason string) {
	key := headKey(group, consumerID, ref.topic, ref.queue)
	err := kvUpdate(ctx, b, key, func(r *headRecord, found bool) bool {
		if !found || r.Seq != uint64(m.QueueOffset) {
			*r = headRecord{Seq: uint64(m.QueueOffset), ID: m.UserID(), Key: m.ShardingKey, Since: time.Now().UTC()}
		}
		if nacked {
			r.Attempts = max(r.Attempts, times+1)
			r.Reason, r.Nacked = reason, true
		} else {
			if !(r.Nacked && r.Delivered+1 == delivered) {
				r.Reason = expiredReason // the delivery before ran out
			}
			r.Attempts = max(r.Attempts, times)
			r.Nacked = false
		}
		r.Delivered = delivered
		return true
	})
	if err != nil {
		b.log.Warn().Err(err).Str("group", group).Msg("recording a failing ORDERLY head")
	}
}

// forgetOrderly drops a deleted group's records and rules.
func (b *Backend) forgetOrderly(ctx context.Context, group string) {
	lister, err := b.orderly.ListKeysFiltered(ctx, "h."+group+".>", "b."+group+".>", "r."+group, "r."+group+".>", "p."+group+".>")
	if err != nil {
		return
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	for _, k := range keys {
		_ = b.orderly.Purge(ctx, k)
	}
}

// orderlyGateState is what one lease call read for its ORDERLY messages.
type orderlyGateState struct {
	read  bool
	rules *ruleSet    // nil when unreadable
	views *topicViews // topics read again for the fence checks (fence.go)
}

// orderlyGate runs the checks of an ORDERLY delivery before it is leased:
// a rule takes it (caught), a growth fence holds it back (fenced), and a
// delivery after a failure is recorded (the queue is blocked). It reports
// whether the message was taken or held.
func (b *Backend) orderlyGate(ctx context.Context, g core.Group, consumerID string, st *orderlyGateState, p pulled, meta ackMeta, m *core.Message, returns int) bool {
	if !st.read {
		rs, err := b.orderlyRules(ctx, g.Name, consumerID)
		if err != nil {
			b.log.Warn().Err(err).Str("group", g.Name).Msg("reading parked keys and skips; leasing without them")
		}
		st.read, st.rules = true, rs
	}
	if b.caught(ctx, g, consumerID, st.rules, p, meta, m) {
		return true
	}
	if b.fenced(ctx, g, consumerID, st.rules, st.views, p, m) {
		b.holdAtFence(ctx, p, meta, returns)
		return true
	}
	if m.ReconsumeTimes > 0 {
		b.noteFailure(ctx, g.Name, consumerID, p.ref, m, meta.delivered, m.ReconsumeTimes, false, "")
	}
	return false
}

// noteNack records the nack of an ORDERLY lease (its consumer is one
// queue's: <group>[~b~<consumerId>]~q<queue>) as its queue's failing head.
func (b *Backend) noteNack(ctx context.Context, l lease, times int, reason string) {
	q, ok := consumerQueue(l.meta.consumer)
	if !ok {
		return
	}
	raw, err := b.leaderMsg(ctx, l.meta.stream, msgGet{Seq: l.sseq})
	if err != nil {
		return // gone: nothing blocks
	}
	topic := strings.TrimPrefix(l.meta.stream, "MQ_")
	m := decodeMessage(raw.Subject, raw.Header, raw.Data, raw.Sequence, raw.Time)
	ref := consumerRef{topic, l.meta.stream, l.meta.consumer, q}
	b.noteFailure(ctx, l.group, l.consumerID, ref, m, l.delivered, times, true, reason)
}
