package e2e

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// The change-chaos checker (issue 9): a pure function from a recorded
// history to counts and violations, so that it can be tested on synthetic
// histories (TestChaosCheckerCanFail, at the end of this file).
//
// Ordering. Every recorded moment takes a number from one counter (the
// "seq"), so "before" and "after" are exact between events recorded by the
// test. The chaos runner pauses publishing (a gate) across every change
// whose meaning depends on which messages came before it — topic create
// and delete, group create, filter change, offsets reset — so no publish
// overlaps such a change: each publish's [Sent, Done] lies wholly before
// the change's Sent or wholly after its Done. Topic growth, group
// deletion and restarts do not pause publishing.
//
// Rules (numbers as in the issue):
//  1. missing: a message published (2xx) after the group (BROADCASTING: the
//     consumerId) subscribed, to a subscribed topic, matching the filter in
//     force when it was published, is delivered at least once — unless an
//     offsets reset of that group and topic came after it (skipped on
//     purpose), or its topic incarnation or the group incarnation was
//     deleted later. A subscription's filter applies when a message is
//     consumed (RocketMQ's semantics, docs/consuming.md): a message a later
//     filter excludes is excused, and filter-leak is a delivered message
//     that matched neither the filter in force when it was published nor
//     any filter set after that.
//  2. inversions: in an ORDERLY group, per (topic incarnation, key), first
//     deliveries come in per-key sequence order: K:n+1 is never delivered
//     before K:n has been delivered at least once (K:n never delivered is
//     not an inversion; it is missing or excused).
//  3. resurrected: (a) a message of a topic incarnation deleted before the
//     group incarnation was created is never delivered to it; (b) a
//     LAST_OFFSET group (consumerId) never receives a message published
//     before it subscribed; (c) a delivery with reconsumeTimes > 0 follows
//     an earlier delivery of that message to the same group incarnation
//     (its retries never come from an old incarnation); (d) nothing of a
//     topic incarnation is delivered by a receive sent more than
//     chaosChangeGrace after that incarnation's delete was answered.
//  4. redelivered-acked after SIGTERM: a message whose ack answered ok is
//     never delivered again to that group incarnation (consumerId) in a
//     later server generation when a clean stop lies in between; and never
//     again in the same generation by a receive sent after the ack answered
//     ("live").
//  5. redelivered-acked after kill -9 (only kills in between): counted per
//     kill; each such ack answered at most chaosKill9AckAge before the
//     kill (the guarantee: acks are written with the next group commit),
//     and at most chaosKill9AckedBound per kill (a sanity cap: how many
//     acks fit in that window depends on the load).
//
// phantom: a delivery whose body names no publish the test made, or a
// publish the server rejected (a rejected request changes nothing).
//
// Streams (issue 22) add no rule of their own: stream deliveries and acks
// are judged by rules 1-5 as receives and REST acks are (a stream's acks
// are committed as REST acks are, so the same bounds hold), and a publish
// confirmed over a stream, however many times it was resent, counts as a
// 2xx publish. Two checks make "nothing confirmed is lost, nothing is
// stored twice" explicit:
//
//	1-confirmed-lost: a confirmed publish that some scope requires and no
//	   scope received (it is also 1-missing; this names what the store lost)
//	dup-stored: two first deliveries (reconsumeTimes 0) of one message to
//	   one scope with different messageIds — stored twice, e.g. a resend
//	   with its deduplicationId that was not deduplicated

// Tunable bounds (test-only).
const (
	// chaosKill9AckedBound is the most acked messages one kill -9 may bring
	// back, all groups and consumerIds together: the acks of the last
	// group commit or two of every queue's position, at this test's load
	// (about 60 acks per 100 ms). Measured values are printed by
	// TestChangeChaos.
	chaosKill9AckedBound = 300
	// chaosKill9AckAge is how long before a kill -9 an ack brought back by
	// it may have been answered: positions are written with the store's
	// next group commit, one write in flight per consumer (milliseconds;
	// up to ~150 ms measured on a loaded 2-core machine with -race). The
	// old one-second persistence failed this.
	chaosKill9AckAge = 750 * time.Millisecond
	// chaosChangeGrace is how long after a topic delete answered a receive
	// may still hand out its messages (SPEC §8.7: changes reach consumers
	// within a second; one more for a loaded CI machine).
	chaosChangeGrace = 2 * time.Second
	// chaosShowPerRule caps the violations printed per rule.
	chaosShowPerRule = 15
)

type chPubStatus int

const (
	chPubOK       chPubStatus = iota + 1 // answered 2xx
	chPubUnknown                         // the answer was lost (kill, stop)
	chPubRejected                        // answered non-2xx: nothing stored
)

// chPublish is one message the test tried to publish; U is its identity,
// carried in its body and properties.
type chPublish struct {
	U          int64
	Topic      string
	TInc       int // topic incarnation (the test's counter)
	Key        string
	Seq        int // per (topic, incarnation, key), from 1
	Tag        string
	Sent, Done int64
	Status     chPubStatus
	QueueID    int   // from the answer (-1 unknown), for diagnosis only
	Offset     int64 // queue offset from the answer
	// Stream: published over a publish stream; Resent counts the times
	// its frame was sent again after a lost confirm (same
	// deduplicationId), Replayed that the confirm said it was stored
	// before.
	Stream   bool
	Resent   int
	Replayed bool
}

// chTopic is one incarnation of a topic.
type chTopic struct {
	Name        string
	TInc        int
	Created     int64 // seq the create answered
	Deleted     int64 // seq the delete answered; 0 while live
	DeletedTime time.Time
}

// chFilter is a subscription's filter from seq From (the change's answer) on.
type chFilter struct {
	Topic, Filter string
	From          int64
}

// chReset is an offsets reset to LAST_OFFSET, answered at seq At.
type chReset struct {
	Topic string
	At    int64
}

// chFirstSeen is when a BROADCASTING consumerId's first receive was sent
// and answered.
type chFirstSeen struct{ Sent, Done int64 }

// chGroup is one incarnation of a group.
type chGroup struct {
	Name       string
	GInc       int
	Orderly    bool
	Broadcast  bool
	LastOffset bool // consumeFrom LAST_OFFSET (else FIRST_OFFSET)
	Topics     []string
	CreateSent int64
	Created    int64
	Deleted    int64 // seq the delete was sent; 0 while live
	Filters    []chFilter
	Resets     []chReset
	FirstSeen  map[string]chFirstSeen // BROADCASTING consumerIds
}

// chRestart ends server generation Gen (the next one is Gen+1).
type chRestart struct {
	Gen  int
	Kill bool
	At   int64
	Time time.Time // the signal was sent
}

// chDelivery is one message in one receive answer.
type chDelivery struct {
	Group     string
	GInc      int
	Consumer  string // BROADCASTING consumerId, else ""
	U         int64  // from the body; -1 when it names no publish
	Topic     string // the topic field of the delivery
	Reconsume int
	RecvSent  int64
	RecvSentT time.Time
	RecvAt    int64 // seq the answer was read (order within an answer: +index)
	Gen       int
	Acked     bool // the ack answered ok
	AckGen    int
	AckTime   time.Time
	Nacked    bool
	MessageID string // "" when not recorded
	Stream    bool   // delivered on a consume stream
}

// chHistory is everything a run recorded.
type chHistory struct {
	Topics     []chTopic
	Groups     []*chGroup
	Pubs       []chPublish
	Restarts   []chRestart
	Deliveries []chDelivery
	// KillAckAge, when set, replaces chaosKill9AckAge (rule 5).
	KillAckAge time.Duration
}

// chReport is the checker's answer.
type chReport struct {
	Published, Unknown, Rejected int
	Delivered, Distinct          int // deliveries; distinct (scope, message)
	Redelivered                  int // deliveries beyond the first per scope
	Required                     int // (scope, message) pairs rule 1 demands
	UnknownDelivered             int
	AckedTerm, AckedLive         int
	AckedKill                    int
	AckedKillPerKill             []int
	Inversions                   int
	Resurrected                  int
	Missing                      int
	FilterLeak                   int
	ExcusedByFilter              int // due at publish, excluded by a later filter
	Phantom                      int
	// ConfirmedLost counts confirmed publishes (2xx, or a stream's
	// confirm) that some scope required and no scope received: gone from
	// the store. DupStored counts messages stored twice (two first
	// deliveries with different messageIds), e.g. a resend that dedup
	// did not catch.
	ConfirmedLost, DupStored int
	// Stream figures: publishes confirmed over streams (resent at least
	// once, replayed), deliveries on consume streams and their ok acks.
	StreamPublished, StreamResent, StreamReplayed int
	StreamDelivered, StreamAcked                  int
	MaxKillAckAge                                 time.Duration // oldest ack among those brought back by a kill
	// Violations per rule name, in a stable order of names; ByScope counts
	// them per rule and group incarnation (consumerId).
	Violations map[string][]string
	ByScope    map[string]map[string]int
}

func (r *chReport) add(rule, format string, args ...any) {
	if r.Violations == nil {
		r.Violations = map[string][]string{}
	}
	r.Violations[rule] = append(r.Violations[rule], fmt.Sprintf(format, args...))
	if len(args) > 0 {
		if sc, ok := args[0].(chScope); ok {
			if r.ByScope == nil {
				r.ByScope = map[string]map[string]int{}
			}
			if r.ByScope[rule] == nil {
				r.ByScope[rule] = map[string]int{}
			}
			r.ByScope[rule][sc.String()]++
		}
	}
}

// Rules lists the rule names that have violations, sorted.
func (r *chReport) Rules() []string {
	var out []string
	for k := range r.Violations {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Summary is the one-line count of everything, for t.Logf.
func (r *chReport) Summary() string {
	return fmt.Sprintf("published %d (+%d unknown, %d rejected; over streams %d, resent %d, replayed %d), required %d, delivered %d (distinct %d, redelivered %d, unknown-publish delivered %d; on streams %d, acked %d), "+
		"redelivered-acked after SIGTERM %d, live %d, after kill -9 %d %v (bound %d/kill, oldest ack %v before its kill, window %v), inversions %d, resurrected %d, missing %d, confirmed lost %d, stored twice %d, filter-leak %d, excused by a later filter %d, phantom %d",
		r.Published, r.Unknown, r.Rejected, r.StreamPublished, r.StreamResent, r.StreamReplayed, r.Required, r.Delivered, r.Distinct, r.Redelivered, r.UnknownDelivered, r.StreamDelivered, r.StreamAcked,
		r.AckedTerm, r.AckedLive, r.AckedKill, r.AckedKillPerKill, chaosKill9AckedBound, r.MaxKillAckAge.Round(time.Millisecond), chaosKill9AckAge,
		r.Inversions, r.Resurrected, r.Missing, r.ConfirmedLost, r.DupStored, r.FilterLeak, r.ExcusedByFilter, r.Phantom)
}

// Failure renders the violations, at most chaosShowPerRule per rule.
func (r *chReport) Failure() string {
	var b strings.Builder
	for _, rule := range r.Rules() {
		vs := r.Violations[rule]
		fmt.Fprintf(&b, "rule %s: %d violation(s)", rule, len(vs))
		if by := r.ByScope[rule]; len(by) > 0 {
			var parts []string
			for sc, n := range by {
				parts = append(parts, fmt.Sprintf("%s %d", sc, n))
			}
			slices.Sort(parts)
			fmt.Fprintf(&b, " [%s]", strings.Join(parts, ", "))
		}
		b.WriteString("\n")
		for i, v := range vs {
			if i == chaosShowPerRule {
				fmt.Fprintf(&b, "  … %d more\n", len(vs)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	return b.String()
}

// tagMatches is a TAG filter: "*" or tags joined by "||".
func tagMatches(filter, tag string) bool {
	filter = strings.TrimSpace(filter)
	if filter == "" || filter == "*" {
		return true
	}
	for f := range strings.SplitSeq(filter, "||") {
		if strings.TrimSpace(f) == tag {
			return true
		}
	}
	return false
}

func (g *chGroup) String() string {
	return fmt.Sprintf("%s#%d", g.Name, g.GInc)
}

func (g *chGroup) subscribes(topic string) bool { return slices.Contains(g.Topics, topic) }

// matchesFrom reports whether tag matches the filter on topic in force at
// seq or any filter set after it (filters apply when consumed).
func (g *chGroup) matchesFrom(topic string, seq int64, tag string) bool {
	if tagMatches(g.filterAt(topic, seq), tag) {
		return true
	}
	for _, e := range g.Filters {
		if e.Topic == topic && e.From >= seq && tagMatches(e.Filter, tag) {
			return true
		}
	}
	return false
}

// excludedLater reports whether a filter set on topic after seq excludes
// tag: the message may have been consumed while it was in force.
func (g *chGroup) excludedLater(topic string, seq int64, tag string) bool {
	for _, e := range g.Filters {
		if e.Topic == topic && e.From >= seq && !tagMatches(e.Filter, tag) {
			return true
		}
	}
	return false
}

// filterAt is the filter on topic in force for a publish sent at seq.
func (g *chGroup) filterAt(topic string, seq int64) string {
	f := "*"
	for _, e := range g.Filters {
		if e.Topic == topic && e.From < seq {
			f = e.Filter
		}
	}
	return f
}

func (p *chPublish) String() string {
	if p.Status == chPubOK && p.QueueID >= 0 {
		return fmt.Sprintf("u=%d (%s#%d q%d@%d %s:%d tag %s)", p.U, p.Topic, p.TInc, p.QueueID, p.Offset, p.Key, p.Seq, p.Tag)
	}
	return fmt.Sprintf("u=%d (%s#%d %s:%d tag %s)", p.U, p.Topic, p.TInc, p.Key, p.Seq, p.Tag)
}

type chScope struct {
	group    string
	ginc     int
	consumer string
}

func (s chScope) String() string {
	if s.consumer != "" {
		return fmt.Sprintf("%s#%d/%s", s.group, s.ginc, s.consumer)
	}
	return fmt.Sprintf("%s#%d", s.group, s.ginc)
}

type chKey struct {
	topic string
	tinc  int
	key   string
}

// how names a delivery's path for a violation's text.
func how(stream bool, msgID string) string {
	if stream {
		return "stream " + msgID
	}
	return "receive " + msgID
}

// checkChaos applies the rules to h.
func checkChaos(h *chHistory) *chReport {
	r := &chReport{Violations: map[string][]string{}}
	ackAge := chaosKill9AckAge
	if h.KillAckAge > 0 {
		ackAge = h.KillAckAge
	}
	pubs := map[int64]*chPublish{}
	for i := range h.Pubs {
		p := &h.Pubs[i]
		pubs[p.U] = p
		switch p.Status {
		case chPubOK:
			r.Published++
			if p.Stream {
				r.StreamPublished++
				if p.Resent > 0 {
					r.StreamResent++
				}
				if p.Replayed {
					r.StreamReplayed++
				}
			}
		case chPubUnknown:
			r.Unknown++
		case chPubRejected:
			r.Rejected++
		}
	}
	topics := map[string]map[int]*chTopic{}
	for i := range h.Topics {
		tp := &h.Topics[i]
		if topics[tp.Name] == nil {
			topics[tp.Name] = map[int]*chTopic{}
		}
		topics[tp.Name][tp.TInc] = tp
	}
	groups := map[string]map[int]*chGroup{}
	for _, g := range h.Groups {
		if groups[g.Name] == nil {
			groups[g.Name] = map[int]*chGroup{}
		}
		groups[g.Name][g.GInc] = g
	}
	restarts := map[int]chRestart{}
	r.AckedKillPerKill = []int{}
	killIndex := map[int]int{}
	for _, rs := range h.Restarts {
		restarts[rs.Gen] = rs
		if rs.Kill {
			killIndex[rs.Gen] = len(r.AckedKillPerKill)
			r.AckedKillPerKill = append(r.AckedKillPerKill, 0)
		}
	}

	// Deliveries in the order they were read.
	ds := slices.Clone(h.Deliveries)
	slices.SortStableFunc(ds, func(a, b chDelivery) int { return cmp.Compare(a.RecvAt, b.RecvAt) })

	type ackInfo struct {
		gen    int
		time   time.Time
		stream bool // the acked delivery came on a stream (acked there)
		msgID  string
	}
	seen := map[chScope]map[int64]int{}       // deliveries so far per scope and message
	acked := map[chScope]map[int64]ackInfo{}  // first ok ack per scope and message
	groupSeen := map[chScope]map[int64]bool{} // per group incarnation (no consumer), for 3c
	firstIdx := map[chScope]map[int64]int{}   // ORDERLY: index of first delivery
	counted := map[chScope]map[int64]bool{}   // redelivered-acked counted once per scope and message
	stored := map[chScope]map[int64]string{}  // messageId of the first reconsumeTimes-0 delivery
	got := map[int64]bool{}                   // delivered to some scope
	nacked := map[chScope]map[int64]int{}     // ok nacks so far per scope and message (diagnosis)
	for i, d := range ds {
		r.Delivered++
		got[d.U] = true
		if d.Stream {
			r.StreamDelivered++
			if d.Acked {
				r.StreamAcked++
			}
		}
		p := pubs[d.U]
		sc := chScope{d.Group, d.GInc, d.Consumer}
		gsc := chScope{d.Group, d.GInc, ""}
		if p == nil || p.Status == chPubRejected {
			r.Phantom++
			r.add("phantom", "%s: delivered u=%d (topic %s), which no publish answered or lost", sc, d.U, d.Topic)
			continue
		}
		if p.Status == chPubUnknown {
			r.UnknownDelivered++
		}
		g := groups[d.Group][d.GInc]
		if g == nil {
			r.add("phantom", "%s: delivery to a group incarnation the test never created: %s", sc, p)
			r.Phantom++
			continue
		}
		if seen[sc] == nil {
			seen[sc], acked[sc], firstIdx[sc], counted[sc] = map[int64]int{}, map[int64]ackInfo{}, map[int64]int{}, map[int64]bool{}
		}
		if groupSeen[gsc] == nil {
			groupSeen[gsc] = map[int64]bool{}
		}
		n := seen[sc][d.U]
		seen[sc][d.U] = n + 1
		if n == 0 {
			r.Distinct++
			firstIdx[sc][d.U] = i
		} else {
			r.Redelivered++
		}
		if d.Topic != p.Topic {
			r.add("phantom", "%s: %s delivered with topic %q", sc, p, d.Topic)
			r.Phantom++
		}
		// Stored once: every first delivery (not a retry's copy) of a
		// message names the same messageId.
		if d.MessageID != "" && d.Reconsume == 0 {
			if stored[sc] == nil {
				stored[sc] = map[int64]string{}
			}
			if id, ok := stored[sc][d.U]; !ok {
				stored[sc][d.U] = d.MessageID
			} else if id != d.MessageID {
				stored[sc][d.U] = d.MessageID // count each further copy once
				r.DupStored++
				r.add("dup-stored", "%s: %s delivered as %s and as %s: stored twice (resent %d times)", sc, p, id, d.MessageID, p.Resent)
			}
		}

		// Rule 3 (one delivery counts once, under the first sub-rule it breaks).
		resurrected := false
		if tp := topics[p.Topic][p.TInc]; tp != nil && tp.Deleted != 0 {
			resurrected = true
			if tp.Deleted < g.CreateSent {
				r.Resurrected++
				r.add("3a-deleted-topic", "%s: delivered %s of topic incarnation %s#%d deleted (seq %d) before the group incarnation was created (seq %d)",
					sc, p, p.Topic, p.TInc, tp.Deleted, g.CreateSent)
			} else if tp.Deleted < d.RecvSent && d.RecvSentT.Sub(tp.DeletedTime) > chaosChangeGrace {
				r.Resurrected++
				r.add("3d-stale-topic", "%s: delivered %s (reconsumeTimes %d) by a receive sent %v after topic incarnation %s#%d was deleted",
					sc, p, d.Reconsume, d.RecvSentT.Sub(tp.DeletedTime).Round(time.Millisecond), p.Topic, p.TInc)
			} else {
				resurrected = false
			}
		}
		if !resurrected && g.LastOffset && g.subscribes(p.Topic) {
			before := p.Done < g.CreateSent
			if fs, ok := g.FirstSeen[d.Consumer]; ok && g.Broadcast && p.Done < fs.Sent {
				before = true
			}
			if before && n == 0 {
				resurrected = true
				r.Resurrected++
				r.add("3b-before-subscribe", "%s (LAST_OFFSET, created seq %d) delivered %s published before it subscribed (answered seq %d)",
					sc, g.CreateSent, p, p.Done)
			}
		}
		if !resurrected && d.Reconsume > 0 && !groupSeen[gsc][d.U] {
			r.Resurrected++
			r.add("3c-retry-from-old", "%s: %s delivered with reconsumeTimes %d but never delivered to this incarnation before",
				sc, p, d.Reconsume)
		}
		groupSeen[gsc][d.U] = true

		// Rule 1, the "iff" half.
		if g.subscribes(p.Topic) && p.Sent > g.Created && p.Status == chPubOK {
			if f := g.filterAt(p.Topic, p.Sent); !g.matchesFrom(p.Topic, p.Sent, p.Tag) && n == 0 {
				r.FilterLeak++
				r.add("1-filter-leak", "%s: delivered %s published while filter %q was in force (later filter %q)", sc, p, f, g.filterAt(p.Topic, math.MaxInt64))
			}
		}

		// Rules 4 and 5.
		if a, ok := acked[sc][d.U]; ok && !counted[sc][d.U] {
			switch {
			case d.Gen < a.gen:
				// Delivered by an earlier run than the ack's, on a stream
				// whose queued deliveries were read after that run ended:
				// the delivery came before the ack, it is no redelivery.
			case a.gen == d.Gen:
				if d.RecvSentT.After(a.time) {
					counted[sc][d.U] = true
					r.AckedLive++
					r.add("4-redelivered-acked-live", "%s: %s delivered again (reconsumeTimes %d) by a receive sent %v after its ack answered ok, same server run %d (%s acked at %s, then %s at seq %d; %d earlier deliveries, %d nacked ok)",
						sc, p, d.Reconsume, d.RecvSentT.Sub(a.time).Round(time.Millisecond), d.Gen, how(a.stream, a.msgID), a.time.UTC().Format("15:04:05.000000"), how(d.Stream, d.MessageID), d.RecvAt,
						n, nacked[sc][d.U])
				}
			default:
				counted[sc][d.U] = true
				term := -1
				for gen := a.gen; gen < d.Gen; gen++ {
					if rs, ok := restarts[gen]; ok && !rs.Kill {
						term = gen
						break
					}
				}
				if term >= 0 {
					r.AckedTerm++
					r.add("4-redelivered-acked-after-sigterm", "%s: %s acked ok in run %d, delivered again in run %d after the SIGTERM ending run %d",
						sc, p, a.gen, d.Gen, term)
					break
				}
				rs := restarts[a.gen]
				r.AckedKill++
				if k, ok := killIndex[a.gen]; ok {
					r.AckedKillPerKill[k]++
				}
				age := rs.Time.Sub(a.time)
				r.MaxKillAckAge = max(r.MaxKillAckAge, age)
				if age > ackAge {
					r.add("5-acked-long-before-kill", "%s: %s acked ok %v before the kill -9 ending run %d, delivered again in run %d (window %v)",
						sc, p, age.Round(time.Millisecond), a.gen, d.Gen, ackAge)
				}
			}
		}
		if d.Nacked {
			if nacked[sc] == nil {
				nacked[sc] = map[int64]int{}
			}
			nacked[sc][d.U]++
		}
		if d.Acked {
			if _, ok := acked[sc][d.U]; !ok {
				acked[sc][d.U] = ackInfo{gen: d.AckGen, time: d.AckTime, stream: d.Stream, msgID: d.MessageID}
			}
		}
	}
	for k, n := range r.AckedKillPerKill {
		if n > chaosKill9AckedBound {
			r.add("5-kill9-bound", "kill -9 #%d: %d acked messages delivered again, bound %d", k+1, n, chaosKill9AckedBound)
		}
	}

	// Rule 2: per ORDERLY scope and key, first deliveries in seq order.
	for sc, first := range firstIdx {
		g := groups[sc.group][sc.ginc]
		if g == nil || !g.Orderly {
			continue
		}
		byKey := map[chKey][]*chPublish{}
		for u := range first {
			p := pubs[u]
			k := chKey{p.Topic, p.TInc, p.Key}
			byKey[k] = append(byKey[k], p)
		}
		for _, ps := range byKey {
			slices.SortFunc(ps, func(a, b *chPublish) int { return cmp.Compare(b.Seq, a.Seq) }) // descending
			minFirst, minBy := -1, (*chPublish)(nil)
			for _, p := range ps {
				f := first[p.U]
				if minFirst >= 0 && minFirst < f {
					r.Inversions++
					r.add("2-order-inversion", "%s: %s:%d first delivered (delivery #%d) before %s:%d (delivery #%d) [%s before %s]",
						sc, minBy.Key, minBy.Seq, minFirst, p.Key, p.Seq, f, minBy, p)
				}
				if minFirst < 0 || f < minFirst {
					minFirst, minBy = f, p
				}
			}
		}
	}

	// Rule 1: what each scope must have received.
	lost := map[int64]bool{}
	for _, g := range h.Groups {
		var scopes []chScope
		if g.Broadcast {
			for c := range g.FirstSeen {
				scopes = append(scopes, chScope{g.Name, g.GInc, c})
			}
			slices.SortFunc(scopes, func(a, b chScope) int { return cmp.Compare(a.consumer, b.consumer) })
		} else {
			scopes = []chScope{{g.Name, g.GInc, ""}}
		}
		if g.Deleted != 0 {
			continue // a deleted incarnation owes nothing
		}
		for _, sc := range scopes {
			start := g.Created
			if g.Broadcast && g.LastOffset {
				start = max(start, g.FirstSeen[sc.consumer].Done)
			}
			for i := range h.Pubs {
				p := &h.Pubs[i]
				if p.Status != chPubOK || !g.subscribes(p.Topic) || p.Sent <= start {
					continue
				}
				if tp := topics[p.Topic][p.TInc]; tp != nil && tp.Deleted != 0 {
					continue
				}
				if !tagMatches(g.filterAt(p.Topic, p.Sent), p.Tag) {
					continue
				}
				skipped := false
				for _, rs := range g.Resets {
					if rs.Topic == p.Topic && rs.At > p.Done {
						skipped = true
					}
				}
				if skipped {
					continue
				}
				if g.excludedLater(p.Topic, p.Sent, p.Tag) {
					// Excluded by a later filter: filters apply when a
					// message is consumed, so it is not due.
					r.ExcusedByFilter++
					continue
				}
				r.Required++
				if seen[sc][p.U] == 0 {
					r.Missing++
					r.add("1-missing", "%s: never delivered %s, published seq %d..%d (group created seq %d)", sc, p, p.Sent, p.Done, g.Created)
					if !got[p.U] && !lost[p.U] {
						lost[p.U] = true
						r.ConfirmedLost++
						r.add("1-confirmed-lost", "%s (stream %v, resent %d, replayed %v): confirmed, required by %s, delivered to no scope", p, p.Stream, p.Resent, p.Replayed, sc)
					}
				}
			}
		}
	}
	return r
}

// chSynth builds small synthetic histories for the checker's self-test.
type chSynth struct {
	h   chHistory
	seq int64
	u   int64
	t0  time.Time
}

func newChSynth() *chSynth { return &chSynth{t0: time.Unix(1_800_000_000, 0)} }

func (b *chSynth) next() int64 { b.seq++; return b.seq }

// at is the wall time of a seq: one second per step, so windows are easy.
func (b *chSynth) at(seq int64) time.Time {
	return b.t0.Add(time.Duration(seq) * 250 * time.Millisecond)
}

func (b *chSynth) topic(name string, inc int) {
	b.h.Topics = append(b.h.Topics, chTopic{Name: name, TInc: inc, Created: b.next()})
}

func (b *chSynth) deleteTopic(name string, inc int) {
	for i := range b.h.Topics {
		if t := &b.h.Topics[i]; t.Name == name && t.TInc == inc {
			t.Deleted = b.next()
			t.DeletedTime = b.at(t.Deleted)
		}
	}
}

func (b *chSynth) group(name string, inc int, mod func(g *chGroup)) *chGroup {
	g := &chGroup{Name: name, GInc: inc, Topics: []string{"t"}, CreateSent: b.next(), FirstSeen: map[string]chFirstSeen{}}
	if mod != nil {
		mod(g)
	}
	g.Created = b.next()
	for _, tp := range g.Topics {
		g.Filters = append(g.Filters, chFilter{Topic: tp, Filter: "*", From: g.Created})
	}
	b.h.Groups = append(b.h.Groups, g)
	return g
}

func (b *chSynth) pub(topic string, inc int, key string, seq int, tag string) int64 {
	b.u++
	s := b.next()
	b.h.Pubs = append(b.h.Pubs, chPublish{U: b.u, Topic: topic, TInc: inc, Key: key, Seq: seq, Tag: tag, Sent: s, Done: b.next(), Status: chPubOK})
	return b.u
}

// deliver records a delivery in generation gen; ack says whether its ack
// answered ok (right after it).
func (b *chSynth) deliver(g *chGroup, consumer string, u int64, reconsume, gen int, ack bool) {
	s := b.next()
	d := chDelivery{Group: g.Name, GInc: g.GInc, Consumer: consumer, U: u, Topic: "t", Reconsume: reconsume,
		RecvSent: s, RecvSentT: b.at(s), RecvAt: b.next(), Gen: gen}
	for _, p := range b.h.Pubs {
		if p.U == u {
			d.Topic = p.Topic
		}
	}
	if ack {
		d.Acked, d.AckGen, d.AckTime = true, gen, b.at(b.next())
	}
	b.h.Deliveries = append(b.h.Deliveries, d)
}

func (b *chSynth) restart(gen int, kill bool) {
	s := b.next()
	b.h.Restarts = append(b.h.Restarts, chRestart{Gen: gen, Kill: kill, At: s, Time: b.at(s)})
}

// TestChaosCheckerCanFail proves each rule of checkChaos can fail, and that
// the excuses (filter, reset, deleted incarnations, unknown publishes,
// redelivery after a failure) keep it from failing where it must not.
func TestChaosCheckerCanFail(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *chSynth)
		rules []string // exactly these rules fail
		check func(t *testing.T, r *chReport)
	}{
		{"clean", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u1, u2 := b.pub("t", 1, "k", 1, "a"), b.pub("t", 1, "k", 2, "a")
			b.deliver(g, "", u1, 0, 1, false) // nacked: comes back
			b.deliver(g, "", u1, 1, 1, true)
			b.deliver(g, "", u2, 0, 1, true)
		}, nil, func(t *testing.T, r *chReport) {
			if r.Published != 2 || r.Required != 2 || r.Delivered != 3 || r.Redelivered != 1 || r.Distinct != 2 {
				t.Errorf("counts: %s", r.Summary())
			}
		}},
		{"missing", func(b *chSynth) {
			b.topic("t", 1)
			b.group("g", 1, nil)
			b.pub("t", 1, "k", 1, "a")
		}, []string{"1-confirmed-lost", "1-missing"}, func(t *testing.T, r *chReport) {
			if r.Missing != 1 || r.ConfirmedLost != 1 {
				t.Errorf("missing %d, confirmed lost %d", r.Missing, r.ConfirmedLost)
			}
		}},
		{"missing in one scope, delivered in another: not lost from the store", func(b *chSynth) {
			b.topic("t", 1)
			b.group("g", 1, nil)
			h := b.group("h", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.h.Pubs[len(b.h.Pubs)-1].Stream = true
			b.deliver(h, "", u, 0, 1, true)
		}, []string{"1-missing"}, func(t *testing.T, r *chReport) {
			if r.Missing != 1 || r.ConfirmedLost != 0 || r.StreamPublished != 1 {
				t.Errorf("%s", r.Summary())
			}
		}},
		{"stored twice: a resend not deduplicated", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.h.Pubs[len(b.h.Pubs)-1].Stream, b.h.Pubs[len(b.h.Pubs)-1].Resent = true, 1
			b.deliver(g, "", u, 0, 1, false)
			b.deliver(g, "", u, 1, 1, false) // a retry's copy has its own id: no count
			b.deliver(g, "", u, 0, 1, true)
			for i, id := range []string{"m1", "r1", "m2"} {
				b.h.Deliveries[i].MessageID = id
			}
		}, []string{"dup-stored"}, func(t *testing.T, r *chReport) {
			if r.DupStored != 1 || r.StreamResent != 1 {
				t.Errorf("%s", r.Summary())
			}
		}},
		{"redelivered with the same messageId is not stored twice", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.deliver(g, "", u, 0, 1, false)
			b.restart(1, true)
			b.deliver(g, "", u, 0, 2, true)
			b.h.Deliveries[0].MessageID, b.h.Deliveries[1].MessageID = "m1", "m1"
			b.h.Deliveries[1].Stream = true
		}, nil, func(t *testing.T, r *chReport) {
			if r.DupStored != 0 || r.StreamDelivered != 1 || r.StreamAcked != 1 {
				t.Errorf("%s", r.Summary())
			}
		}},
		{"excused: filter, reset, deleted topic, deleted group, before subscribe, unknown", func(b *chSynth) {
			b.topic("t", 1)
			b.pub("t", 1, "k", 1, "a") // before the group: not required
			g := b.group("g", 1, func(g *chGroup) { g.LastOffset = true })
			g.Filters = append(g.Filters, chFilter{Topic: "t", Filter: "a || b", From: b.next()})
			b.pub("t", 1, "k", 2, "c") // filtered out
			b.pub("t", 1, "k", 3, "a") // reset below skips it
			g.Resets = append(g.Resets, chReset{Topic: "t", At: b.next()})
			b.pub("t", 1, "k", 4, "b") // topic incarnation deleted below
			b.deleteTopic("t", 1)
			g2 := b.group("h", 1, nil)
			b.topic("t", 2)
			b.pub("t", 2, "k", 1, "c") // g filters it out; group h is deleted below
			g2.Deleted = b.next()
			b.u++
			b.h.Pubs = append(b.h.Pubs, chPublish{U: b.u, Topic: "t", TInc: 2, Key: "k", Seq: 2, Tag: "a", Sent: b.next(), Done: b.next(), Status: chPubUnknown})
			b.h.Pubs = append(b.h.Pubs, chPublish{U: 99, Topic: "t", TInc: 2, Key: "k", Seq: 2, Tag: "a", Sent: b.next(), Done: b.next(), Status: chPubUnknown})
			b.deliver(g, "", 99, 0, 1, true) // an unknown publish may be delivered
		}, nil, func(t *testing.T, r *chReport) {
			if r.Required != 0 || r.UnknownDelivered != 1 {
				t.Errorf("counts: %s", r.Summary())
			}
		}},
		{"filter leak", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			g.Filters = append(g.Filters, chFilter{Topic: "t", Filter: "a", From: b.next()})
			u := b.pub("t", 1, "k", 1, "b")
			b.deliver(g, "", u, 0, 1, true)
		}, []string{"1-filter-leak"}, nil},
		{"filters apply when consumed: excluded by a later filter is excused", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			g.Filters[0].Filter = "a"
			b.pub("t", 1, "k", 1, "a")
			g.Filters = append(g.Filters, chFilter{Topic: "t", Filter: "b", From: b.next()})
			b.pub("t", 1, "k", 2, "a") // excluded by the new filter
		}, nil, func(t *testing.T, r *chReport) {
			if r.Required != 0 || r.Missing != 0 || r.ExcusedByFilter != 1 {
				t.Errorf("%s\n%s", r.Summary(), r.Failure())
			}
		}},
		{"filters apply when consumed: a later filter may let a message through", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			g.Filters[0].Filter = "a"
			u := b.pub("t", 1, "k", 1, "b")
			g.Filters = append(g.Filters, chFilter{Topic: "t", Filter: "b", From: b.next()})
			b.deliver(g, "", u, 0, 1, true)
		}, nil, nil},
		{"inversion", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, func(g *chGroup) { g.Orderly = true })
			u1, u2, u3 := b.pub("t", 1, "k", 1, "a"), b.pub("t", 1, "k", 2, "a"), b.pub("t", 1, "k", 3, "a")
			b.deliver(g, "", u1, 0, 1, true)
			b.deliver(g, "", u3, 0, 1, true)
			b.deliver(g, "", u2, 0, 1, true)
		}, []string{"2-order-inversion"}, func(t *testing.T, r *chReport) {
			if r.Inversions != 1 {
				t.Errorf("inversions %d", r.Inversions)
			}
		}},
		{"orderly redelivery after a failure is no inversion", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, func(g *chGroup) { g.Orderly = true })
			u1, u2 := b.pub("t", 1, "k", 1, "a"), b.pub("t", 1, "k", 2, "a")
			b.deliver(g, "", u1, 0, 1, false)
			b.restart(1, true)
			b.deliver(g, "", u1, 0, 2, true)
			b.deliver(g, "", u2, 0, 2, true)
			b.deliver(g, "", u1, 0, 2, true) // repeats an earlier one: allowed, it is acked "live" though
		}, []string{"4-redelivered-acked-live"}, nil},
		{"3a deleted topic incarnation to a later group", func(b *chSynth) {
			b.topic("t", 1)
			u := b.pub("t", 1, "k", 1, "a")
			b.deleteTopic("t", 1)
			g := b.group("g", 1, nil)
			b.deliver(g, "", u, 0, 1, true)
		}, []string{"3a-deleted-topic"}, nil},
		{"3a and 3b at once count once", func(b *chSynth) {
			b.topic("t", 1)
			u := b.pub("t", 1, "k", 1, "a")
			b.deleteTopic("t", 1)
			g := b.group("g", 1, func(g *chGroup) { g.LastOffset = true })
			b.deliver(g, "", u, 1, 1, true)
		}, []string{"3a-deleted-topic"}, func(t *testing.T, r *chReport) {
			if r.Resurrected != 1 {
				t.Errorf("resurrected %d, want 1", r.Resurrected)
			}
		}},
		{"3b LAST_OFFSET group gets an older message", func(b *chSynth) {
			b.topic("t", 1)
			u := b.pub("t", 1, "k", 1, "a")
			g := b.group("g", 2, func(g *chGroup) { g.LastOffset = true })
			b.deliver(g, "", u, 0, 1, true)
		}, []string{"3b-before-subscribe"}, nil},
		{"3b broadcasting consumerId before its first receive", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, func(g *chGroup) { g.LastOffset, g.Broadcast = true, true })
			u := b.pub("t", 1, "k", 1, "a")
			g.FirstSeen["c1"] = chFirstSeen{Sent: b.next(), Done: b.next()}
			b.deliver(g, "c1", u, 0, 1, true)
		}, []string{"3b-before-subscribe"}, nil},
		{"3c retry from an old incarnation", func(b *chSynth) {
			b.topic("t", 1)
			g1 := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.deliver(g1, "", u, 0, 1, false)
			g1.Deleted = b.next()
			g2 := b.group("g", 2, nil)
			b.deliver(g2, "", u, 1, 1, true)
		}, []string{"3c-retry-from-old"}, nil},
		{"3d stale topic incarnation", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.deleteTopic("t", 1)
			for range 12 {
				b.next() // three seconds, at 250 ms a step
			}
			b.deliver(g, "", u, 0, 1, true)
		}, []string{"3d-stale-topic"}, nil},
		{"4 redelivered after SIGTERM (even with a kill after it)", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.deliver(g, "", u, 0, 1, true)
			b.restart(1, false)
			b.restart(2, true)
			b.deliver(g, "", u, 0, 3, true)
		}, []string{"4-redelivered-acked-after-sigterm"}, func(t *testing.T, r *chReport) {
			if r.AckedTerm != 1 || r.AckedKill != 0 {
				t.Errorf("%s", r.Summary())
			}
		}},
		{"5 kill -9: counted, within the window and bound", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.deliver(g, "", u, 0, 1, true)
			b.restart(1, true)
			b.deliver(g, "", u, 0, 2, true)
		}, nil, func(t *testing.T, r *chReport) {
			if r.AckedKill != 1 || !slices.Equal(r.AckedKillPerKill, []int{1}) {
				t.Errorf("%s", r.Summary())
			}
		}},
		{"5 kill -9: acked long before the kill", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.deliver(g, "", u, 0, 1, true)
			b.next()
			b.next()
			b.next()
			b.restart(1, true)
			b.deliver(g, "", u, 0, 2, true)
		}, []string{"5-acked-long-before-kill"}, nil},
		{"5 kill -9: over the bound", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			var us []int64
			for i := range chaosKill9AckedBound + 1 {
				us = append(us, b.pub("t", 1, "k", i+1, "a"))
			}
			for _, u := range us {
				d := chDelivery{Group: "g", GInc: 1, U: u, Topic: "t", RecvSent: b.next(), RecvAt: b.next(), Gen: 1, Acked: true, AckGen: 1}
				d.RecvSentT, d.AckTime = b.at(d.RecvSent), b.at(d.RecvAt)
				b.h.Deliveries = append(b.h.Deliveries, d)
			}
			b.restart(1, true)
			for i := range b.h.Deliveries {
				b.h.Deliveries[i].AckTime = b.h.Restarts[0].Time // all in the last commit
			}
			for _, u := range us {
				b.deliver(g, "", u, 0, 2, true)
			}
		}, []string{"5-kill9-bound"}, nil},
		{"a stream delivery of an earlier run read after a later run's ack is no redelivery", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			u := b.pub("t", 1, "k", 1, "a")
			b.restart(1, true)
			b.deliver(g, "", u, 0, 2, true)
			b.deliver(g, "", u, 0, 1, false) // queued on a run-1 stream, read late
			b.h.Deliveries[1].Stream = true
		}, nil, func(t *testing.T, r *chReport) {
			if r.AckedKill != 0 || r.AckedLive != 0 {
				t.Errorf("%s", r.Summary())
			}
		}},
		{"phantom", func(b *chSynth) {
			b.topic("t", 1)
			g := b.group("g", 1, nil)
			b.h.Pubs = append(b.h.Pubs, chPublish{U: 7, Topic: "t", TInc: 1, Key: "k", Seq: 1, Tag: "a", Sent: b.next(), Done: b.next(), Status: chPubRejected})
			b.deliver(g, "", 7, 0, 1, true)
		}, []string{"phantom"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newChSynth()
			c.build(b)
			r := checkChaos(&b.h)
			if got := r.Rules(); !slices.Equal(got, c.rules) {
				t.Errorf("failing rules %v, want %v\n%s\n%s", got, c.rules, r.Summary(), r.Failure())
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}
