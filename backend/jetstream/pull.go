package jetstream

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Pulls: a receive first takes what this instance already pulled (the
// stash), then asks every consumer of the group for what is ready now
// (no_wait), and only then parks one waiting pull per consumer. A waiting
// pull runs until it has its batch or expires, also after the receive
// that started it answered: what it brings goes to the stash for the next
// receive on this instance, never to nobody. Waiting pull requests of all
// instances queue in the consumer on the server, so long polls are served
// in the order they arrived, across instances.

// pulled is one message delivered to this instance and not yet leased.
type pulled struct {
	msg *nats.Msg
	ref consumerRef
	at  time.Time
	// held is an ORDERLY delivery's claim once claimOrderly moved it
	// (orderclaim.go); zero otherwise.
	held heldClaim
}

// stash is what (group, consumerId) pulled on this instance and no receive
// took yet. Guarded by Backend.mu.
type stash struct {
	items  []pulled
	signal chan struct{} // closed (and replaced) when items arrive
}

// noWaitExpiry bounds a no_wait pull the server holds.
const noWaitExpiry = 20 * time.Millisecond

type pullReq struct {
	Batch   int   `json:"batch"`
	Expires int64 `json:"expires,omitempty"`
	NoWait  bool  `json:"no_wait,omitempty"`
}

// isStatus reports a pull's status message (no data): 404 no messages,
// 408 request expired, 409 consumer changed or deleted, 100 heartbeat.
func isStatus(m *nats.Msg) (string, bool) {
	if len(m.Data) == 0 && m.Header != nil {
		if s := m.Header.Get("Status"); s != "" {
			return s, true
		}
	}
	return "", false
}

// pull asks ref for up to batch messages, waiting up to wait (0: what is
// ready now). It returns when it has batch, the request ends, or ctx ends.
// deliver receives each message as it comes.
func (b *Backend) pull(ctx context.Context, ref consumerRef, batch int, wait time.Duration, deliver func(*nats.Msg)) (missing bool, err error) {
	// The server answers a pull with at most batch messages and one
	// status that ends it.
	sub, err := b.subscribeReplies(b.nc.NewInbox(), batch+1)
	if err != nil {
		return false, mapErr(err)
	}
	defer sub.close()
	req := pullReq{Batch: batch}
	tail := b.opts.RequestTimeout
	if wait > 0 {
		req.Expires = int64(wait)
	} else {
		// A no_wait request the server cannot answer at once (an ORDERLY
		// queue's consumer at MaxAckPending) would otherwise wait with no
		// end and deliver later to an inbox nobody reads: bound it, and
		// read until the server says it is over.
		req.NoWait, req.Expires = true, int64(noWaitExpiry)
	}
	body, _ := json.Marshal(req)
	if err := b.nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+ref.stream+"."+ref.name, sub.subject, body); err != nil {
		return false, mapErr(err)
	}
	ctx, cancel := context.WithTimeout(ctx, wait+tail)
	defer cancel()
	for got := 0; got < batch; {
		m, ok := sub.next(ctx)
		if !ok {
			return false, nil
		}
		if s, ok := isStatus(m); ok {
			switch s {
			case "100":
				continue
			case "409":
				d := m.Header.Get("Description")
				return strings.Contains(d, "Deleted") || strings.Contains(d, "not found"), nil
			}
			return s == "404" && strings.Contains(m.Header.Get("Description"), "Consumer"), nil
		}
		got++
		deliver(m)
	}
	return false, nil
}

// ackMeta is what a JetStream ack subject says of one delivery:
// $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.<pending>,
// or the v2 form with domain and account hash after $JS.ACK.
type ackMeta struct {
	stream, consumer string
	delivered        uint64
	sseq, dseq       uint64
	ts               time.Time
}

func parseAck(reply string) (ackMeta, bool) {
	t := strings.Split(reply, ".")
	if len(t) < 9 || t[0] != "$JS" || t[1] != "ACK" {
		return ackMeta{}, false
	}
	off := 2
	if len(t) >= 11 {
		off = 4
	}
	if len(t) < off+7 {
		return ackMeta{}, false
	}
	num := func(i int) uint64 { n, _ := strconv.ParseUint(t[off+i], 10, 64); return n }
	a := ackMeta{stream: t[off], consumer: t[off+1], delivered: num(2), sseq: num(3), dseq: num(4),
		ts: time.Unix(0, int64(num(5)))}
	return a, a.sseq > 0 && a.delivered > 0
}

// requestAll sends body to every subject (ack subjects) and waits for
// each reply: one inbox, pipelined. errs[i] is nil when subject i answered.
func (b *Backend) requestAll(ctx context.Context, subjects []string, body []byte) []error {
	errs := make([]error, len(subjects))
	if len(subjects) == 0 {
		return errs
	}
	prefix := b.nc.NewInbox()
	sub, err := b.subscribeReplies(prefix+".*", len(subjects))
	if err != nil {
		for i := range errs {
			errs[i] = mapErr(err)
		}
		return errs
	}
	defer sub.close()
	pending := map[string]int{}
	for i, s := range subjects {
		reply := prefix + "." + strconv.Itoa(i)
		if err := b.nc.PublishRequest(s, reply, body); err != nil {
			errs[i] = mapErr(err)
			continue
		}
		pending[reply] = i
	}
	ctx, cancel := b.ctx(ctx)
	defer cancel()
	for len(pending) > 0 {
		m, ok := sub.next(ctx)
		if !ok {
			for _, i := range pending {
				errs[i] = mapErr(ctx.Err())
			}
			break
		}
		if i, ok := pending[m.Subject]; ok {
			delete(pending, m.Subject)
			if s, st := isStatus(m); st && s == "503" {
				errs[i] = mapErr(nats.ErrNoResponders)
			}
		}
	}
	return errs
}

// replies is a subscription to an inbox that gets at most a known number
// of messages (a pull's deliveries, a settle request's answers), on a
// channel of that size. nats.go's SubscribeSync makes every subscription
// a channel of its default 65,536 entries (512 KiB, zeroed): once per
// pull and per settle request, that was the gateway's largest allocation
// (about 5% of a receive+ack run's CPU, with the collections it caused).
// The channel never fills: the server sends no more than asked for.
type replies struct {
	subject string
	ch      chan *nats.Msg
	sub     *nats.Subscription
}

func (b *Backend) subscribeReplies(subject string, most int) (*replies, error) {
	r := &replies{subject: subject, ch: make(chan *nats.Msg, most)}
	sub, err := b.nc.ChanSubscribe(subject, r.ch)
	if err != nil {
		return nil, err
	}
	r.sub = sub
	return r, nil
}

// next is the next message, or false once ctx ends.
func (r *replies) next(ctx context.Context) (*nats.Msg, bool) {
	select {
	case m := <-r.ch:
		return m, true
	case <-ctx.Done():
		return nil, false
	}
}

func (r *replies) close() { r.sub.Unsubscribe() }
