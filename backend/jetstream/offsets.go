package jetstream

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Per-queue offsets of CONCURRENTLY groups (docs/jetstream.md, "Offsets
// are stream sequences"). One durable consumer serves every queue of the
// topic, and JetStream keeps one ack floor for it, so the rows share that
// floor as their committed offset: every message of every queue at or
// below it is done. What differs per queue is its lag: the queue's
// messages above the floor, counted by the server (a batched direct get
// of one message from floor+1 on the queue's subject answers
// Nats-Num-Pending, the count of the subject's messages from there on),
// as embedded's max − committed (acknowledged messages above the floor
// count until the floor passes them). Queue 0's row also counts the
// group's redriven copies (mq.<topic>.r.<group>), which its consumer
// delivers too, and carries the consumer's in-flight count (JetStream
// counts unacknowledged messages per consumer, not per queue). Max is
// committed + lag. Cost per row: one request and at most one message
// body, offsetsParallel at a time; nothing on the receive path.

const offsetsParallel = 8

// queueRows are the rows of a CONCURRENTLY consumer ref (queue < 0) of
// topic t: one per queue.
func (b *Backend) queueRows(ctx context.Context, g core.Group, ref consumerRef, t core.Topic) ([]core.QueueOffset, error) {
	if err := b.ensureConsumer(ctx, g, ref, false); err != nil {
		return nil, err
	}
	c, err := b.consumer(ctx, ref.stream, ref.name)
	if err != nil {
		return nil, mapErr(err)
	}
	ci := c.CachedInfo()
	floor, err := b.settledBelow(ctx, ref, ci)
	if err != nil {
		return nil, err
	}
	rows := make([]core.QueueOffset, t.Queues)
	errs := make([]error, t.Queues)
	var redriven int64
	var redriveErr error
	sem := make(chan struct{}, offsetsParallel)
	var wg sync.WaitGroup
	count := func(subj string, into *int64, errp *error) {
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		*into, *errp = b.countFrom(ctx, ref.stream, subj, floor+1)
	}
	for q := range rows {
		rows[q] = core.QueueOffset{Queue: core.MessageQueue{Topic: ref.topic, QueueID: q}, Committed: int64(floor)}
		wg.Add(1)
		go count(queueSubject(ref.topic, q), &rows[q].Lag, &errs[q])
	}
	wg.Add(1)
	go count(redriveSubject(ref.topic, g.Name), &redriven, &redriveErr)
	wg.Wait()
	for _, err := range append(errs, redriveErr) {
		if err != nil {
			return nil, err
		}
	}
	rows[0].Lag += redriven
	rows[0].InFlight = ci.NumAckPending
	for q := range rows {
		rows[q].Max = rows[q].Committed + rows[q].Lag
	}
	return rows, nil
}

// countFrom counts the messages on subj from seq on: a batched direct
// get of one, whose answer carries how many more match.
func (b *Backend) countFrom(ctx context.Context, stream, subj string, seq uint64) (int64, error) {
	inbox := b.nc.NewInbox()
	sub, err := b.subscribeReplies(inbox, 2) // the message and the end-of-batch status
	if err != nil {
		return 0, mapErr(err)
	}
	defer sub.close()
	body, _ := json.Marshal(directBatch{Seq: max(seq, 1), NextBySubj: subj, Batch: 1})
	if err := b.nc.PublishRequest("$JS.API.DIRECT.GET."+stream, inbox, body); err != nil {
		return 0, mapErr(err)
	}
	ctx, cancel := b.ctx(ctx)
	defer cancel()
	m, ok := sub.next(ctx)
	if !ok {
		return 0, mapErr(ctx.Err())
	}
	if st, ok := isStatus(m); ok {
		if st == "404" || st == "204" {
			return 0, nil // none
		}
		return 0, core.Errorf(core.EUnavailable, "JetStream: direct get of %s answered %s %s", subj, st, m.Header.Get("Description"))
	}
	n, err := strconv.ParseInt(m.Header.Get("Nats-Num-Pending"), 10, 64)
	if err != nil {
		return 0, core.Errorf(core.EUnavailable, "JetStream: direct get of %s: no Nats-Num-Pending", subj)
	}
	return n + 1, nil // this one and those after it
}

// settledBelow is the stream sequence at and below which ref's consumer
// has nothing left: its ack floor, which a consumer that has acknowledged
// nothing yet answers as 0. With nothing in flight everything it
// delivered is settled; otherwise nothing below its start sequence was
// ever its own (found from its deliver policy: a search by time for
// DeliverNew and by-start-time consumers, only in that state).
func (b *Backend) settledBelow(ctx context.Context, ref consumerRef, ci *jsapi.ConsumerInfo) (uint64, error) {
	floor := ci.AckFloor.Stream
	if ci.NumAckPending == 0 {
		return max(floor, ci.Delivered.Stream), nil
	}
	if ci.AckFloor.Consumer > 0 {
		return floor, nil
	}
	var start uint64
	switch ci.Config.DeliverPolicy {
	case jsapi.DeliverByStartSequencePolicy:
		start = ci.Config.OptStartSeq
	case jsapi.DeliverNewPolicy, jsapi.DeliverByStartTimePolicy:
		st, err := b.stream(ctx, ref.stream)
		if err != nil {
			return 0, mapErr(err)
		}
		at := ci.Created
		if ci.Config.OptStartTime != nil {
			at = *ci.Config.OptStartTime
		}
		start = b.seqAt(ctx, st, at, st.CachedInfo().State.LastSeq+1)
	}
	if start > floor+1 {
		floor = start - 1
	}
	return floor, nil
}
