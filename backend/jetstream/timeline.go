package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// Message timelines (API.md "Timeline") shared by every instance: events
// go to the stream MQGATE_TIMELINE, so any instance answers what any
// other saw.
//
// A receipt handle names a delivery by stream and sequence, not by
// message id, so events are kept under two subjects: DELIVERED (and
// whatever else knows the id: dead-lettered at receive, REDRIVEN) under
// mqt.<group>.i.<id>, carrying the delivery's stream and sequence; ACKED,
// NACKED, RETRY_SCHEDULED and DEAD_LETTERED by a nack under
// mqt.<group>.s.<stream>.<seq>. A lookup reads the id's events, then the
// events of every delivery they name, and merges them by time.
//
// Cost: one core-NATS publish per event, not waited for (the receive and
// settle paths add no round trip), stored R1: a timeline is a diagnostic,
// and an event lost with a server or a gateway is acceptable where one
// more replicated write per receive and settle would not be. Retention:
// timelineAge, at most timelinePerSubject events per message and
// delivery, timelineBytes in all (oldest dropped first).

const (
	timelineStream      = "MQGATE_TIMELINE"
	timelineAge         = 24 * time.Hour
	timelinePerSubject  = 64
	timelineBytes       = 256 << 20
	timelineReadMaximum = 4 * timelinePerSubject
)

// tlEvent is one stored event (JSON).
type tlEvent struct {
	At         time.Time      `json:"at"`
	Type       core.EventType `json:"type"`
	MessageID  string         `json:"id,omitempty"`
	ConsumerID string         `json:"consumer,omitempty"`
	Attempt    int            `json:"attempt,omitempty"`
	DelayLevel int            `json:"level,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Job        string         `json:"job,omitempty"`
	Stream     string         `json:"stream,omitempty"` // DELIVERED: the delivery
	Seq        uint64         `json:"seq,omitempty"`
}

func tlIDSubject(group, id string) string { return "mqt." + group + ".i." + id }

func tlSeqSubject(group, stream string, seq uint64) string {
	return "mqt." + group + ".s." + stream + "." + strconv.FormatUint(seq, 10)
}

func (b *Backend) createTimeline(ctx context.Context) error {
	if !b.opts.Timeline {
		return nil
	}
	_, err := b.js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{
		Name: timelineStream, Subjects: []string{"mqt.>"}, Storage: jsapi.FileStorage, Replicas: 1,
		MaxAge: timelineAge, MaxMsgsPerSubject: timelinePerSubject, MaxBytes: timelineBytes,
		Discard: jsapi.DiscardOld,
	})
	if err != nil {
		return errors.Join(errors.New("jetstream: timeline stream"), err)
	}
	return nil
}

// record stores ev under subject, without waiting (see above).
func (b *Backend) record(subject string, ev tlEvent) {
	if !b.opts.Timeline {
		return
	}
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	data, _ := json.Marshal(ev)
	if err := b.nc.Publish(subject, data); err != nil {
		b.log.Debug().Err(err).Str("subject", subject).Msg("timeline event not recorded")
	}
}

// recordID records ev of message id in group (nothing for an id that is
// not a subject token: a message published around the gateway).
func (b *Backend) recordID(group, id string, ev tlEvent) {
	if core.ValidName(group) && core.ValidName(id) {
		b.record(tlIDSubject(group, id), ev)
	}
}

// recordSettle records ev of lease l's delivery.
func (b *Backend) recordSettle(l lease, ev tlEvent) {
	b.record(tlSeqSubject(l.group, l.meta.stream, l.sseq), ev)
}

// MessageEvents returns the recorded events of message id in group,
// oldest first (api's timeline page).
func (b *Backend) MessageEvents(group, id string) []core.Event {
	if !b.opts.Timeline || !core.ValidName(group) || !core.ValidName(id) {
		return nil
	}
	ctx, cancel := b.ctx(context.Background())
	defer cancel()
	evs := b.readEvents(ctx, tlIDSubject(group, id))
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Type == core.EventDelivered && e.Stream != "" {
			subj := tlSeqSubject(group, e.Stream, e.Seq)
			if !seen[subj] {
				seen[subj] = true
				evs = append(evs, b.readEvents(ctx, subj)...)
			}
		}
	}
	slices.SortStableFunc(evs, func(a, b tlEvent) int { return a.At.Compare(b.At) })
	out := make([]core.Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, core.Event{At: e.At, Type: e.Type, MessageID: id, ConsumerID: e.ConsumerID,
			Attempt: e.Attempt, DelayLevel: e.DelayLevel, Reason: e.Reason, Job: e.Job})
	}
	return out
}

// readEvents reads the events on subject (from the leader; a read error
// ends the list: a timeline is best effort).
func (b *Backend) readEvents(ctx context.Context, subject string) []tlEvent {
	var out []tlEvent
	for seq := uint64(1); len(out) < timelineReadMaximum; {
		m, err := b.leaderMsg(ctx, timelineStream, msgGet{Seq: seq, NextBySubj: subject})
		if err != nil {
			return out
		}
		var e tlEvent
		if json.Unmarshal(m.Data, &e) == nil {
			out = append(out, e)
		}
		seq = m.Sequence + 1
	}
	return out
}

// RecordEvents records events of group (the API's REDRIVEN).
func (b *Backend) RecordEvents(group string, evs ...core.Event) {
	for _, ev := range evs {
		b.recordID(group, ev.MessageID, tlEvent{At: ev.At, Type: ev.Type, ConsumerID: ev.ConsumerID,
			Attempt: ev.Attempt, DelayLevel: ev.DelayLevel, Reason: ev.Reason, Job: ev.Job})
	}
}

// forgetTimeline drops a deleted group's events.
func (b *Backend) forgetTimeline(ctx context.Context, group string) {
	if !b.opts.Timeline {
		return
	}
	st, err := b.stream(ctx, timelineStream)
	if err == nil {
		err = st.Purge(ctx, jsapi.WithPurgeSubject("mqt."+group+".>"))
	}
	if err != nil {
		b.log.Debug().Err(err).Str("group", group).Msg("timeline of a deleted group not purged; it ages out")
	}
}
