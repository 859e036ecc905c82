package webhook

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/tracing"
)

// Trace context on a push (docs/observability.md "Traces"). Every
// message in the body carries its traceparent field. The request's
// traceparent / tracestate headers, beside the webhook-* headers:
//   - tracing on: the push span's context, so the receiver's spans are
//     children of the delivery;
//   - tracing off: the message's stored context when the request holds
//     one message; none for a batch (each message has its own).
//
// The headers are not part of the signed content (Standard Webhooks signs
// id, timestamp and body), so they change nothing for verifiers.

// Header names on the wire (W3C Trace Context §3.2 and §3.3).
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// setTraceHeaders sets the request's trace headers (see above).
func setTraceHeaders(h http.Header, msgs []*core.Message, span trace.Span) {
	var parent, state string
	switch {
	case span != nil:
		parent, state = tracing.Format(span.SpanContext())
	case len(msgs) == 1:
		parent, state = msgs[0].TraceParent(), msgs[0].TraceState()
	}
	if parent == "" {
		return
	}
	h.Set(HeaderTraceParent, parent)
	if state != "" {
		h.Set(HeaderTraceState, state)
	}
}

// startPush starts the span of one push request: CONSUMER (the delivery
// of the messaging conventions, operation type process), linked to every
// message's creation context; for a request of one message that context
// is also the parent, so the producer's trace continues through the
// webhook receiver.
func (p *Pusher) startPush(msgs []*core.Message) trace.Span {
	links := make([]trace.Link, 0, min(len(msgs), tracing.MaxLinks))
	topic := msgs[0].UserTopic()
	for _, m := range msgs {
		if m.UserTopic() != topic {
			topic = ""
		}
		if len(links) < tracing.MaxLinks {
			if l, ok := tracing.Link(m.TraceParent(), m.TraceState()); ok {
				links = append(links, l)
			}
		}
	}
	ctx := p.ctx
	if len(msgs) == 1 && len(links) == 1 {
		ctx = trace.ContextWithRemoteSpanContext(ctx, links[0].SpanContext)
	}
	attrs := []attribute.KeyValue{tracing.System, tracing.Group(p.group), tracing.OpProcess, tracing.Operation("push"),
		attribute.Int("mqgate.attempt", webhookAttempt(msgs))}
	if topic != "" {
		attrs = append(attrs, tracing.Destination(topic))
	}
	if len(msgs) == 1 {
		attrs = append(attrs, tracing.MessageID(msgs[0].UserID()))
	} else {
		attrs = append(attrs, tracing.BatchCount(len(msgs)))
	}
	_, span := p.opts.Tracer.Start(ctx, "push "+p.group, tracing.KindConsumer,
		trace.WithAttributes(attrs...), trace.WithLinks(links...))
	return span
}

// endPush ends a push span with the request's outcome (an Outcome*
// constant) and the settlement it led to: ack on success, else nack.
func endPush(span trace.Span, r result) {
	settle := "nack"
	if r.ok {
		settle = "ack"
	}
	span.SetAttributes(attribute.String("mqgate.push.outcome", r.outcome), tracing.Outcome(settle))
	if !r.ok {
		span.SetStatus(codes.Error, r.err)
	}
	span.End()
}
