package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/tracing"
)

// Trace context on the API (docs/observability.md "Traces").
//
// In: a single publish takes the W3C traceparent / tracestate headers (or
// the traceparent / tracestate fields, not both); a batch entry and a
// stream publish frame take the fields. Kept: the engine stores them as
// system properties (core.PropTraceParent), never among user properties.
// Out: every message shown (receive, stream, browse, webhook body)
// carries its traceparent; a webhook push sends it as a header.
//
// Spans, only when s.tracer is set (tracing on): publish (SERVER), REST
// or a stream's publish frame, whose durable commit is the engine's
// commit span per group commit (linked to it) or, on JetStream, a child
// commit span (INTERNAL); receive (CONSUMER), REST or a consume stream's,
// linked to each received message's creation context; ack and nack
// (SERVER, messaging.operation.type settle), REST or stream frames. Off,
// none of this runs: every entry point tests s.tracer first.

// Header names as net/http keys them (canonical), read straight from
// the map so that a request without them costs no allocation.
const (
	headerTraceParent = "Traceparent"
	headerTraceState  = "Tracestate"
)

// checkTraceContext checks a publish's traceparent and tracestate fields.
func checkTraceContext(parent, state string, i int, fe *fieldErrors) {
	if parent == "" {
		fe.add(entryField(i, "tracestate"), "only with a traceparent")
		return
	}
	// Version 00 exactly (what the field documents), whose syntax the
	// propagator then checks with the rest (ids not all zeros).
	if len(parent) != core.MaxTraceParentLen || !strings.HasPrefix(parent, "00-") || !tracing.Valid(parent) {
		fe.add(entryField(i, "traceparent"), "must be a W3C traceparent: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, ids not all zeros")
	}
	if len(state) > core.MaxTraceStateLen || (state != "" && !tracing.ValidState(state)) {
		fe.add(entryField(i, "tracestate"), "must be a W3C tracestate of at most 512 characters (key=value members, comma separated)")
	}
}

// traceHeaders returns the request's traceparent and tracestate headers
// when traceparent is one valid W3C traceparent; a missing or malformed
// one is ignored (ok false), as Trace Context §3.2 says a receiver does.
func traceHeaders(r *http.Request) (parent, state string, ok bool) {
	tp := r.Header[headerTraceParent]
	if len(tp) != 1 || len(tp[0]) > core.MaxTraceParentLen || !tracing.Valid(tp[0]) {
		return "", "", false
	}
	if ts := r.Header[headerTraceState]; len(ts) > 0 {
		// Several tracestate headers are one list (RFC 9110 §5.3); a
		// malformed or oversized one is dropped, the traceparent kept.
		state = ts[0]
		for _, v := range ts[1:] {
			state += "," + v
		}
		if len(state) > core.MaxTraceStateLen || !tracing.ValidState(state) {
			state = ""
		}
	}
	return tp[0], state, true
}

// requestContext is r's context with the remote parent its trace
// headers name, if any (tracing on only): what the propagator's Extract
// over the headers gives (the first traceparent and tracestate values),
// read by tracing.Parse without the propagator's header carrier, whose
// lookups canonicalize (allocate) each key, on every receive, ack and
// nack that carries a context. TestRequestContextIsExtract holds the two
// together.
func requestContext(r *http.Request) context.Context {
	tp := r.Header[headerTraceParent]
	if len(tp) == 0 {
		return r.Context()
	}
	var state string
	if ts := r.Header[headerTraceState]; len(ts) > 0 {
		state = ts[0]
	}
	sc, ok := tracing.Parse(tp[0], state)
	if !ok {
		return r.Context()
	}
	return trace.ContextWithRemoteSpanContext(r.Context(), sc)
}

// startPublish starts the publish span of pms (tracing on). Its parent is
// the single message's trace context or the batch request's headers; a
// batch links to the entries that carry their own context. The
// messages without a context of their own get the span's, which is then
// their creation context (what consumers link to).
func (s *Server) startPublish(ctx context.Context, start time.Time, topic string, pms []core.PutMessage, batch bool) (context.Context, trace.Span) {
	var links []trace.Link
	if !batch {
		if sc, ok := tracing.Parse(pms[0].TraceParent, pms[0].TraceState); ok {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
	} else {
		for i := range pms {
			if len(links) == tracing.MaxLinks {
				break
			}
			if l, ok := tracing.Link(pms[i].TraceParent, pms[i].TraceState); ok {
				links = append(links, l)
			}
		}
	}
	sh := s.tracer.Shape("publish", tracing.OpSend, topic, tracing.Destination)
	opts := make([]trace.SpanStartOption, 0, 4)
	opts = append(opts, tracing.KindServer, trace.WithTimestamp(start), sh.Attrs)
	if batch {
		opts[2] = sh.With(tracing.BatchCount(len(pms)))
	}
	if len(links) > 0 {
		opts = append(opts, trace.WithLinks(links...))
	}
	ctx, span := s.tracer.Start(ctx, sh.Name, opts...)
	if span.IsRecording() {
		tp, ts := tracing.Format(span.SpanContext())
		for i := range pms {
			if !batch || pms[i].TraceParent == "" {
				pms[i].TraceParent, pms[i].TraceState = tp, ts
			}
		}
	}
	return ctx, span
}

// put is engine.Put with, when the publish is traced and the engine does
// not record its group commits (JetStream), a span for the durable commit
// (the wait for the publish acks). The embedded engine records one commit
// span per group commit instead, linked to the publish spans it made
// durable (tracing.GroupCommitted): under load a group holds tens of
// publishes, so that is a fraction of a span per publish instead of one.
func (s *Server) put(ctx context.Context, topic string, pms []core.PutMessage) ([]core.PutResult, error) {
	if s.tracer == nil || s.groupSpans || !trace.SpanFromContext(ctx).IsRecording() {
		return s.backend.Put(ctx, topic, pms)
	}
	sh := s.tracer.Shape("commit", attribute.KeyValue{}, topic, tracing.Destination) // no operation type
	cctx, span := s.tracer.Start(ctx, sh.Name, tracing.KindInternal, sh.With(tracing.BatchCount(len(pms))))
	res, err := s.backend.Put(cctx, topic, pms)
	endSpan(span, err)
	return res, err
}

// endPublish ends a publish span. It does not name the message id (a
// recommended attribute, not a required one): set after the start it
// costs the span a second attribute slice and the export three objects,
// on every publish. The id is on the receive and push spans of one
// message, which link to this span.
func endPublish(span trace.Span, err error) {
	endSpan(span, err)
}

// endSpan ends span, marked failed with the error's code when err is set.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String("error.type", core.ErrorCode(err)))
	}
	span.End()
}

// traceReceive records the span of a receive that leased messages (tracing
// on): CONSUMER, from the request's start, a child of the request's trace
// headers, linked to each message's creation context (the delivery spans
// of the messaging conventions). A receive that got nothing records no
// span: an idle long poll is not a delivery.
//
// ctx holds the parent: the receive request's trace context, or a consume
// stream's (its upgrade request's traceparent), whose every receive that
// leased messages is one such span.
func (s *Server) traceReceive(ctx context.Context, start time.Time, group string, got []core.Received) {
	links := make([]trace.Link, 0, min(len(got), tracing.MaxLinks))
	topic := got[0].Message.UserTopic()
	for _, m := range got {
		if t := m.Message.UserTopic(); t != topic {
			topic = ""
		}
		if len(links) < tracing.MaxLinks {
			if l, ok := tracing.Link(m.Message.TraceParent(), m.Message.TraceState()); ok {
				links = append(links, l)
			}
		}
	}
	// The conventions: a message id for one message, a count for a batch.
	var one attribute.KeyValue
	if len(got) == 1 {
		one = tracing.MessageID(got[0].Message.UserID())
	} else {
		one = tracing.BatchCount(len(got))
	}
	sh := s.tracer.Shape("receive", tracing.OpReceive, group, tracing.Group)
	var attrs trace.SpanStartOption // one attribute option (Shape.With)
	if topic != "" {
		attrs = sh.With(tracing.Destination(topic), one)
	} else {
		attrs = sh.With(one)
	}
	_, span := s.tracer.Start(ctx, sh.Name, tracing.KindConsumer,
		trace.WithTimestamp(start), attrs, trace.WithLinks(links...))
	span.End()
}

// traceSettle records the span of an ack or nack request (tracing on)
// that carries a trace context (a traceparent header): SERVER, settle,
// named by op (ack, nack), a child of the consumer's span that settles;
// outcome is ack, nack or dlq (a nack with delayLevel -1; the engine's
// dlq span follows once the dead-letter copy is stored). A settlement
// without a trace context records nothing: it names receipt handles, not
// messages, so its span would be a trace of its own that nothing links
// to (the settle metrics count it), at the cost of a span per ack.
//
// ctx holds the trace context: the request's, or on a consume stream the
// upgrade request's (one span per Ack call, which takes the ack frames
// that arrived together, and per nack frame).
func (s *Server) traceSettle(ctx context.Context, start time.Time, group, op, outcome string, res []core.HandleResult, err error) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	ok := 0
	for _, h := range res {
		if h.Status == core.HandleOK {
			ok++
		}
	}
	sh := s.tracer.Shape(op, tracing.OpSettle, group, tracing.Group)
	var attrs trace.SpanStartOption // one attribute option (Shape.With)
	if len(res) > 1 {
		attrs = sh.With(tracing.Outcome(outcome), attribute.Int("mqgate.settled", ok), tracing.BatchCount(len(res)))
	} else {
		attrs = sh.With(tracing.Outcome(outcome), attribute.Int("mqgate.settled", ok))
	}
	_, span := s.tracer.Start(ctx, sh.Name, tracing.KindServer, trace.WithTimestamp(start), attrs)
	endSpan(span, err)
}

// nackOutcome is the mqgate.outcome of a nack at delay level level.
func nackOutcome(level int) string {
	if level < 0 {
		return "dlq"
	}
	return "nack"
}
