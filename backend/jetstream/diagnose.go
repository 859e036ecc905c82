package jetstream

import (
	"context"
	"errors"
	"slices"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Diagnose implements core.OperatorService: why a receive of group
// (consumerID for BROADCASTING) would come back empty now, from the same
// state every instance reads, as embedded reports it
// (gateway/diagnose.go):
//
//   - PAUSED: the group's config says so (pause.go);
//   - KEYS_BLOCKED (ORDERLY): a queue's consumer has its one message out
//     (NumAckPending > 0: leased, or nacked and waiting out its delay, or
//     pulled by an instance and not yet leased). Blocked names each such
//     queue's head, the first message past the ack floor; a failing head
//     recorded in MQGATE_ORDERLY (blocked.go) gives Since, and InFlight is
//     false while its last delivery was nacked (suspended);
//   - NOT_VISIBLE_YET (CONCURRENTLY): nothing is pending delivery and
//     some messages are out (leased, or waiting out a nack's delay);
//   - NO_MESSAGES otherwise.
//
// NextVisibleAt and HeldQueue.Until stay zero: a lease is a NAK delay
// JetStream keeps per message and does not report (docs/jetstream.md).
// Cost: one consumer info per consumer of the group (one per queue for
// ORDERLY) and, per held queue, two reads from the leader; only empty
// receives pay it.
func (b *Backend) Diagnose(group, consumerID string) (core.Diagnosis, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*b.opts.RequestTimeout)
	defer cancel()
	g, err := b.Group(ctx, group)
	if err != nil {
		return core.Diagnosis{}, err
	}
	if g.Paused {
		return core.Diagnosis{Reason: core.EmptyPaused}, nil
	}
	if g.MessageModel != core.Broadcasting {
		consumerID = ""
	} else if consumerID == "" || !core.ValidName(consumerID) {
		return core.Diagnosis{Reason: core.EmptyNoMessages}, nil // no such consumer holds anything
	}
	orderly := g.ConsumeMode == core.Orderly
	var held []core.HeldQueue
	out := false
	refs, err := b.subscribedConsumers(g, consumerID)
	if err != nil {
		return core.Diagnosis{}, err
	}
	for _, ref := range refs {
		c, err := b.consumer(ctx, ref.stream, ref.name)
		if errors.Is(err, jsapi.ErrConsumerNotFound) {
			continue // never received from: holds nothing
		} else if err != nil {
			return core.Diagnosis{}, mapErr(err)
		}
		ci := c.CachedInfo()
		if ci.NumAckPending == 0 {
			continue
		}
		out = out || ci.NumPending == 0
		if !orderly {
			continue
		}
		h, ok, err := b.heldQueue(ctx, g, consumerID, queueHead{ref: ref, floor: ci.AckFloor.Stream, out: true})
		if err != nil {
			return core.Diagnosis{}, err
		}
		if ok {
			held = append(held, h)
		}
	}
	if len(held) > 0 {
		slices.SortFunc(held, func(a, b core.HeldQueue) int {
			if a.Queue.Less(b.Queue) {
				return -1
			}
			if b.Queue.Less(a.Queue) {
				return 1
			}
			return 0
		})
		return core.Diagnosis{Reason: core.EmptyKeysBlocked, Blocked: held}, nil
	}
	if out && !orderly {
		return core.Diagnosis{Reason: core.EmptyNotVisibleYet}, nil
	}
	return core.Diagnosis{Reason: core.EmptyNoMessages}, nil
}

// heldQueue is the held queue of h's consumer: its head (the first
// message past the ack floor, on the queue's subject or, for queue 0, the
// group's redrive subject) and its failure record; false when the head
// is gone (acked or removed since the consumer info).
func (b *Backend) heldQueue(ctx context.Context, g core.Group, consumerID string, h queueHead) (core.HeldQueue, bool, error) {
	subjects := []string{queueSubject(h.ref.topic, h.ref.queue)}
	if h.ref.queue == 0 {
		subjects = append(subjects, redriveSubject(h.ref.topic, g.Name))
	}
	var head *jsapi.RawStreamMsg
	for _, subj := range subjects {
		m, err := b.leaderMsg(ctx, h.ref.stream, msgGet{Seq: h.floor + 1, NextBySubj: subj})
		if errors.Is(err, jsapi.ErrMsgNotFound) {
			continue
		} else if err != nil {
			return core.HeldQueue{}, false, mapErr(err)
		}
		if head == nil || m.Sequence < head.Sequence {
			head = m
		}
	}
	if head == nil {
		return core.HeldQueue{}, false, nil
	}
	msg := decodeMessage(head.Subject, head.Header, head.Data, head.Sequence, head.Time)
	hq := core.HeldQueue{Queue: core.MessageQueue{Topic: h.ref.topic, QueueID: h.ref.queue}, Head: *msg, InFlight: true}
	var rec headRecord
	rev, err := b.kvRead(ctx, headKey(g.Name, consumerID, h.ref.topic, h.ref.queue), &rec)
	if err != nil {
		return core.HeldQueue{}, false, err
	}
	if rev != 0 && rec.Seq == head.Sequence && rec.ID == msg.UserID() {
		// The head failed before: since its first failure in a row, and
		// suspended (not in flight) while its last delivery was nacked.
		hq.Since, hq.InFlight = rec.Since, !rec.Nacked
	}
	return hq, true, nil
}
