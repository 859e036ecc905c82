package jetstream

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/core"
)

// Per-key lag of CLUSTERING ORDERLY groups (API.md, docs/jetstream.md
// "Per-key lag"). Embedded counts what its client has pulled and not
// finished; JetStream keeps no per-key state, so a request reads, for
// each queue of the group, the first keyLagScan messages on the queue's
// subject past its consumer's ack floor (the queue's unfinished
// messages, oldest first) in one batched direct get, and groups them by
// sharding key. Cost per request: one consumer info and one batched read
// of at most keyLagScan messages per queue, queues read keyLagParallel at
// a time; nothing on the publish or receive path.

const (
	// keyLagScan bounds the messages read per queue (embedded's pull
	// threshold is of the same order: what a client caches per queue).
	keyLagScan = 256
	// keyLagParallel bounds the queues read at once.
	keyLagParallel = 8
)

// KeyLags lists the CLUSTERING ORDERLY group's ordering keys with
// unfinished messages, oldest first, at most limit. EConflict for other
// groups.
func (b *Backend) KeyLags(group string, limit int) ([]core.KeyLag, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*b.opts.RequestTimeout)
	defer cancel()
	g, err := b.Group(ctx, group)
	if err != nil {
		return nil, err
	}
	if g.MessageModel == core.Broadcasting {
		return nil, core.Errorf(core.EConflict, "group %q is BROADCASTING: per-key lag is kept for CLUSTERING ORDERLY groups", group)
	}
	if g.ConsumeMode != core.Orderly {
		return nil, core.Errorf(core.EConflict, "group %q is not ORDERLY: it has no blocked keys", group)
	}
	refs, err := b.subscribedConsumers(g, "")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var tally core.KeyLagTally
	var firstErr error
	sem := make(chan struct{}, keyLagParallel)
	var wg sync.WaitGroup
	for _, ref := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			h, err := b.head(ctx, ref)
			var msgs []*core.Message
			if err == nil {
				msgs, err = b.scanQueue(ctx, ref, h.floor+1, keyLagScan)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			for _, m := range msgs {
				tally.Add(core.MessageQueue{Topic: ref.topic, QueueID: ref.queue}, m)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return core.SortKeyLags(tally.Rows(), limit), nil
}

// directBatch is a batched direct get (nats-server ≥ 2.11): up to Batch
// messages on NextBySubj from Seq on, then an end-of-batch status.
type directBatch struct {
	Seq        uint64 `json:"seq"`
	NextBySubj string `json:"next_by_subj"`
	Batch      int    `json:"batch"`
}

// scanQueue reads up to n messages of ref's queue subject from seq on
// (a diagnostic read: any replica may answer).
func (b *Backend) scanQueue(ctx context.Context, ref consumerRef, seq uint64, n int) ([]*core.Message, error) {
	inbox := b.nc.NewInbox()
	sub, err := b.subscribeReplies(inbox, n+1) // n messages and the end-of-batch status
	if err != nil {
		return nil, mapErr(err)
	}
	defer sub.close()
	subj := queueSubject(ref.topic, ref.queue)
	body, _ := json.Marshal(directBatch{Seq: max(seq, 1), NextBySubj: subj, Batch: n})
	if err := b.nc.PublishRequest("$JS.API.DIRECT.GET."+ref.stream, inbox, body); err != nil {
		return nil, mapErr(err)
	}
	ctx, cancel := b.ctx(ctx)
	defer cancel()
	var out []*core.Message
	for len(out) < n {
		m, ok := sub.next(ctx)
		if !ok {
			return nil, mapErr(ctx.Err())
		}
		if _, st := isStatus(m); st {
			return out, nil // 204 end of batch, 404 nothing (more)
		}
		out = append(out, directMessage(m))
	}
	return out, nil
}

// directMessage decodes a direct get's answer.
func directMessage(m *nats.Msg) *core.Message {
	seq, _ := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
	ts, _ := time.Parse(time.RFC3339Nano, m.Header.Get("Nats-Time-Stamp"))
	return decodeMessage(m.Header.Get("Nats-Subject"), m.Header, m.Data, seq, ts)
}
