package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// The ORDERLY claim. An ORDERLY queue's consumer has MaxAckPending 1, so
// the leader it elected delivers the queue's messages one after the
// other, each only once the one before was settled. A consumer leader
// that does not yet know it was replaced does not keep that promise: one
// SIGSTOPped past the election timeout and continued, or one cut off from
// its peers, still holds the subscriptions of the consumer's pull and ack
// subjects until it steps down, and serves a pull that reaches it from
// its stale state: it redelivers a message its successor has seen
// acknowledged and moved past (fault runs saw an ORDERLY key's message
// again after later ones, about one round in twenty). So does a gateway
// that gets, late, a message held up in a frozen node while the consumer
// redelivered it elsewhere.
//
// The claim makes per-key order a matter of one replicated write: before
// an ORDERLY message is handed out, its stream sequence is written as the
// queue consumer's claim (key claim.<stream>.<consumer hex> in the bucket
// MQGATE_ORDER_CLAIMS, R3 on file) with a compare-and-set on the claim read
// from the bucket's leader. Claims of one queue never go backwards:
//
//   - sequence ≥ the claim: in order (equal: a redelivery of the message
//     out now), claimed and handed out;
//   - sequence < the claim: a later message of the queue was handed out
//     already, which its consumer does only after this one was settled;
//     the delivery is stale, so it is acknowledged (to whichever leader
//     sent it) and not handed out;
//   - the write fails (no quorum: a stale bucket leader cannot commit it;
//     or the claim moved meanwhile, three times): not handed out now, and
//     NAKed with a short delay (claimRetry) so the queue is not held for
//     a whole ack wait.
//
// A claim is only written by a quorum, so a stale leader can neither hand
// out a message behind the claim nor move the claim. A claim records when
// its message was stored (the ack subject's timestamp); one whose message
// is older than the consumer fences nothing, as it may be an earlier
// incarnation's (offsets reset, the group deleted and made again), whose
// sequences the new one may deliver again. The limit that follows: the
// messages of a backlog stored before the consumer was made (a group
// made FIRST_OFFSET on a topic with messages) are not fenced from each
// other.
//
// A claim proves the order when it is written, not when the message is
// handed out: between the two, lease() may wait on JetStream (the ORDERLY
// rules read, the lease's NAK), for seconds while a node is stopped. A
// fault run saw a delivery claimed, its lease held up 7 s behind a
// SIGSTOPped leader, the message redelivered meanwhile, claimed and
// acknowledged, later messages of the queue handed out, and then the
// held-up copy handed out after them. So a claim older than
// claimFreshFor at hand-out, or of a delivery older than half its ack
// wait (JetStream may have sent it again), is confirmed once more with a
// compare-and-set on the revision it was written at (reconfirmClaims):
// if another delivery claimed the queue since, this one is not handed
// out (its lease runs out; the claim fences it when it comes again).
//
// A redelivery (the claim was at its message already) is always
// confirmed so, however fresh. It may be a stale copy of a message
// settled since: its claim stays at the message until the next one is
// claimed, so the copy matches it. Handed out unconfirmed, it could reach
// a client after the queue's next message, claimed and handed out by
// another instance in the meantime (a CI fault run: a poison message's
// stale copy after the message its dead-lettering let through). Confirmed
// last thing before hand-out, it is refused if the next message was
// claimed first, and is otherwise a duplicate (at-least-once allows it)
// handed out before the next message is claimed.
//
// Cost: one leader read and one replicated, fsynced write per ORDERLY
// message handed out, and a second write for a redelivery or a hand-out
// held up past claimFreshFor; none for CONCURRENTLY groups.

// claimKey is the leases-bucket key of an ORDERLY queue consumer's claim.
func claimKey(m ackMeta) string {
	return fmt.Sprintf("claim.%s.%x", m.stream, m.consumer)
}

// claim is a claim key's value: "<stream sequence> <message stored at, unix ns>".
type claim struct {
	sseq uint64
	at   time.Time
}

func parseClaim(v []byte) (claim, bool) {
	f := strings.Fields(string(v))
	if len(f) != 2 {
		return claim{}, false // absent, or a delete or purge marker
	}
	s, err1 := strconv.ParseUint(f[0], 10, 64)
	ns, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return claim{}, false
	}
	return claim{s, time.Unix(0, ns)}, true
}

func (c claim) encode() []byte {
	return []byte(strconv.FormatUint(c.sseq, 10) + " " + strconv.FormatInt(c.at.UnixNano(), 10))
}

// claimRetry is the NAK delay of a message whose claim was not decided.
const claimRetry = time.Second

// claimTries bounds the compare-and-set attempts of one claim (another
// instance's claim of the same queue, or a read a stale leader
// answered); claimPause spaces them.
const claimTries = 6

// claimPause waits before compare-and-set try i+1 (i from 0) of a claim:
// 1, 2, 4, 8, 16 ms. JetStream refuses an expected-revision write at
// once while another write of the same key is in flight, and a read
// then still sees the value before it: an immediate retry meets the same
// write (unspaced, three tries by two instances claiming one queue could
// fail together, and the message was NAKed, counted as a failure).
func claimPause(ctx context.Context, i int) error {
	t := time.NewTimer(time.Millisecond << i)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// claimFreshFor: a claim younger than this at hand-out is handed out
// without a second compare-and-set. Another delivery of the queue could
// be claimed, handed out, acknowledged and followed by the next message
// inside it only if a new consumer leader resent the message at once,
// without waiting out its ack wait.
const claimFreshFor = 100 * time.Millisecond

// heldClaim is the claim an ORDERLY delivery was handed out under: the
// key, the value and the revision written, and when. again: the claim
// was this message already (a redelivery), so it is confirmed at hand-out
// however fresh (reconfirmClaims).
type heldClaim struct {
	key   string
	val   []byte
	rev   uint64
	at    time.Time
	again bool
}

type claimVerdict int

const (
	claimIn    claimVerdict = iota // claimed: hand it out
	claimStale                     // behind the claim: acknowledge, do not hand out
)

// claimOrderly keeps, of items, those not from an ORDERLY queue consumer
// and those in order by their queue's claim (claims run concurrently:
// one per queue at most, MaxAckPending 1). Stale deliveries are
// acknowledged without waiting for an answer (the leader that sent one
// may be gone; if the ack is lost it comes again and is fenced again).
// err is set when some claim could not be decided.
func (b *Backend) claimOrderly(ctx context.Context, group string, items []pulled) ([]pulled, error) {
	verdicts := make([]claimVerdict, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, p := range items {
		meta, ok := parseAck(p.msg.Reply)
		if p.ref.queue < 0 || !ok {
			continue // lease() skips what has no ack subject
		}
		wg.Go(func() { verdicts[i], items[i].held, errs[i] = b.claimDelivery(ctx, meta) })
	}
	wg.Wait()
	out := items[:0:0]
	for i, p := range items {
		switch {
		case errs[i] != nil:
			b.log.Warn().Err(errs[i]).Str("group", group).Str("subject", p.msg.Subject).
				Msg("ORDERLY claim undecided; the message comes again")
			_ = b.nc.Publish(p.msg.Reply, nakDelay(claimRetry))
		case verdicts[i] == claimStale:
			b.log.Info().Str("group", group).Str("subject", p.msg.Subject).Str("ack", p.msg.Reply).
				Msg("ORDERLY claim: a stale delivery (behind its queue's claim) acknowledged, not handed out")
			_ = b.nc.Publish(p.msg.Reply, []byte("+ACK"))
		default:
			out = append(out, p)
		}
	}
	return out, errors.Join(errs...)
}

// claim decides one ORDERLY delivery against its queue's claim and, when
// it is in order, moves the claim to it.
func (b *Backend) claimDelivery(ctx context.Context, meta ackMeta) (claimVerdict, heldClaim, error) {
	key := claimKey(meta)
	val := claim{meta.sseq, meta.ts}.encode()
	var err error
	for i := range claimTries {
		if i > 0 {
			if err := claimPause(ctx, i-1); err != nil {
				return 0, heldClaim{}, mapErr(err)
			}
		}
		var cur *jsapi.RawStreamMsg
		cur, err = b.leaderMsg(ctx, "KV_"+claimsBucket, msgGet{LastBySubj: "$KV." + claimsBucket + "." + key})
		rev, again := uint64(0), false
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			err = nil
		} else if err != nil {
			return 0, heldClaim{}, mapErr(err)
		} else {
			rev = cur.Sequence
			c, ok := parseClaim(cur.Data)
			if ok && meta.sseq < c.sseq {
				older, err := b.claimBeforeConsumer(ctx, meta, c)
				if err != nil {
					return 0, heldClaim{}, err
				}
				if !older {
					return claimStale, heldClaim{}, nil
				}
			}
			again = ok && meta.sseq == c.sseq
		}
		// Always written, also when the claim is this message already:
		// the compare-and-set is what proves the read was not a stale
		// leader's.
		wctx, cancel := b.ctx(ctx)
		var wrote uint64
		wrote, err = b.claims.Update(wctx, key, val, rev)
		cancel()
		if err == nil {
			b.log.Debug().Str("claim", key).Uint64("sseq", meta.sseq).Uint64("rev", rev).
				Uint64("delivered", meta.delivered).Msg("ORDERLY claim moved")
			return claimIn, heldClaim{key: key, val: val, rev: wrote, at: time.Now(), again: again}, nil
		}
		if !errors.Is(err, jsapi.ErrKeyRevisionMismatch) {
			return 0, heldClaim{}, mapErr(err)
		}
	}
	return 0, heldClaim{}, core.Errorf(core.EUnavailable, "JetStream: the ORDERLY claim of %s moved %d times: %v", key, claimTries, err)
}

// reconfirmClaims reports, for each delivery about to be handed out,
// whether it may be: yes for one without a claim (not ORDERLY), or whose
// claim is fresh (claimFreshFor), not a redelivery's, and whose delivery
// is younger than half its ack wait; otherwise the claim is written
// again, compare-and-set on the revision it was written at, and only a
// write that commits says yes (another delivery claimed the queue
// meanwhile: a mismatch; or no quorum now).
func (b *Backend) reconfirmClaims(ctx context.Context, group string, items []pulled, ackWait time.Duration) []bool {
	ok := make([]bool, len(items))
	var wg sync.WaitGroup
	for i, p := range items {
		h := p.held
		if h.key == "" || (!h.again && time.Since(h.at) < claimFreshFor && time.Since(p.at) < ackWait/2) {
			ok[i] = true
			continue
		}
		wg.Go(func() {
			wctx, cancel := b.ctx(ctx)
			defer cancel()
			_, err := b.claims.Update(wctx, h.key, h.val, h.rev)
			if err == nil {
				ok[i] = true
				return
			}
			b.log.Info().Err(err).Str("group", group).Str("claim", h.key).Str("ack", p.msg.Reply).
				Dur("claimed", time.Since(h.at)).
				Msg("ORDERLY claim not confirmed at hand-out (it moved, or no quorum): not handed out, the lease runs out")
		})
	}
	wg.Wait()
	return ok
}

// claimBeforeConsumer reports whether c's message was stored before
// meta's consumer was created: the claim may be an earlier incarnation's
// (offsets reset, the group made again), so it fences nothing.
func (b *Backend) claimBeforeConsumer(ctx context.Context, meta ackMeta, c claim) (bool, error) {
	con, err := b.consumer(ctx, meta.stream, meta.consumer)
	if err != nil {
		return false, mapErr(err)
	}
	return c.at.Before(con.CachedInfo().Created), nil
}
