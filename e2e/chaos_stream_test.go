package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
)

// The change-chaos run's stream clients (issue 22, Exactness): consumers
// on consume streams and publishers on publish streams, through the Go
// client (apiclient/stream), across the run's SIGTERM and kill -9
// restarts. They record into the same history as the REST clients, so
// checkChaos judges them by the same rules. What they add:
//
//   - a consumer reconnects when its stream ends (1001 on SIGTERM, a drop
//     on kill -9) and goes on; deliveries still queued when it ended are
//     recorded (they were delivered) and their leases simply run out;
//   - a publisher resends every publish whose confirm did not come, on a
//     new stream of the next server, with the same deduplicationId,
//     until it is confirmed: a confirmed publish must then be delivered
//     (rule 1) and be stored once (rule dup-stored).

// chaosStreamStats counts what the streams went through.
type chaosStreamStats struct {
	opens      atomic.Int64 // consume and publish streams opened
	goingAway  atomic.Int64 // ended with 1001 (SIGTERM)
	dropped    atomic.Int64 // ended without a close frame (kill -9)
	otherEnd   atomic.Int64 // ended another way (counted as unexpected while the server ran)
	resent     atomic.Int64 // publish frames sent again after a lost confirm
	replayed   atomic.Int64 // messages whose confirm said replayed (stored before the resend)
	deliveries atomic.Int64
}

func (s *chaosStreamStats) String() string {
	return fmt.Sprintf("streams opened %d, ended with 1001 %d, dropped %d, other %d; publish frames resent %d (replayed messages %d); stream deliveries %d",
		s.opens.Load(), s.goingAway.Load(), s.dropped.Load(), s.otherEnd.Load(), s.resent.Load(), s.replayed.Load(), s.deliveries.Load())
}

// ended counts how a stream ended.
func (s *chaosStreamStats) ended(err error) {
	var ce *stream.ClosedError
	switch {
	case errors.As(err, &ce) && ce.Code == 1001:
		s.goingAway.Add(1)
	case errors.As(err, &ce) && ce.Code < 0:
		s.dropped.Add(1)
	default:
		s.otherEnd.Add(1)
	}
}

// runContext is a context that ends when ch closes (and when the
// returned cancel is called, which the caller defers).
func runContext(ch <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-ch:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

// streamConsumer consumes one group over a consume stream: it takes what
// is queued (up to 100), records it, acks it (nacks nackPct % of first
// deliveries) on the stream, and reopens the stream on the serving
// process whenever it ends.
func (r *chaosRun) streamConsumer(st *chaosGroupState, idx int, seed uint64) {
	spec := st.spec
	rng := rand.New(rand.NewPCG(seed, uint64(idx)+200))
	consumerID := ""
	if spec.broadcast {
		consumerID = spec.consumers[idx]
	}
	if !r.waitStart(st, idx) {
		return
	}
	ctx, cancel := runContext(r.done)
	defer cancel()
	var firstSent int64 // BROADCASTING: before the first open of this consumerId
	seenOnce := false
	for {
		s, gen, ok := r.srvs.get(r.done)
		if !ok {
			return
		}
		st.mu.RLock()
		g, created := st.cur, st.created
		st.mu.RUnlock()
		if g == nil {
			select {
			case <-created:
				continue
			case <-r.done:
				return
			}
		}
		if firstSent == 0 {
			firstSent = r.next()
		}
		cl := &stream.Client{BaseURL: s.base, HTTPClient: client}
		c, err := cl.Consume(ctx, spec.name, stream.ConsumeOptions{ConsumerID: consumerID, InvisibleSeconds: 10, MaxOutstandingMessages: 64})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if r.srvs.current(gen) {
				r.unexpected("open a consume stream on %s: %v", g, err)
				r.backoff()
			}
			continue
		}
		r.streamStats.opens.Add(1)
		err = r.consumeStream(ctx, c, st, idx, gen, consumerID, firstSent, &seenOnce, rng)
		_ = c.Close()
		if ctx.Err() != nil {
			return
		}
		r.streamStats.ended(err)
		if r.srvs.current(gen) {
			r.unexpected("consume stream on %s ended while its server runs: %v", g, err)
			r.backoff()
		}
	}
}

// backoff keeps a persistent error from becoming a hot loop.
func (r *chaosRun) backoff() {
	timer := time.NewTimer(100 * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.done:
	}
}

// consumeStream handles one stream until it ends; the error is why.
func (r *chaosRun) consumeStream(ctx context.Context, c *stream.Consumer, st *chaosGroupState, idx, gen int,
	consumerID string, firstSent int64, seenOnce *bool, rng *rand.Rand) error {
	spec := st.spec
	// A stream's deliveries wait in the client's queue until taken, so
	// when one is taken says little about when the server sent it (a slow
	// consumer takes, 1.5 s late, what came before a filter change voided
	// it and another consumer acked the redelivery). What is sure is that
	// whatever is taken after the queue was last seen empty arrived after
	// that moment: it stands for the REST receive's "sent", so the rules
	// on receives sent after an ack or a topic delete stay sound.
	since, sinceT := r.next(), time.Now()
	for {
		m, err := c.Receive(ctx)
		if err != nil {
			return err
		}
		batch := []apiclient.ReceivedMessage{m}
		sent, sentT := since, sinceT
		for len(batch) < 100 {
			m, ok := c.TryReceive()
			if !ok {
				since, sinceT = r.next(), time.Now() // seen empty
				break
			}
			batch = append(batch, m)
		}
		r.hold.RLock()
		st.mu.RLock()
		g := st.cur // never nil: stream groups are not deleted
		// Record before acking, in the order the stream delivered them:
		// ORDERLY hands out a queue's next message only after the ack.
		r.hmu.Lock()
		if consumerID != "" {
			if _, ok := g.FirstSeen[consumerID]; !ok {
				// The consumerId's first receive is the stream's first
				// pump after its open; it is done by its first delivery.
				g.FirstSeen[consumerID] = chFirstSeen{Sent: firstSent, Done: r.next()}
			}
		}
		if !*seenOnce {
			*seenOnce = true
			close(st.seen[idx])
		}
		base := len(r.hist.Deliveries)
		for _, m := range batch {
			body := ""
			if m.Body != nil {
				body = *m.Body
			}
			r.hist.Deliveries = append(r.hist.Deliveries, chDelivery{Group: spec.name, GInc: g.GInc, Consumer: consumerID,
				U: parseChaosU(body), Topic: m.Topic, Reconsume: m.ReconsumeTimes, MessageID: m.MessageId, Stream: true,
				RecvSent: sent, RecvSentT: sentT, RecvAt: r.next(), Gen: gen})
		}
		r.hmu.Unlock()
		r.streamStats.deliveries.Add(int64(len(batch)))
		if rng.IntN(100) < spec.slowPct {
			timer := time.NewTimer(spec.slowFor) // deliberate: a slow consumer holding its leases
			select {
			case <-timer.C:
			case <-r.done:
				timer.Stop()
			}
		}
		var acks, nacks []string
		var ackIdx, nackIdx []int
		for i, m := range batch {
			if !spec.broadcast && m.ReconsumeTimes == 0 && rng.IntN(100) < spec.nackPct {
				nacks, nackIdx = append(nacks, m.ReceiptHandle), append(nackIdx, base+i)
			} else {
				acks, ackIdx = append(acks, m.ReceiptHandle), append(ackIdx, base+i)
			}
		}
		var ackF, nackF *stream.Future[[]apiclient.HandleResult]
		if len(acks) > 0 {
			ackF = c.AckAsync(acks...)
		}
		if len(nacks) > 0 {
			nackF = c.NackAsync(stream.NackOptions{DelayLevel: 1}, nacks...)
		}
		var settleErr error
		if ackF != nil {
			res, err := ackF.Wait(ctx)
			at := time.Now()
			r.hmu.Lock()
			for i, hr := range res {
				if hr.Status == apiclient.HandleResultStatusOk && i < len(ackIdx) {
					d := &r.hist.Deliveries[ackIdx[i]]
					d.Acked, d.AckGen, d.AckTime = true, gen, at
				}
			}
			r.hmu.Unlock()
			settleErr = err
		}
		if nackF != nil {
			res, err := nackF.Wait(ctx)
			r.hmu.Lock()
			for i, hr := range res {
				if hr.Status == apiclient.HandleResultStatusOk && i < len(nackIdx) {
					r.hist.Deliveries[nackIdx[i]].Nacked = true
				}
			}
			r.hmu.Unlock()
			settleErr = cmpOr(settleErr, err)
		}
		st.mu.RUnlock()
		r.hold.RUnlock()
		if settleErr != nil {
			var pe *stream.ProblemError
			if errors.As(settleErr, &pe) {
				r.unexpected("settle on the stream of %s: %v", g, settleErr)
			}
			// Else the stream ended (or the run did): Receive says how.
		}
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// chaosFrame is one publish frame of a stream publisher round: one
// message or an atomic batch, all of one key (frames in flight together
// have distinct keys, so a key's messages are stored in sequence order
// even when a frame must be resent).
type chaosFrame struct {
	pubs []chPublish
	msgs []apiclient.PublishRequest
	done bool
}

// streamPublisher p publishes over publish streams: each tick it sends
// 1..4 frames at once to one topic and waits for all their confirms,
// resending (same deduplicationIds) on the next server whatever a
// restart left unconfirmed. Publishing pauses (the gate) are held from
// the first send to the last confirm, as a REST publish holds them for
// its request.
func (r *chaosRun) streamPublisher(p int, every time.Duration, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(p)))
	seqs := map[chKey]int{}
	ctx, cancel := runContext(r.done)
	defer cancel()
	type streamKey struct {
		gen   int
		topic string
		inc   int
	}
	open := map[streamKey]*stream.Publisher{}
	defer func() {
		for _, sp := range open {
			_ = sp.Close()
		}
	}()
	// publisherFor opens (or reuses) the stream of topic#inc on gen.
	publisherFor := func(s *server, gen int, topic string, inc int) (*stream.Publisher, error) {
		k := streamKey{gen, topic, inc}
		if sp := open[k]; sp != nil && sp.Err() == nil {
			return sp, nil
		}
		for ok, sp := range open {
			if ok.gen != gen || (ok.topic == topic && ok.inc != inc) || ok == k {
				_ = sp.Close()
				delete(open, ok)
			}
		}
		cl := &stream.Client{BaseURL: s.base, HTTPClient: client}
		sp, err := cl.PublishStream(ctx, topic, stream.PublishOptions{MaxUnconfirmedMessages: 64})
		if err != nil {
			return nil, err
		}
		r.streamStats.opens.Add(1)
		open[k] = sp
		return sp, nil
	}
	tick := time.NewTicker(every) // deliberate pacing
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		if _, _, ok := r.srvs.get(r.stop); !ok {
			return
		}
		r.gate.RLock()
		var live []string
		for _, name := range r.names {
			if r.topics[name].inc != 0 {
				live = append(live, name)
			}
		}
		if len(live) == 0 {
			r.gate.RUnlock()
			continue
		}
		topic := live[rng.IntN(len(live))]
		inc := r.topics[topic].inc
		keys := rng.Perm(4)[:1+rng.IntN(4)]
		frames := make([]*chaosFrame, len(keys))
		for i, kn := range keys {
			key := fmt.Sprintf("p%dk%d", p, kn)
			n := 1
			if rng.IntN(4) == 0 {
				n = 2 + rng.IntN(3)
			}
			f := &chaosFrame{}
			for range n {
				k := chKey{topic, inc, key}
				seqs[k]++
				u := r.u.Add(1)
				tag := chaosTags[rng.IntN(len(chaosTags))]
				f.pubs = append(f.pubs, chPublish{U: u, Topic: topic, TInc: inc, Key: key, Seq: seqs[k], Tag: tag, Stream: true, QueueID: -1})
				body := chaosBody(u, topic, inc, key, seqs[k])
				f.msgs = append(f.msgs, apiclient.PublishRequest{Body: &body, Tags: &tag, ShardingKey: &key,
					DeduplicationId: ptrTo(fmt.Sprintf("chaos-u%d", u)),
					Properties:      &map[string]string{"u": strconv.FormatInt(u, 10), "k": key, "s": strconv.Itoa(seqs[k]), "i": strconv.Itoa(inc)}})
			}
			frames[i] = f
		}
		sent := r.next()
		status := r.publishFrames(ctx, topic, inc, frames, publisherFor)
		done := r.next()
		var all []chPublish
		for _, f := range frames {
			for j := range f.pubs {
				f.pubs[j].Sent, f.pubs[j].Done = sent, done
				if f.done {
					f.pubs[j].Status = chPubOK
				} else {
					f.pubs[j].Status = status
				}
			}
			all = append(all, f.pubs...)
		}
		r.hmu.Lock()
		r.hist.Pubs = append(r.hist.Pubs, all...)
		r.hmu.Unlock()
		r.gate.RUnlock()
	}
}

func ptrTo[T any](v T) *T { return &v }

// publishFrames sends frames over the serving process's stream of topic
// and waits for their confirms, again on the next process for those a
// restart left unconfirmed, until all are confirmed (f.done). It returns
// the status of those left when the run ends first (unknown) or the
// server refused them (rejected).
func (r *chaosRun) publishFrames(ctx context.Context, topic string, inc int, frames []*chaosFrame,
	publisherFor func(*server, int, string, int) (*stream.Publisher, error)) chPubStatus {
	for attempt := 0; ; attempt++ {
		s, gen, ok := r.srvs.get(r.done)
		if !ok {
			return chPubUnknown
		}
		sp, err := publisherFor(s, gen, topic, inc)
		if err != nil {
			if ctx.Err() != nil {
				return chPubUnknown
			}
			if r.srvs.current(gen) {
				r.unexpected("open a publish stream on %s: %v", topic, err)
				r.backoff()
			}
			continue
		}
		confirms := make([]*stream.Confirm, len(frames))
		for i, f := range frames {
			if f.done {
				continue
			}
			if attempt > 0 {
				r.streamStats.resent.Add(1)
				for j := range f.pubs {
					f.pubs[j].Resent++
				}
			}
			if len(f.msgs) == 1 {
				confirms[i], err = sp.Publish(ctx, f.msgs[0])
			} else {
				confirms[i], err = sp.PublishBatch(ctx, f.msgs)
			}
			if err != nil {
				break // the stream ended: what was not sent is sent again below
			}
		}
		left := false
		for i, f := range frames {
			if f.done {
				continue
			}
			if confirms[i] == nil {
				left = true
				continue
			}
			rs, err := confirms[i].Wait(ctx)
			var pe *stream.ProblemError
			switch {
			case err == nil && len(rs) == len(f.pubs):
				f.done = true
				for j, res := range rs {
					if res.QueueId != nil && res.QueueOffset != nil {
						f.pubs[j].QueueID, f.pubs[j].Offset = *res.QueueId, int64(*res.QueueOffset)
					}
					if res.Replayed != nil && *res.Replayed {
						f.pubs[j].Replayed = true
						r.streamStats.replayed.Add(1)
					}
				}
			case err == nil:
				r.unexpected("stream publish to %s: %d results for %d messages", topic, len(rs), len(f.pubs))
				return chPubRejected
			case errors.As(err, &pe):
				r.unexpected("stream publish to %s: %v", topic, err)
				return chPubRejected
			default:
				left = true // not confirmed: resent on the next stream
			}
		}
		if !left {
			return chPubOK
		}
		if ctx.Err() != nil {
			return chPubUnknown
		}
		if err := sp.Err(); err != nil {
			r.streamStats.ended(err)
		}
		if r.srvs.current(gen) {
			r.unexpected("publish stream on %s lost confirms while its server runs: %v", topic, sp.Err())
			r.backoff()
		}
	}
}
