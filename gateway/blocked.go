package gateway

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/groups"
)

// Blocked ordering keys of ORDERLY groups (API.md "Blocked keys"): a
// queue is blocked while its head message has failed (nacked or expired:
// reconsumeTimes > 0, or suspended). RocketMQ blocks per queue; the entry
// names the head message's shardingKey.
//
// Skip and park both go through the consumer's own dead-letter path: the
// gateway answers the head with nack delay level -1 (dead-letter now), so
// the DLQ copy and the original's settlement commit in one transaction
// (SettlingSendBack) and the queue moves on.
//
//   - skip: the blocked head goes to the DLQ once.
//   - park: every message of (topic, queueId, shardingKey) that reaches the
//     head of its queue goes to the DLQ, in queue order, while the other
//     keys continue; the ids are recorded. resume stops that and the API
//     redrives the recorded ids (in DLQ order, through %RETRY%<group>'s one
//     queue, so they come back in order; messages of the key published after
//     the resume may be consumed before the released ones finish).
//
// A rule applies to a head that is leased or buffered when it is set, or
// to a delivery when it reaches the inbox (a suspended head comes back
// within the consume service's SuspendTime). A batch's later messages are
// answered too (orderly nack) and sent round again by the consumer with
// reconsumeTimes + 1.
//
// Park rules and their ids are stored by the group registry (ParkStore:
// core/groups' bucket "groups.parks"), inside the store's transactions and
// backups, so a park survives a restart, kill -9 and a restore; the parked
// messages themselves are ordinary dead letters. A park is stored before
// it answers, and a parked message's id before its dead-letter nack is
// sent, so no dead letter of a parked key goes unrecorded; a crash in
// between delivers the message again, the park catches it again, and its
// id is recorded once. A deleted group's parks go with it. The file of
// earlier versions, <data>/parked-keys.json, is moved into the store at
// start (ParkStore.MigrateParkFile). Memory: one rule per parked key plus
// its ids (at most maxParkedIDs each; later messages stay in the DLQ
// without being recorded: redrive them by hand).

// ParkStore keeps parked keys durably (*groups.Registry).
type ParkStore interface {
	Parks() (map[string][]groups.Park, error)
	PutPark(ctx context.Context, group string, mq core.MessageQueue, key string, since time.Time) error
	AddParkedIDs(ctx context.Context, group string, mq core.MessageQueue, key string, ids []string) error
	DeletePark(ctx context.Context, group string, mq core.MessageQueue, key string) error
	MigrateParkFile(path string) (int, error)
}

// parkWriteTimeout bounds one park write.
const parkWriteTimeout = 30 * time.Second

// maxParkedIDs bounds the ids one park records.
const maxParkedIDs = 100_000

// keyRef names an ordering key of a queue.
type keyRef struct {
	Queue core.MessageQueue
	Key   string
}

// parkRule is one parked key.
type parkRule struct {
	Since time.Time
	IDs   []string
}

// skipRule is a pending skip: the head's offset and the reason its dead
// letter carries (skipReason).
type skipRule struct {
	offset int64
	reason string
}

// skipReason is the lastReason of a skipped head's dead letter: that an
// operator skipped it, then the head's own last failure, so the reason it
// blocked is not lost (a DLQ filter on that reason still matches).
func skipReason(last string) string {
	if last == "" {
		return "skipped by operator"
	}
	return core.ClipReason("skipped by operator; last: " + last)
}

// groupRules are a group's skip and park rules. mu is a leaf lock, taken
// after inbox.mu.
type groupRules struct {
	mu    sync.Mutex
	skips map[core.MessageQueue]skipRule // queue → the head to dead-letter
	parks map[keyRef]*parkRule
	// pending are ids recorded in parks and not yet stored (save).
	pending map[keyRef][]string
	dirty   bool // pending is not empty
}

func newGroupRules() *groupRules {
	return &groupRules{skips: map[core.MessageQueue]skipRule{}, parks: map[keyRef]*parkRule{}}
}

// blockedRules holds every group's rules and where they persist.
type blockedRules struct {
	mu     sync.Mutex // guards groups and loaded; a leaf lock
	store  ParkStore  // nil: memory only
	file   string     // the park file of earlier versions, to migrate ("": none)
	loaded bool
	groups map[string]*groupRules
	log    zerolog.Logger
}

// rules returns group's rules (the store's parks are loaded by open).
func (r *blockedRules) rules(group string) *groupRules {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups == nil {
		r.groups = map[string]*groupRules{}
	}
	g := r.groups[group]
	if g == nil {
		g = newGroupRules()
		r.groups[group] = g
	}
	return g
}

// open moves the park file of earlier versions into the store and loads
// every stored park (Embedded.Start, before any client runs).
func (r *blockedRules) open() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded || r.store == nil {
		r.loaded = true
		return nil
	}
	if r.file != "" {
		if _, err := r.store.MigrateParkFile(r.file); err != nil {
			return err
		}
	}
	all, err := r.store.Parks()
	if err != nil {
		return err
	}
	if r.groups == nil {
		r.groups = map[string]*groupRules{}
	}
	for name, ps := range all {
		g := r.groups[name]
		if g == nil {
			g = newGroupRules()
			r.groups[name] = g
		}
		g.mu.Lock()
		for _, p := range ps {
			g.parks[keyRef{p.Queue, p.ShardingKey}] = &parkRule{Since: p.Since, IDs: p.IDs}
		}
		g.mu.Unlock()
	}
	r.loaded = true
	return nil
}

// forget drops what group's rules hold, a BROADCASTING group's consumers'
// too, and takes the group's parks again from the store (the group was
// deleted, perhaps created again: the registry dropped the stored parks
// with it, and a park of the new incarnation may be stored already). The
// store is read under the rules' lock, so a park stored meanwhile is
// either read here or added by ParkKey after. The rules stay in place: an
// inbox of the group may still refer to them.
func (r *blockedRules) forget(group string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, g := range r.groups {
		if name != group && !strings.HasPrefix(name, group+"/") {
			continue
		}
		g.mu.Lock()
		clear(g.skips)
		clear(g.parks)
		g.pending, g.dirty = nil, false
		if name == group && r.store != nil {
			all, err := r.store.Parks()
			if err != nil {
				r.log.Warn().Err(err).Str("group", group).Msg("reading parked keys")
			}
			for _, p := range all[group] {
				g.parks[keyRef{p.Queue, p.ShardingKey}] = &parkRule{Since: p.Since, IDs: p.IDs}
			}
		}
		g.mu.Unlock()
	}
}

// save stores the parked ids recorded since the last save. The callers
// run it before the dead-letter nacks of those messages are sent: an id is
// stored before its dead letter exists. Ids whose write failed stay
// pending for the next save.
func (r *blockedRules) save() error {
	if r.store == nil {
		return nil
	}
	r.mu.Lock()
	all := maps.Clone(r.groups)
	r.mu.Unlock()
	var first error
	for name, g := range all {
		g.mu.Lock()
		pend := g.pending
		g.pending, g.dirty = nil, false
		g.mu.Unlock()
		for k, ids := range pend {
			ctx, cancel := context.WithTimeout(context.Background(), parkWriteTimeout)
			err := r.store.AddParkedIDs(ctx, name, k.Queue, k.Key, ids)
			cancel()
			if err == nil {
				continue
			}
			if first == nil {
				first = err
			}
			g.mu.Lock()
			if g.parks[k] != nil { // still parked: keep them for the next save
				if g.pending == nil {
					g.pending = map[keyRef][]string{}
				}
				g.pending[k] = append(ids, g.pending[k]...)
				g.dirty = true
			}
			g.mu.Unlock()
		}
	}
	return first
}

// matchLocked reports whether message m at the head of mq is to be
// dead-lettered by a rule, recording it, and the reason its dead letter
// carries ("" for a park: none) (g.mu held).
func (g *groupRules) matchLocked(mq core.MessageQueue, m *core.Message) (bool, string) {
	if sk, ok := g.skips[mq]; ok && sk.offset == m.QueueOffset {
		delete(g.skips, mq)
		return true, sk.reason
	}
	k := keyRef{mq, m.ShardingKey}
	if p := g.parks[k]; p != nil {
		if len(p.IDs) < maxParkedIDs && !slices.Contains(p.IDs, m.UserID()) {
			p.IDs = append(p.IDs, m.UserID())
			if g.pending == nil {
				g.pending = map[keyRef][]string{}
			}
			g.pending[k] = append(g.pending[k], m.UserID())
			g.dirty = true
		}
		return true, ""
	}
	return false, ""
}

// deadLetterLocked answers message i of dl with a nack to the DLQ (level
// -1) carrying reason, when there is one (the orderly nack answers the
// rest of its batch too, without it).
func (b *inbox) deadLetterLocked(dl *delivery, i int, reason string, calls []call) []call {
	n := len(calls)
	calls = b.answerLocked(dl, i, false, -1, calls)
	if reason != "" && len(calls) > n {
		calls[n].reason = reason
	}
	return calls
}

// applyRulesLocked dead-letters the first message of a fresh orderly
// delivery that a rule names (b.mu held; the delivery has no lease yet).
// It reports whether a park recorded something (save it).
func (b *inbox) applyRulesLocked(dl *delivery, calls []call) ([]call, bool) {
	g := b.rules
	g.mu.Lock()
	if len(g.skips) == 0 && len(g.parks) == 0 {
		g.mu.Unlock()
		return calls, false
	}
	hit, reason := -1, ""
	for i, m := range dl.msgs {
		if ok, why := g.matchLocked(dl.mq, m); ok {
			hit, reason = i, why
			break
		}
	}
	dirty := g.dirty
	g.mu.Unlock()
	if hit < 0 {
		return calls, false
	}
	return b.deadLetterLocked(dl, hit, reason, calls), dirty
}

// pendingLocked lists mq's unanswered messages in b in queue order: the
// leased ones (by offset), then the buffered ones (t.mu and b.mu held).
// A lease scan: only skip and park pay it.
func (t *leaseTable) pendingLocked(b *inbox, mq core.MessageQueue) []pendingMsg {
	var out []pendingMsg
	for _, x := range t.h {
		if x.box == b && x.dl != nil && x.dl.mq == mq {
			out = append(out, pendingMsg{x, x.dl, x.i})
		}
	}
	slices.SortFunc(out, func(a, b pendingMsg) int {
		return cmpInt64(a.dl.msgs[a.i].QueueOffset, b.dl.msgs[b.i].QueueOffset)
	})
	if q := b.queues[mq]; q != nil {
		for _, it := range q.items {
			out = append(out, pendingMsg{nil, it.dl, it.i})
		}
	}
	return out
}

// pendingMsg is one unanswered message: leased (l set) or buffered.
type pendingMsg struct {
	l  *lease
	dl *delivery
	i  int
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// orderlyClient returns the ORDERLY group's client (nil: none running)
// and its rules: the group's for CLUSTERING (consumerID ignored), the
// consumer's for BROADCASTING (consumerID required: every consumerId has
// its own queues, offsets and blocked heads).
func (e *Embedded) orderlyClient(group, consumerID string) (*clientRT, *groupRules, error) {
	c, rules, _, err := e.orderlyClientModel(group, consumerID)
	return c, rules, err
}

// orderlyClientModel is orderlyClient that also tells whether the group
// is BROADCASTING.
func (e *Embedded) orderlyClientModel(group, consumerID string) (*clientRT, *groupRules, bool, error) {
	g, err := e.opts.Groups.Get(group)
	if err != nil {
		return nil, nil, false, err
	}
	if g.ConsumeMode != core.Orderly {
		return nil, nil, false, core.Errorf(core.EConflict, "group %q is not ORDERLY: it has no blocked keys", group)
	}
	broadcast := g.MessageModel == core.Broadcasting
	rulesKey := group
	if broadcast {
		if consumerID == "" {
			return nil, nil, true, core.FieldError("consumerId", "is required for a BROADCASTING group (each consumer has its own blocked keys)")
		}
		if !core.ValidName(consumerID) {
			return nil, nil, true, core.FieldError("consumerId", "must match ^[A-Za-z0-9_-]{1,127}$")
		}
		rulesKey = broadcastRulesKey(group, consumerID)
	} else {
		consumerID = ""
	}
	e.mu.Lock()
	var c *clientRT
	if rt := e.groups[group]; rt != nil {
		c = rt.clients[consumerID]
	}
	e.mu.Unlock()
	return c, e.parks.rules(rulesKey), broadcast, nil
}

// broadcastRulesKey names a BROADCASTING consumer's rules (skips only:
// see ParkKey) apart from any group's (group names have no '/').
func broadcastRulesKey(group, consumerID string) string { return group + "/" + consumerID }

// errBroadcastPark refuses park and resume on BROADCASTING groups.
func errBroadcastPark(group string) error {
	return core.Errorf(core.EConflict, "group %q is BROADCASTING: a key cannot be parked, because a broadcast "+
		"failure is dropped for its consumer (RocketMQ), with no retry or dead-letter copy to release later; "+
		"skip the blocked head instead (it is dropped for that consumer only)", group)
}

// Blocked lists group's blocked queues and parked keys, by topic, queue
// and key (consumerID: a BROADCASTING group's consumer).
func (e *Embedded) Blocked(group, consumerID string) ([]core.BlockedEntry, error) {
	_, rules, err := e.orderlyClient(group, consumerID)
	if err != nil {
		return nil, err
	}
	held, err := e.HeldQueues(group, consumerID)
	if err != nil {
		return nil, err
	}
	var out []core.BlockedEntry
	for _, h := range held {
		if !h.Failed() {
			continue
		}
		attempts := h.Head.ReconsumeTimes
		since := h.Since
		if since.IsZero() {
			since = h.Head.StoredAt
		}
		out = append(out, core.BlockedEntry{Queue: h.Queue, ShardingKey: h.Head.ShardingKey, MessageID: h.Head.UserID(),
			Since: since, Attempts: attempts, State: core.StateBlocked, LastReason: e.lastReason(group, &h.Head)})
	}
	rules.mu.Lock()
	for k, p := range rules.parks {
		en := core.BlockedEntry{Queue: k.Queue, ShardingKey: k.Key, Since: p.Since, Attempts: len(p.IDs), State: core.StateParked}
		if len(p.IDs) > 0 {
			en.MessageID = p.IDs[0]
		}
		out = append(out, en)
	}
	rules.mu.Unlock()
	slices.SortFunc(out, core.CompareBlocked)
	return out, nil
}

// SkipBlocked sends the failed head of (mq, key) to the DLQ and lets the
// queue continue; BROADCASTING: drops it for consumerID (as the consumer
// does once maxReconsumeTimes is used up) and that consumer's queue
// continues. ENotFound when that queue is not blocked on key.
func (e *Embedded) SkipBlocked(group, consumerID string, mq core.MessageQueue, key string) (core.BlockedEntry, error) {
	c, rules, err := e.orderlyClient(group, consumerID)
	if err != nil {
		return core.BlockedEntry{}, err
	}
	entries, err := e.Blocked(group, consumerID)
	if err != nil {
		return core.BlockedEntry{}, err
	}
	i := slices.IndexFunc(entries, func(en core.BlockedEntry) bool {
		return en.State == core.StateBlocked && en.Queue == mq && en.ShardingKey == key
	})
	if i < 0 || c == nil {
		return core.BlockedEntry{}, core.Errorf(core.ENotFound, "queue %s/%d is not blocked on key %q", mq.Topic, mq.QueueID, key)
	}
	en := entries[i]
	held, _ := e.HeldQueues(group, consumerID)
	off := int64(-1)
	for _, h := range held {
		if h.Queue == mq {
			off = h.Head.QueueOffset
		}
	}
	e.opts.Timeline.Record(group, core.Event{Type: core.EventSkipped, MessageID: en.MessageID})
	rules.mu.Lock()
	rules.skips[mq] = skipRule{offset: off, reason: skipReason(en.LastReason)}
	rules.mu.Unlock()
	e.applyToHead(c, rules, mq)
	en.State = core.StateSkipped
	return en, nil
}

// ParkKey sets (mq, key) aside: its messages go to the DLQ as they reach
// the head of the queue, recorded for resume, and the other keys continue.
// CLUSTERING only (errBroadcastPark).
func (e *Embedded) ParkKey(group, consumerID string, mq core.MessageQueue, key string) (core.BlockedEntry, error) {
	c, rules, broadcast, err := e.orderlyClientModel(group, consumerID)
	if broadcast { // before a missing consumerId: there is nothing to give it
		return core.BlockedEntry{}, errBroadcastPark(group)
	}
	if err != nil {
		return core.BlockedEntry{}, err
	}
	k := keyRef{mq, key}
	rules.mu.Lock()
	p := rules.parks[k]
	rules.mu.Unlock()
	if p == nil {
		// Stored first: the park holds once it answers, and no message is
		// dead-lettered for a park a crash would forget.
		since := time.Now().UTC()
		if st := e.parks.store; st != nil {
			ctx, cancel := context.WithTimeout(context.Background(), parkWriteTimeout)
			err := st.PutPark(ctx, group, mq, key, since)
			cancel()
			if err != nil {
				return core.BlockedEntry{}, err
			}
		}
		rules.mu.Lock()
		if p = rules.parks[k]; p == nil {
			p = &parkRule{Since: since}
			rules.parks[k] = p
		}
		rules.mu.Unlock()
	}
	if c != nil {
		e.applyToHead(c, rules, mq)
	}
	rules.mu.Lock()
	en := core.BlockedEntry{Queue: mq, ShardingKey: key, Since: p.Since, Attempts: len(p.IDs), State: core.StateParked}
	if len(p.IDs) > 0 {
		en.MessageID = p.IDs[0]
	}
	rules.mu.Unlock()
	return en, nil
}

// ResumeKey ends the park of (mq, key), hands its parked ids, in order,
// to release (the caller redrives them; nil: nobody does) and returns its
// entry with them. The park stops catching messages first, and is dropped
// from the store only once release succeeded: a crash in between leaves it
// stored, so after the restart the key is still parked and a second
// resume ends it (a redrive moves each dead letter once: nothing is
// released twice, nothing is left in the DLQ). When release fails the
// park is as before and its error is returned. ENotFound when the key is not parked. CLUSTERING only
// (errBroadcastPark).
func (e *Embedded) ResumeKey(group, consumerID string, mq core.MessageQueue, key string, release func(ids []string) error) (core.BlockedEntry, error) {
	_, rules, broadcast, err := e.orderlyClientModel(group, consumerID)
	if broadcast { // before a missing consumerId: there is nothing to give it
		return core.BlockedEntry{}, errBroadcastPark(group)
	}
	if err != nil {
		return core.BlockedEntry{}, err
	}
	k := keyRef{mq, key}
	rules.mu.Lock()
	p := rules.parks[k]
	pending := rules.pending[k]
	if p != nil {
		delete(rules.parks, k)
		delete(rules.pending, k)
	}
	rules.mu.Unlock()
	if p == nil {
		return core.BlockedEntry{}, core.Errorf(core.ENotFound, "key %q of queue %s/%d is not parked", key, mq.Topic, mq.QueueID)
	}
	ids := slices.Clone(p.IDs)
	if release != nil && len(ids) > 0 {
		if err := release(ids); err != nil {
			rules.mu.Lock()
			if rules.parks[k] == nil { // not parked again meanwhile
				rules.parks[k] = p
				if len(pending) > 0 {
					if rules.pending == nil {
						rules.pending = map[keyRef][]string{}
					}
					rules.pending[k] = append(pending, rules.pending[k]...)
					rules.dirty = true
				}
			}
			rules.mu.Unlock()
			return core.BlockedEntry{}, err
		}
	}
	if st := e.parks.store; st != nil {
		ctx, cancel := context.WithTimeout(context.Background(), parkWriteTimeout)
		err := st.DeletePark(ctx, group, mq, key)
		cancel()
		if err != nil {
			// Released: a restart shows the key parked again, with
			// nothing of it left to release unless it caught more.
			e.log.Warn().Err(err).Str("group", group).Str("shardingKey", key).Msg("resumed key still stored as parked")
		}
	}
	en := core.BlockedEntry{Queue: mq, ShardingKey: key, Since: p.Since, Attempts: len(ids), State: core.StateResumed, ParkedIDs: ids}
	if len(ids) > 0 {
		en.MessageID = ids[0]
	}
	return en, nil
}

// applyToHead dead-letters the first unanswered message of mq in c that a
// rule names (leased: its lease ends as nacked; buffered: answered at
// once); the orderly nack answers the rest of its batch too.
func (e *Embedded) applyToHead(c *clientRT, rules *groupRules, mq core.MessageQueue) {
	t := e.leases
	var calls []call
	// Answers decided here are in progress until runCalls delivered them
	// (QueueDropped waits for them), as in apply.
	t.answering.RLock()
	defer t.answering.RUnlock()
	t.mu.Lock()
	c.box.mu.Lock()
	for _, p := range t.pendingLocked(c.box, mq) {
		if !p.dl.orderly || p.dl.d.Dropped() || p.dl.state[p.i] == stAnswered {
			continue
		}
		rules.mu.Lock()
		hit, reason := rules.matchLocked(mq, p.dl.msgs[p.i])
		rules.mu.Unlock()
		if hit {
			calls = c.box.deadLetterLocked(p.dl, p.i, reason, calls)
			if p.l != nil {
				t.endLocked(p.l, outcomeNacked)
			}
			break
		}
	}
	c.box.mu.Unlock()
	t.mu.Unlock()
	e.saveParks() // the parked id before its dead letter
	runCalls(calls)
}

// parkFile is where earlier versions kept park rules in the data dir
// (migrated into the store at start).
func parkFile(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "parked-keys.json")
}

func (e *Embedded) saveParks() {
	if err := e.parks.save(); err != nil {
		e.log.Warn().Err(err).Msg("saving parked keys")
	}
}

// lastReason is the reason of m's latest failure: the newest NACKED or
// LEASE_EXPIRED event of its timeline (memory, bounded), else the reason
// its retry copy carries (core.PropLastReason).
func (e *Embedded) lastReason(group string, m *core.Message) string {
	evs := e.opts.Timeline.Events(group, m.UserID())
	for i := len(evs) - 1; i >= 0; i-- {
		if t := evs[i].Type; (t == core.EventNacked || t == core.EventLeaseExpired) && evs[i].Reason != "" {
			return evs[i].Reason
		}
	}
	return m.SysProps[core.PropLastReason]
}
