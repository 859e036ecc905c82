package jetstream

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/core"
)

// Headers carrying a message's fields. The body is the NATS payload.
const (
	hID        = "Mq-Id"
	hTags      = "Mq-Tags"
	hKeys      = "Mq-Keys"  // JSON array
	hProps     = "Mq-Props" // JSON object
	hSharding  = "Mq-Sharding-Key"
	hText      = "Mq-Text" // "1": published as `body`
	hBorn      = "Mq-Born" // unix ms
	hDeliverAt = "Mq-Deliver-At"
	hQueue     = "Mq-Queue"     // the original queue (DLQ and redriven copies)
	hTopic     = "Mq-Topic"     // the original topic (DLQ copies)
	hReconsume = "Mq-Reconsume" // reconsume times of a DLQ copy
	hOrigin    = "Mq-Origin-Seq"
	hReason    = "Mq-Last-Reason" // why the delivery that dead-lettered it failed (DLQ copies)
	// The message's W3C trace context (core.PropTraceParent), under the
	// names NATS' own OpenTelemetry instrumentation propagates with;
	// dead-letter and redriven copies keep them (they copy the headers).
	hTraceParent = "traceparent"
	hTraceState  = "tracestate"
)

// expiredReason is the reason of a message dead-lettered at receive: its
// last failure was a lease that ran out (a nack dead-letters at once).
const expiredReason = "lease expired without ack or nack"

// newID is a message id: the same format on every backend
// (core.NewMessageID).
func newID(now time.Time) string { return core.NewMessageID(now) }

// encodeHeaders writes a published message's fields.
func encodeHeaders(h nats.Header, id string, m core.PutMessage, born time.Time) {
	h.Set(hID, id)
	if m.Tags != "" {
		h.Set(hTags, m.Tags)
	}
	if len(m.Keys) > 0 {
		b, _ := json.Marshal(m.Keys)
		h.Set(hKeys, string(b))
	}
	if len(m.Properties) > 0 {
		b, _ := json.Marshal(m.Properties)
		h.Set(hProps, string(b))
	}
	if m.ShardingKey != "" {
		h.Set(hSharding, m.ShardingKey)
	}
	if m.BodyIsText {
		h.Set(hText, "1")
	}
	h.Set(hBorn, strconv.FormatInt(born.UnixMilli(), 10))
	if m.TraceParent != "" {
		h.Set(hTraceParent, m.TraceParent)
		if m.TraceState != "" {
			h.Set(hTraceState, m.TraceState)
		}
	}
}

// decodeMessage rebuilds a core.Message from a stored NATS message.
func decodeMessage(subj string, h nats.Header, body []byte, seq uint64, stored time.Time) *core.Message {
	topic, q := subjectQueue(subj)
	if v := h.Get(hQueue); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			q = n
		}
	}
	if v := h.Get(hTopic); v != "" {
		topic = v
	}
	m := &core.Message{
		ID: h.Get(hID), Topic: topic, QueueID: max(q, 0), QueueOffset: int64(seq),
		Body: body, BodyIsText: h.Get(hText) == "1", Tags: h.Get(hTags),
		ShardingKey: h.Get(hSharding), StoredAt: stored.UTC(), SysProps: map[string]string{},
	}
	if v := h.Get(hKeys); v != "" {
		_ = json.Unmarshal([]byte(v), &m.Keys)
	}
	if v := h.Get(hProps); v != "" {
		_ = json.Unmarshal([]byte(v), &m.Properties)
	}
	if v, err := strconv.ParseInt(h.Get(hBorn), 10, 64); err == nil {
		m.BornAt = time.UnixMilli(v).UTC()
	}
	if v := h.Get(hDeliverAt); v != "" {
		m.SysProps[core.PropDeliverAt] = v
	}
	if v := h.Get(hReason); v != "" {
		m.SysProps[core.PropLastReason] = v
	}
	if v := h.Get(hTraceParent); v != "" {
		m.SysProps[core.PropTraceParent] = v
		if st := h.Get(hTraceState); st != "" {
			m.SysProps[core.PropTraceState] = st
		}
	}
	if v, err := strconv.Atoi(h.Get(hReconsume)); err == nil {
		m.ReconsumeTimes = v
	}
	return m
}
