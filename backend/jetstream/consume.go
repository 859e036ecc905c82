package jetstream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
)

// Receive implements core.ConsumeService over the group's pull consumers.
//
// Every leased message is NAKed with a delay equal to its lease
// (invisibleSeconds): JetStream keeps it pending and redelivers it when
// the lease ends unless an ack comes first, from any connection. The
// handle carries the ack subject, so any instance settles it.
func (b *Backend) Receive(ctx context.Context, group string, req core.ReceiveRequest) ([]core.Received, error) {
	if err := req.Validate(); err != nil { // the receive limits, core/limits.go
		return nil, err
	}
	g, err := b.cachedGroup(ctx, group)
	if err != nil {
		return nil, err
	}
	if g.Push != nil {
		return nil, core.Errorf(core.EConflict, "group %q is a push (webhook) group", group)
	}
	return b.receive(ctx, g, req)
}

// receive is Receive on a loaded group (the push runner calls it for push
// groups too).
func (b *Backend) receive(ctx context.Context, g core.Group, req core.ReceiveRequest) ([]core.Received, error) {
	group := g.Name
	consumerID := ""
	if g.MessageModel == core.Broadcasting {
		if req.ConsumerID == "" { // its syntax: ReceiveRequest.Validate
			return nil, core.FieldError("consumerId", "is required for a BROADCASTING group")
		}
		consumerID = req.ConsumerID
	}
	invisible := req.Invisible
	if invisible == 0 {
		invisible = time.Duration(g.InvisibleSeconds) * time.Second
	}
	if invisible <= 0 {
		invisible = core.DefaultInvisibleSeconds * time.Second
	}
	refs, err := b.subscribedConsumers(g, consumerID)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		if err := b.ensureConsumer(ctx, g, ref, false); err != nil {
			return nil, err
		}
	}

	key := group + "/" + consumerID
	b.mu.Lock()
	if b.draining {
		b.mu.Unlock()
		return nil, core.ErrClosed
	}
	st := b.stash[key]
	if st == nil {
		st = &stash{signal: make(chan struct{})}
		b.stash[key] = st
	}
	if req.Wait > 0 {
		if b.waiting[group] >= b.opts.MaxWaitingPerGroup || b.waitingAll >= b.opts.MaxWaiting {
			b.mu.Unlock()
			return nil, core.Errorf(core.ETooMany, "too many waiting receives; retry later")
		}
		b.waiting[group]++
		b.waitingAll++
		defer func() {
			b.mu.Lock()
			b.waiting[group]--
			b.waitingAll--
			b.mu.Unlock()
		}()
	}
	b.mu.Unlock()

	deadline := time.Now().Add(req.Wait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		// A paused group hands nothing out (pause.go): wait for its
		// resume, through any instance, or the end of the wait.
		if cur, err := b.cachedGroup(ctx, group); err != nil {
			return nil, err
		} else if cur.Paused {
			if !b.awaitResume(ctx, group, time.Until(deadline)) {
				return nil, nil
			}
			continue
		}
		items, signal := b.take(ctx, st, req.MaxMessages, g)
		if len(items) == 0 && len(refs) > 0 {
			done := b.pullNow(key, st, refs, req.MaxMessages)
			select {
			case <-signal:
			case <-done:
			case <-ctx.Done():
				return nil, nil
			}
			items, signal = b.take(ctx, st, req.MaxMessages, g)
		}
		if len(items) > 0 {
			got, err := b.lease(ctx, g, consumerID, items, invisible)
			if len(got) > 0 || err != nil {
				return got, err
			}
			continue // every message was filtered out or dead-lettered
		}
		left := time.Until(deadline)
		if left <= 0 || len(refs) == 0 {
			return nil, nil
		}
		b.parkPulls(key, st, refs, pullExpiry(left))
		if timer == nil {
			timer = time.NewTimer(left)
		}
		select {
		case <-signal:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		case <-b.drain:
			return nil, nil
		}
	}
}

// take removes up to n stashed messages. One stashed longer than half its
// consumer's ack wait is NAKed instead (JetStream redelivers it now): its
// server-side timer may be close to ending.
func (b *Backend) take(ctx context.Context, st *stash, n int, g core.Group) ([]pulled, <-chan struct{}) {
	ackWait := time.Duration(max(g.InvisibleSeconds, 1)) * time.Second
	b.mu.Lock()
	var out, stale []pulled
	i := 0
	for ; i < len(st.items) && len(out) < n; i++ {
		if time.Since(st.items[i].at) > ackWait/2 {
			stale = append(stale, st.items[i])
			continue
		}
		out = append(out, st.items[i])
	}
	st.items = append(st.items[:0:0], st.items[i:]...)
	signal := st.signal
	b.mu.Unlock()
	if len(stale) > 0 {
		subs := make([]string, len(stale))
		for i, p := range stale {
			subs[i] = p.msg.Reply
		}
		b.requestAll(ctx, subs, []byte("-NAK"))
	}
	return out, signal
}

// pullNow asks every consumer at once for what is ready (no_wait), up
// to n each. The pulls run on goroutines owned by the backend and stash
// what they get (signalling each arrival), so the caller can take the
// first message at once while a request still runs; the returned channel
// closes when every pull it started ended.
//
// An ORDERLY queue's consumer (MaxAckPending 1) is asked only when this
// instance has no pull of key on it yet, parked or no_wait: it has at
// most one message out, which an earlier pull already asks for, and a
// second pull could only come back empty after noWaitExpiry. Without
// this, every arrival woke each waiting receive of the group into one
// no_wait pull per queue, nearly all empty: with 32 receives on 8 queues
// that churn, not the claim, was what capped the drain (TestOrderlyDrain).
func (b *Backend) pullNow(key string, st *stash, refs []consumerRef, n int) <-chan struct{} {
	done := make(chan struct{})
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		close(done)
		return done
	}
	var wg sync.WaitGroup
	for _, ref := range refs {
		pk := ""
		if ref.queue >= 0 {
			pk = pullKey(key, ref)
			if b.pulls[pk] || b.noWaitPulls[pk] {
				continue
			}
			b.noWaitPulls[pk] = true
		}
		wg.Add(1)
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer wg.Done()
			ctx, cancel := b.stopContext()
			defer cancel()
			missing, err := b.pull(ctx, ref, n, 0, func(m *nats.Msg) { b.stashOne(st, pulled{msg: m, ref: ref, at: time.Now()}) })
			if missing || err != nil {
				b.ensured.Delete(ref.stream + "/" + ref.name) // recreated on the next receive
			}
			if pk != "" {
				b.mu.Lock()
				delete(b.noWaitPulls, pk)
				b.mu.Unlock()
			}
		}()
	}
	b.mu.Unlock()
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// pullKey names the pulls of (group / consumerId) key on one consumer.
func pullKey(key string, ref consumerRef) string {
	return key + "\x00" + ref.stream + "/" + ref.name
}

// stopContext is a context that ends at Close.
func (b *Backend) stopContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-b.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// stashOne adds a delivered message to st and wakes its receives.
func (b *Backend) stashOne(st *stash, p pulled) {
	b.mu.Lock()
	st.items = append(st.items, p)
	close(st.signal)
	st.signal = make(chan struct{})
	b.mu.Unlock()
}

// pullMargin is how much sooner than its receive a waiting pull expires
// on the server. A pull still waiting there after its receive answered
// would take the next message into this instance's stash, where a
// receive through another instance cannot see it until the ack wait
// ends; a message that comes in the margin stays in the stream for the
// next receive, on any instance.
const pullMargin = 50 * time.Millisecond

// pullExpiry is the expiry of a waiting pull for a receive with left to
// wait: left less pullMargin, or half of left when left is shorter.
func pullExpiry(left time.Duration) time.Duration {
	if left > 2*pullMargin {
		return left - pullMargin
	}
	return left / 2
}

// parkPulls starts a waiting pull on every consumer of key that has none
// from this instance. Each runs on its own goroutine, owned by the backend
// (Close stops it), and stashes what it gets.
//
// A parked pull asks for one message: that wakes a waiting receive, which
// takes what else is ready with a no_wait pull. A larger batch kept the
// request first in the consumer's queue of waiting pulls (served in
// arrival order, across instances) after its receive had answered with
// its first message (pullExpiry covers a receive that answers empty), so
// the messages that came next went to this instance's stash, where no
// receive might be waiting, while the receives waiting on the other
// instance got nothing until the batch filled or the pull expired: up to
// a whole long poll between publish and receive.
func (b *Backend) parkPulls(key string, st *stash, refs []consumerRef, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, ref := range refs {
		pk := pullKey(key, ref)
		if b.pulls[pk] {
			continue
		}
		b.pulls[pk] = true
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			ctx, cancel := b.stopContext()
			defer cancel()
			_, _ = b.pull(ctx, ref, 1, wait, func(m *nats.Msg) { b.stashOne(st, pulled{msg: m, ref: ref, at: time.Now()}) })
			b.mu.Lock()
			delete(b.pulls, pk)
			// Parked receives re-park: without a waiting pull they would
			// see nothing new until their own wait ran out.
			close(st.signal)
			st.signal = make(chan struct{})
			b.mu.Unlock()
		}()
	}
}

// lease turns pulled messages into leased ones: drops stale ORDERLY
// deliveries (orderclaim.go), dead-letters those past maxReconsumeTimes,
// acks those the subscription's tag filter rejects, and NAKs the rest
// with a delay of invisible (the lease).
func (b *Backend) lease(ctx context.Context, g core.Group, consumerID string, items []pulled, invisible time.Duration) ([]core.Received, error) {
	filters := map[string]core.Filter{}
	for _, s := range g.Subscriptions {
		f, _ := core.ParseFilter(s.Filter)
		filters[s.Topic] = f
	}
	type cand struct {
		p    pulled
		meta ackMeta
		m    *core.Message
	}
	// The topics the growth fence checks need read again, read beside
	// the claims (fence.go).
	og := orderlyGateState{views: b.startViews(items)}
	defer og.views.wait()
	// First the ORDERLY claim (orderclaim.go): a stale delivery is neither
	// dead-lettered nor handed out.
	items, ferr := b.claimOrderly(ctx, g.Name, items)
	if len(items) == 0 && ferr != nil {
		return nil, ferr
	}
	ackWait := time.Duration(max(g.InvisibleSeconds, 1)) * time.Second
	var keep []cand
	var skip []string
	for _, p := range items {
		meta, ok := parseAck(p.msg.Reply)
		if !ok {
			continue
		}
		m := decodeMessage(p.msg.Subject, p.msg.Header, p.msg.Data, meta.sseq, meta.ts)
		returns := 0
		if p.ref.queue >= 0 {
			returns = b.fenceReturns(ctx, meta, og.views) // not failures (fence.go)
		}
		m.ReconsumeTimes = int(meta.delivered) - 1 - returns
		if policy.Exhausted(m.ReconsumeTimes, g.MaxReconsumeTimes) {
			// Failed by lease expiry more often than allowed; not when an
			// ORDERLY claim held up since moved to another delivery.
			if !b.reconfirmClaims(ctx, g.Name, []pulled{p}, ackWait)[0] {
				continue
			}
			if err := b.deadLetter(ctx, g.Name, p.msg, meta, m.ReconsumeTimes-1, expiredReason); err != nil {
				b.log.Warn().Err(err).Str("group", g.Name).Msg("dead-letter on receive failed; retried at redelivery")
			} else {
				b.recordID(g.Name, m.UserID(), tlEvent{Type: core.EventLeaseExpired})
				b.recordID(g.Name, m.UserID(), tlEvent{Type: core.EventDeadLettered})
			}
			continue
		}
		if p.ref.queue >= 0 && b.orderlyGate(ctx, g, consumerID, &og, p, meta, m, returns) {
			continue // parked, skipped or held at a growth fence (blocked.go, fence.go)
		}
		if f, ok := filters[p.ref.topic]; ok && !f.All() && !f.MatchTags(m.Tags) {
			skip = append(skip, p.msg.Reply)
			continue
		}
		keep = append(keep, cand{p, meta, m})
	}
	if len(skip) > 0 {
		b.requestAll(ctx, skip, []byte("+ACK"))
	}
	// A message that just arrived, leased for the consumer's own ack wait,
	// needs no NAK: JetStream redelivers it one ack wait after it sent it,
	// and the handle's deadline is set leaseMargin before that. Any other
	// lease is set with a NAK delay (one more replicated write).
	var subs []string
	var nakIdx []int
	for i, c := range keep {
		if invisible != ackWait || time.Since(c.p.at) > freshFor {
			subs, nakIdx = append(subs, c.p.msg.Reply), append(nakIdx, i)
		}
	}
	start := time.Now()
	errs := make([]error, len(keep))
	for j, err := range b.requestAll(ctx, subs, nakDelay(invisible)) {
		errs[nakIdx[j]] = err
	}
	naked := make([]bool, len(keep))
	for _, i := range nakIdx {
		naked[i] = true
	}
	// The claims were written before the waits above (orderclaim.go):
	// one held up since is confirmed again before it is handed out. Only
	// leased deliveries are asked about; the zero pulled of one that was
	// not has no claim and is skipped below anyway.
	leased := make([]pulled, len(keep))
	for i, c := range keep {
		if errs[i] == nil {
			leased[i] = c.p
		}
	}
	confirmed := b.reconfirmClaims(ctx, g.Name, leased, ackWait)
	var out []core.Received
	for i, c := range keep {
		if errs[i] != nil {
			continue // not leased: JetStream redelivers it after its ack wait
		}
		if !confirmed[i] {
			continue // another delivery holds its queue's claim: not handed out
		}
		until := start.Add(invisible)
		if !naked[i] {
			until = c.p.at.Add(invisible - leaseMargin)
		}
		h := b.sealer.Seal(encodeLease(lease{
			sseq: c.meta.sseq, delivered: c.meta.delivered, deadline: until,
			group: g.Name, consumerID: consumerID, reply: c.p.msg.Reply,
		}))
		out = append(out, core.Received{Message: c.m, ReceiptHandle: h, InvisibleUntil: until})
		if c.p.ref.queue >= 0 {
			// With the claim log (orderclaim.go), what a fault run needs
			// to place an ORDERLY message's every hand-out. (Guarded: the
			// id is a map look-up, paid per hand-out even with debug off.)
			if e := b.log.Debug(); e.Enabled() {
				e.Str("group", g.Name).Int("queue", c.p.ref.queue).Str("id", c.m.UserID()).
					Uint64("sseq", c.meta.sseq).Uint64("delivered", c.meta.delivered).
					Int("reconsume", c.m.ReconsumeTimes).Msg("ORDERLY handed out")
			}
		}
		who := consumerID
		if who == "" {
			who = b.opts.InstanceID
		}
		b.recordID(g.Name, c.m.UserID(), tlEvent{Type: core.EventDelivered, ConsumerID: who,
			Attempt: c.m.ReconsumeTimes + 1, Stream: c.meta.stream, Seq: c.meta.sseq})
	}
	if len(out) == 0 && len(keep) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

const (
	// freshFor: a message that arrived this recently is leased without a
	// NAK when the lease equals the consumer's ack wait.
	freshFor = 100 * time.Millisecond
	// leaseMargin: such a lease's deadline is this much before the
	// server's redelivery (which counts from when the server sent it).
	leaseMargin = 250 * time.Millisecond
)

func nakDelay(d time.Duration) []byte {
	return []byte(fmt.Sprintf(`-NAK {"delay":%d}`, int64(d)))
}

// lease is what a receipt handle of this backend says.
type lease struct {
	sseq, delivered uint64
	deadline        time.Time
	group           string
	consumerID      string
	reply           string // the JetStream ack subject
	meta            ackMeta
	// ended: an operator ended the message (skip, park: blocked.go); a
	// late ack is expired even though the ack floor passed it.
	ended bool
}

// sealedVersion is the first byte of this backend's handle payloads (the
// embedded gateway's are 1): a handle of one backend never parses as the
// other's.
const sealedVersion = 2

func encodeLease(l lease) []byte {
	b := binary.AppendUvarint([]byte{sealedVersion}, l.sseq)
	b = binary.AppendUvarint(b, l.delivered)
	b = binary.AppendUvarint(b, uint64(l.deadline.UnixMilli()))
	for _, s := range []string{l.group, l.consumerID, l.reply} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func decodeLease(p []byte) (lease, bool) {
	var l lease
	if len(p) == 0 || p[0] != sealedVersion {
		return l, false
	}
	p = p[1:]
	var nums [3]uint64
	for i := range nums {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return l, false
		}
		nums[i], p = v, p[n:]
	}
	var strs [3]string
	for i := range strs {
		v, n := binary.Uvarint(p)
		if n <= 0 || v > uint64(len(p)-n) {
			return l, false
		}
		strs[i], p = string(p[n:n+int(v)]), p[n+int(v):]
	}
	if len(p) != 0 || nums[2] > 1<<50 {
		return l, false
	}
	l.sseq, l.delivered, l.deadline = nums[0], nums[1], time.UnixMilli(int64(nums[2]))
	l.group, l.consumerID, l.reply = strs[0], strs[1], strs[2]
	meta, ok := parseAck(l.reply)
	if !ok || meta.sseq != l.sseq || meta.delivered != l.delivered {
		return l, false
	}
	l.meta = meta
	return l, true
}

// A lease override (bucket MQGATE_LEASES, key <stream>.<consumer hex>.<sseq>)
// records what a nack or an extend did to one delivery, so that every
// instance answers the same for its handle: "<delivered> <n|x> <deadline ms>".
func leaseKey(l lease) string {
	return leaseConsumerKey(l) + "." + strconv.FormatUint(l.sseq, 10)
}

// leaseConsumerKey is the part of leaseKey that names the consumer.
func leaseConsumerKey(l lease) string {
	return fmt.Sprintf("%s.%x", l.meta.stream, l.meta.consumer)
}

type override struct {
	delivered uint64
	nacked    bool
	deadline  time.Time
	// reason is a nack's reason (core.PropLastReason), carried with the
	// retry: the message itself is not copied on JetStream.
	reason string
}

func (b *Backend) override(ctx context.Context, l lease) (override, bool, error) {
	v, found, err := b.leaderGet(ctx, "KV_"+leasesBucket, "$KV."+leasesBucket+"."+leaseKey(l))
	if err != nil || !found {
		return override{}, false, err
	}
	// "<delivered> <n|x> <deadline ms>[ <reason>]"
	f := strings.SplitN(string(v), " ", 4)
	if len(f) < 3 {
		return override{}, false, nil // a delete or purge marker
	}
	d, _ := strconv.ParseUint(f[0], 10, 64)
	ms, _ := strconv.ParseInt(f[2], 10, 64)
	o := override{delivered: d, nacked: f[1] == "n", deadline: time.UnixMilli(ms)}
	if len(f) == 4 {
		o.reason = f[3]
	}
	return o, true, nil
}

// leaderGet reads the last message of subject from the stream's leader
// (STREAM.MSG.GET, not a direct get: a direct get may be served by a
// follower that has not applied a write another instance just made, and
// an override must be seen by the next ack on any instance).
func (b *Backend) leaderGet(ctx context.Context, stream, subject string) ([]byte, bool, error) {
	m, err := b.leaderMsg(ctx, stream, msgGet{LastBySubj: subject})
	if errors.Is(err, jsapi.ErrMsgNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, mapErr(err)
	}
	return m.Data, true, nil
}

func (b *Backend) putOverride(ctx context.Context, l lease, o override) error {
	st := "x"
	if o.nacked {
		st = "n"
	}
	v := fmt.Sprintf("%d %s %d", o.delivered, st, o.deadline.UnixMilli())
	if o.reason != "" {
		v += " " + o.reason
	}
	_, err := b.leases.Put(ctx, leaseKey(l), []byte(v))
	return mapErr(err)
}

// openHandle decodes a handle of group (false: invalid).
func (b *Backend) openHandle(group, h string) (lease, bool) {
	p, err := b.sealer.Open(h)
	if err != nil {
		return lease{}, false
	}
	l, ok := decodeLease(p)
	if !ok || l.group != group {
		return lease{}, false
	}
	return l, true
}

// leaseStatus says whether l is live at now, given its override (if
// found), and returns l marked ended when the override ended its message
// and with the deadline the override set (an extend's).
func leaseStatus(l lease, o override, found bool, now time.Time) (lease, core.HandleStatus) {
	deadline := l.deadline
	if found {
		l.ended = o.delivered == endedDelivery
		switch {
		case o.delivered > l.delivered:
			return l, core.HandleExpired // delivered again since
		case o.delivered == l.delivered && o.nacked:
			return l, core.HandleExpired
		case o.delivered == l.delivered:
			deadline = o.deadline
		}
	}
	l.deadline = deadline
	if !now.Before(deadline) {
		return l, core.HandleExpired
	}
	return l, core.HandleOK
}

type checked struct {
	l  lease
	st core.HandleStatus
}

// checkAll decodes handles and says whether each lease is live now. An
// override is read (from the leases bucket's leader, concurrently) only
// for a handle that may have one (overrides.go); when the view cannot
// say, for every handle.
func (b *Backend) checkAll(ctx context.Context, group string, handles []string, now time.Time) ([]checked, error) {
	out := make([]checked, len(handles))
	var live []int
	for i, h := range handles {
		l, ok := b.openHandle(group, h)
		if !ok {
			out[i].st = core.HandleInvalid
			continue
		}
		out[i].l = l
		live = append(live, i)
	}
	if len(live) == 0 {
		return out, nil
	}
	readAll := b.barrier(ctx) != nil
	errs := make([]error, len(handles))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, i := range live {
		l := out[i].l
		if !readAll && !b.view.mayHaveOverride(l) {
			b.overrideSkips.Add(1)
			out[i].l, out[i].st = leaseStatus(l, override{}, false, now)
			continue
		}
		b.overrideReads.Add(1)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			o, found, err := b.override(ctx, l)
			out[i].l, out[i].st = leaseStatus(l, o, found, now)
			errs[i] = err
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// Ack implements core.ConsumeService: a synchronous JetStream ack of each live
// lease. A repeated ack answers ok while the lease lasts, and after it when
// the consumer's ack floor has passed the message.
func (b *Backend) Ack(ctx context.Context, group string, handles []string) ([]core.HandleResult, error) {
	if err := core.ValidateHandles(handles); err != nil {
		return nil, err
	}
	if _, err := b.cachedGroup(ctx, group); err != nil {
		return nil, err
	}
	res := make([]core.HandleResult, len(handles))
	var subs []string
	var idx []int
	now := time.Now()
	checked, err := b.checkAll(ctx, group, handles, now)
	if err != nil {
		return nil, err
	}
	for i, h := range handles {
		res[i].ReceiptHandle = h
		l, st := checked[i].l, checked[i].st
		if st == core.HandleExpired && !l.ended && b.ackedBefore(ctx, l) {
			st = core.HandleOK
		} else if st == core.HandleOK {
			subs, idx = append(subs, l.reply), append(idx, i)
		}
		res[i].Status = st
	}
	for _, err := range b.requestAll(ctx, subs, []byte("+ACK")) {
		if err != nil {
			return nil, err
		}
	}
	// JetStream applies an ack once it is replicated, and its redelivery
	// timer does not wait for that: an ack confirmed after its lease
	// ended may have been applied after the message went out again (a
	// fault run, a node rejoining and acks slow: an ack answered ok and
	// its message delivered again at its ack wait). Such an ack answers
	// expired, which says the message may come again.
	confirmed := time.Now()
	for _, i := range idx {
		b.recordSettle(checked[i].l, tlEvent{Type: core.EventAcked})
		if !confirmed.Before(checked[i].l.deadline) {
			res[i].Status = core.HandleExpired
		}
	}
	return res, nil
}

// ackedBefore reports whether the consumer's ack floor is at or past the
// lease's message (it was acknowledged, by this handle or a later one).
func (b *Backend) ackedBefore(ctx context.Context, l lease) bool {
	c, err := b.consumer(ctx, l.meta.stream, l.meta.consumer)
	if err != nil {
		return false
	}
	return c.CachedInfo().AckFloor.Stream >= l.sseq
}

// Nack implements core.ConsumeService with the retry policy every backend
// shares (policy.Retry): level 0 is 3 + reconsumeTimes, a level above the
// last is the last, the 1 + maxReconsumeTimes-th failure (or level -1)
// goes to the group's DLQ stream. A retry is a JetStream NAK with the
// level's delay on the same consumer (ordering of ORDERLY queues holds:
// the queue's consumer has one message out at a time). The reason is kept
// in the lease override with the retry (the message is not copied on
// JetStream) and on the dead-letter copy (Mq-Last-Reason, shown as
// lastReason).
func (b *Backend) Nack(ctx context.Context, group string, handles []string, delayLevel int, reason string) ([]core.HandleResult, error) {
	if err := core.ValidateNack(delayLevel, reason); err != nil {
		return nil, err
	}
	if err := core.ValidateHandles(handles); err != nil {
		return nil, err
	}
	reason = core.ClipReason(reason)
	g, err := b.cachedGroup(ctx, group)
	if err != nil {
		return nil, err
	}
	res := make([]core.HandleResult, len(handles))
	now := time.Now()
	checked, err := b.checkAll(ctx, group, handles, now)
	if err != nil {
		return nil, err
	}
	for i, h := range handles {
		res[i].ReceiptHandle = h
		l, st := checked[i].l, checked[i].st
		res[i].Status = st
		if st != core.HandleOK {
			continue
		}
		times := int(l.delivered) - 1 - b.fenceReturns(ctx, l.meta, nil)
		if err := b.putOverride(ctx, l, override{delivered: l.delivered, nacked: true, deadline: now, reason: reason}); err != nil {
			return nil, err
		}
		out := policy.Retry(times, g.MaxReconsumeTimes, delayLevel)
		b.recordSettle(l, tlEvent{Type: core.EventNacked, DelayLevel: delayLevel, Reason: reason})
		if out.DeadLetter {
			if err := b.deadLetterLease(ctx, g.Name, l, times, reason); err != nil {
				return nil, err
			}
			b.recordSettle(l, tlEvent{Type: core.EventDeadLettered})
			continue
		}
		if errs := b.requestAll(ctx, []string{l.reply}, nakDelay(policy.LevelDelay(b.opts.DelayLevels, out.Level))); errs[0] != nil {
			return nil, errs[0]
		}
		b.recordSettle(l, tlEvent{Type: core.EventRetryScheduled, DelayLevel: out.Level})
		b.noteNack(ctx, l, times, reason) // ORDERLY: the queue is blocked (blocked.go)
	}
	return res, nil
}

// Extend implements core.ConsumeService: NAK with a delay of invisible (the
// server's timer restarts) and an override with the new deadline.
func (b *Backend) Extend(ctx context.Context, group string, handles []string, invisible time.Duration) ([]core.HandleResult, error) {
	if err := core.ValidateLease(invisible); err != nil {
		return nil, err
	}
	if err := core.ValidateHandles(handles); err != nil {
		return nil, err
	}
	if _, err := b.cachedGroup(ctx, group); err != nil {
		return nil, err
	}
	res := make([]core.HandleResult, len(handles))
	now := time.Now()
	checked, err := b.checkAll(ctx, group, handles, now)
	if err != nil {
		return nil, err
	}
	for i, h := range handles {
		res[i].ReceiptHandle = h
		l, st := checked[i].l, checked[i].st
		res[i].Status = st
		if st != core.HandleOK {
			continue
		}
		until := now.Add(invisible)
		if err := b.putOverride(ctx, l, override{delivered: l.delivered, deadline: until}); err != nil {
			return nil, err
		}
		if errs := b.requestAll(ctx, []string{l.reply}, nakDelay(invisible)); errs[0] != nil {
			return nil, errs[0]
		}
		res[i].InvisibleUntil = until
	}
	return res, nil
}

// GroupStatus implements core.ConsumeService: this instance's view (parked
// receives, stashed messages) and each consumer's server-side state.
func (b *Backend) GroupStatus(ctx context.Context, group string) (core.GroupStatus, error) {
	g, err := b.Group(ctx, group)
	if err != nil {
		return core.GroupStatus{}, err
	}
	st := core.GroupStatus{Group: group, Push: b.pushStatus(group)}
	b.mu.Lock()
	st.Waiting = b.waiting[group]
	buffered := 0
	if s := b.stash[group+"/"]; s != nil {
		buffered = len(s.items)
	}
	b.mu.Unlock()
	if g.MessageModel == core.Broadcasting {
		return st, nil
	}
	cs := core.ClientStatus{ClientID: b.opts.InstanceID}
	for _, s := range g.Subscriptions {
		t, err := b.cachedTopic(s.Topic)
		if err != nil {
			continue
		}
		for _, ref := range b.consumersOf(g, "", t) {
			c, err := b.consumer(ctx, ref.stream, ref.name)
			if err != nil {
				continue
			}
			ci := c.CachedInfo()
			cs.Queues = append(cs.Queues, core.QueueStatus{
				Queue:    core.MessageQueue{Topic: ref.topic, QueueID: max(ref.queue, 0)},
				Position: int64(ci.AckFloor.Stream), InFlight: ci.NumAckPending,
				Buffered: buffered, Exclusive: ref.queue >= 0 && ci.NumAckPending > 0,
			})
			buffered = 0
		}
	}
	st.Clients = []core.ClientStatus{cs}
	return st, nil
}
