package jetstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"
)

// Which settles need their lease overrides read.
//
// A settle must see an override (a nack or an extend) that any instance
// wrote for its delivery, and JetStream itself cannot tell: it takes an
// ack of a delivery it was told to redeliver. Reading each handle's
// override from the leases bucket's leader is one JetStream API request
// per handle, most of them for deliveries nobody ever nacked or
// extended. So every instance follows the bucket (an ordered consumer,
// headers only) and keeps, per consumer, the time of the newest override
// written for it. A settle then reads the bucket's leader once — the
// sequence of its last override, the barrier — waits until its view has
// applied that far (then every override stored before the settle began
// is in the view), and reads the override only of handles whose consumer
// had one written at or after (within clockSkew) their message's time.
// That time is the one the ack subject carries, when the stream stored
// the message: before any delivery of it, so the test errs towards
// reading (a consumer nacked at N reads for messages stored before N
// until they are settled, and skips those stored after). A view
// that cannot catch up within viewWait, or that is not running, reads
// every handle's override as before.

// clockSkew bounds the difference between the servers' clocks (a
// delivery's time is the consumer leader's, an override's the leases
// stream leader's).
const clockSkew = 2 * time.Second

// viewWait bounds how long a settle waits for the view to reach its
// barrier before it reads every override.
const viewWait = 250 * time.Millisecond

// overrideView is this instance's view of the leases bucket.
type overrideView struct {
	mu      sync.Mutex
	live    bool
	since   time.Time            // overrides before this may not be in the view
	applied uint64               // leases stream sequence applied
	newest  map[string]time.Time // by "<stream>.<consumer hex>"
	moved   chan struct{}        // closed (and replaced) when applied grows
	stop    func()
}

const leasesStream = "KV_" + leasesBucket

// startOverrideView starts following the leases bucket from its current
// end. On failure the view stays off and every settle reads its
// overrides (logged).
func (b *Backend) startOverrideView(ctx context.Context) {
	v := &b.view
	v.newest = map[string]time.Time{}
	v.moved = make(chan struct{})
	// Every override after this instant is in the view; one before it
	// may not be. A message stored before since+clockSkew (by the
	// servers' clocks) may have one of those.
	since := time.Now()
	st, err := b.js.Stream(ctx, leasesStream)
	if err != nil {
		b.log.Warn().Err(err).Msg("lease override view not started: every settle reads its overrides")
		return
	}
	last := st.CachedInfo().State.LastSeq
	oc, err := b.js.OrderedConsumer(ctx, leasesStream, jsapi.OrderedConsumerConfig{
		DeliverPolicy: jsapi.DeliverByStartSequencePolicy, OptStartSeq: last + 1, HeadersOnly: true,
	})
	if err != nil {
		b.log.Warn().Err(err).Msg("lease override view not started: every settle reads its overrides")
		return
	}
	v.mu.Lock()
	v.applied, v.since, v.live = last, since, true
	v.mu.Unlock()
	cc, err := oc.Consume(func(m jsapi.Msg) {
		md, err := m.Metadata()
		if err != nil {
			return
		}
		b.view.apply(m.Subject(), md.Sequence.Stream, md.Timestamp)
	})
	if err != nil {
		v.mu.Lock()
		v.live = false
		v.mu.Unlock()
		b.log.Warn().Err(err).Msg("lease override view not started: every settle reads its overrides")
		return
	}
	v.stop = cc.Stop
}

// apply records one override message of the leases stream.
func (v *overrideView) apply(subject string, seq uint64, at time.Time) {
	key := strings.TrimPrefix(subject, "$KV."+leasesBucket+".")
	if i := strings.LastIndexByte(key, '.'); i > 0 {
		key = key[:i] // "<stream>.<consumer hex>"
	}
	v.mu.Lock()
	if at.After(v.newest[key]) {
		v.newest[key] = at
	}
	if seq > v.applied {
		v.applied = seq
		close(v.moved)
		v.moved = make(chan struct{})
	}
	v.mu.Unlock()
}

// errViewBehind: the view did not reach the barrier in time.
var errViewBehind = errors.New("lease override view behind")

// barrier reads the sequence of the leases bucket's last override from
// its leader and waits until the view has applied it. After it, the
// view holds every override stored before the call.
func (b *Backend) barrier(ctx context.Context) error {
	v := &b.view
	v.mu.Lock()
	live := v.live
	v.mu.Unlock()
	if !live {
		return errViewBehind
	}
	var last uint64
	m, err := b.leaderMsg(ctx, leasesStream, msgGet{LastBySubj: "$KV." + leasesBucket + ".>"})
	switch {
	case errors.Is(err, jsapi.ErrMsgNotFound):
	case err != nil:
		return err
	default:
		last = m.Sequence
	}
	t := time.NewTimer(viewWait)
	defer t.Stop()
	for {
		v.mu.Lock()
		applied, moved := v.applied, v.moved
		v.mu.Unlock()
		if applied >= last {
			return nil
		}
		select {
		case <-moved:
		case <-t.C:
			return errViewBehind
		case <-ctx.Done():
			return ctx.Err()
		case <-b.stop:
			return errViewBehind
		}
	}
}

// mayHaveOverride reports whether l's delivery may have an override
// (after a barrier): its consumer had one written at or after the
// message was stored (no delivery of it is older), or the message is
// older than the view.
func (v *overrideView) mayHaveOverride(l lease) bool {
	at := l.meta.ts
	v.mu.Lock()
	defer v.mu.Unlock()
	if at.Before(v.since.Add(clockSkew)) {
		return true
	}
	t, ok := v.newest[leaseConsumerKey(l)]
	return ok && !t.Before(at.Add(-clockSkew))
}

func (v *overrideView) close() {
	if v.stop != nil {
		v.stop()
	}
}
