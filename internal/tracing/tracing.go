// Package tracing is mqgate's OpenTelemetry tracing: the tracer provider
// and its OTLP/HTTP exporter, configured by the standard OTEL_* variables
// and off unless they ask for it (Enabled), and the W3C Trace Context
// values a message carries from its producer to its consumers (Parse,
// Format).
//
// Off, there is no Tracer: callers hold a nil *Tracer and test it before
// doing any tracing work, so a server without tracing spends nothing on
// it (no provider, no no-op spans, no allocations).
package tracing

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mqgate/mqgate/core"
)

// Enabled applies mqgate's rule for turning tracing on, from the standard
// variables (getenv is os.Getenv in the binary):
//   - OTEL_SDK_DISABLED=true: off;
//   - OTEL_TRACES_EXPORTER=none: off; =otlp: on; any other value is an
//     error (only OTLP is built in);
//   - otherwise on exactly when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
//
// Only the http/protobuf protocol is built in: OTEL_EXPORTER_OTLP_PROTOCOL
// (or its _TRACES_ form) set to anything else is an error, not a silent
// fallback.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	on := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "":
	case "none":
		return false, nil
	case "otlp":
		on = true
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: only otlp (or none) is supported", exp)
	}
	if !on {
		return false, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(v)); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("%s=%q: only http/protobuf is supported", v, p)
			}
			break
		}
	}
	return true, nil
}

// Tracer makes mqgate's spans. A nil *Tracer is tracing off.
type Tracer struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	shapes shapes
}

// Start builds the tracer provider when Enabled says so, and returns nil
// (tracing off) otherwise. The exporter reads its endpoint, headers,
// timeout, compression and TLS from OTEL_EXPORTER_OTLP_*, the batch
// processor its sizes from OTEL_BSP_* (with larger defaults than the
// SDK's, batchDefaults), the sampler OTEL_TRACES_SAMPLER
// (default parentbased_always_on), the resource OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES; service.name defaults to "mqgate".
func Start(ctx context.Context, version string) (*Tracer, error) {
	on, err := Enabled(os.Getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("mqgate"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithHost(),
		resource.WithProcessPID(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return New(sdktrace.NewTracerProvider(Batcher(exp), sdktrace.WithResource(res))), nil
}

// Batcher is the SDK's batch span processor over exp as mqgate runs it:
// the OTEL_BSP_* variables, and batchDefaults where they are unset.
func Batcher(exp sdktrace.SpanExporter) sdktrace.TracerProviderOption {
	return sdktrace.WithBatcher(exp, batchDefaults(os.Getenv)...)
}

// mqgate's batch processor sizes where OTEL_BSP_MAX_EXPORT_BATCH_SIZE and
// OTEL_BSP_MAX_QUEUE_SIZE leave them unset: 4x the SDK's (512 and 2048).
// A busy gateway ends tens of thousands of spans a second; exported 2,048
// at a time, it makes a quarter of the OTLP requests (each with its
// resource, HTTP exchange and exporter wake-up), which cut tracing's CPU
// per publish by about a third in BenchmarkPublishHandlerTraced (paired
// runs: +7.6 µs against +10.9 µs). The queue holds four batches, so
// spans are not dropped while one is exported (at most ~8 MiB of ended
// spans).
const (
	defaultExportBatch = 2048
	defaultQueue       = 4 * defaultExportBatch
)

// batchDefaults returns the batch processor options for the sizes the
// OTEL_BSP_* variables do not set (an option would override the
// variable: the SDK applies options after reading them).
func batchDefaults(getenv func(string) string) []sdktrace.BatchSpanProcessorOption {
	var opts []sdktrace.BatchSpanProcessorOption
	if getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") == "" {
		opts = append(opts, sdktrace.WithMaxExportBatchSize(defaultExportBatch))
	}
	if getenv("OTEL_BSP_MAX_QUEUE_SIZE") == "" {
		opts = append(opts, sdktrace.WithMaxQueueSize(defaultQueue))
	}
	return opts
}

// New wraps a tracer provider (tests give one with their own exporter).
func New(tp *sdktrace.TracerProvider) *Tracer {
	return &Tracer{tp: tp, tracer: tp.Tracer("github.com/mqgate/mqgate")}
}

// Shutdown flushes the spans still queued and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Start starts a span (trace.Tracer.Start).
func (t *Tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, opts...)
}

// System is the messaging.system of every span.
var System = semconv.MessagingSystemKey.String("mqgate")

// Attribute constructors of the messaging conventions, re-exported so
// callers need one import.
var (
	Destination = semconv.MessagingDestinationName
	MessageID   = semconv.MessagingMessageID
	Group       = semconv.MessagingConsumerGroupName
	BatchCount  = semconv.MessagingBatchMessageCount
	Operation   = semconv.MessagingOperationName

	OpSend    = semconv.MessagingOperationTypeSend
	OpReceive = semconv.MessagingOperationTypeReceive
	OpProcess = semconv.MessagingOperationTypeProcess
	OpSettle  = semconv.MessagingOperationTypeSettle
)

// Span start options shared by every span of a kind (options are
// immutable values; one each instead of one per span).
var (
	KindServer   = trace.WithSpanKind(trace.SpanKindServer)
	KindConsumer = trace.WithSpanKind(trace.SpanKindConsumer)
	KindInternal = trace.WithSpanKind(trace.SpanKindInternal)
)

// MaxLinks bounds the links one span carries (one per message of a
// batch): a batch of 1,000 publishes links its first MaxLinks messages and
// says how many it had in messaging.batch.message_count.
const MaxLinks = 128

// Outcome is the mqgate.outcome attribute of settlement and push spans
// (ack, nack, dlq, ok, failed: a handful of values).
func Outcome(v string) attribute.KeyValue { return attribute.String("mqgate.outcome", v) }

// W3C Trace Context (https://www.w3.org/TR/trace-context/), parsed and
// written by the SDK's propagator, not by hand.
var propagator = propagation.TraceContext{}

// carrier is a TextMapCarrier of the two Trace Context values.
type carrier struct{ parent, state string }

func (c *carrier) Get(k string) string {
	switch k {
	case "traceparent":
		return c.parent
	case "tracestate":
		return c.state
	}
	return ""
}

func (c *carrier) Set(k, v string) {
	switch k {
	case "traceparent":
		c.parent = v
	case "tracestate":
		c.state = v
	}
}

func (c *carrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// Parse reads a traceparent (and tracestate) into a remote span context;
// ok is false when traceparent is not a valid W3C traceparent (then
// tracestate is ignored too, as the recommendation says).
func Parse(parent, state string) (sc trace.SpanContext, ok bool) {
	if parent == "" {
		return sc, false
	}
	if sc, done := parse00(parent, state); done {
		return sc, sc.IsValid()
	}
	c := carrier{parent: parent, state: state}
	sc = trace.SpanContextFromContext(propagator.Extract(context.Background(), &c))
	return sc, sc.IsValid()
}

// parse00 is Parse of the common shape, a version-00 traceparent with
// flags 00 or 01 (what mqgate itself writes), without the propagator's
// context and carrier (three allocations; it runs for every message a
// traced receive or push links to). done is false for anything else, which
// the propagator reads. TestParse00IsExtract holds the two together.
func parse00(parent, state string) (sc trace.SpanContext, done bool) {
	if len(parent) != 55 || parent[:3] != "00-" || parent[35] != '-' || parent[52] != '-' || parent[53] != '0' {
		return sc, false
	}
	var flags trace.TraceFlags
	switch parent[54] {
	case '0':
	case '1':
		flags = trace.FlagsSampled
	default:
		return sc, false
	}
	tid, err := trace.TraceIDFromHex(parent[3:35])
	if err != nil {
		return sc, false
	}
	sid, err := trace.SpanIDFromHex(parent[36:52])
	if err != nil {
		return sc, false
	}
	cfg := trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true}
	if state != "" {
		if ts, err := trace.ParseTraceState(state); err == nil {
			cfg.TraceState = ts
		}
	}
	return trace.NewSpanContext(cfg), true
}

// Valid reports whether s is a valid W3C traceparent.
func Valid(s string) bool {
	_, ok := Parse(s, "")
	return ok
}

// ValidState reports whether s is a tracestate the propagator keeps (a
// list of at most 32 valid key=value members). An invalid one is dropped
// by the propagator, so a publish refuses it instead.
func ValidState(s string) bool {
	_, err := trace.ParseTraceState(s)
	return err == nil
}

// Format writes sc as traceparent and tracestate values ("" when sc is
// not valid), as the propagator's Inject writes them (version 00, the
// flags byte of sc) in one allocation: it runs for every traced publish
// and push. TestFormatIsInject holds the two together.
func Format(sc trace.SpanContext) (parent, state string) {
	if !sc.IsValid() {
		return "", ""
	}
	var b [55]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(b[:3], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags() & trace.FlagsSampled)})
	return string(b[:]), sc.TraceState().String()
}

// Link is a link to the message context carried as parent/state; ok is
// false when there is none (or it is not valid).
func Link(parent, state string) (trace.Link, bool) {
	sc, ok := Parse(parent, state)
	if !ok {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc}, true
}

// DeadLettered records the dlq span of a message copied to group's
// dead-letter topic (engine.Options.DeadLettered): INTERNAL, settle,
// linked to the message's creation context.
func (t *Tracer) DeadLettered(group string, m *core.Message) {
	var links []trace.Link
	if l, ok := Link(m.TraceParent(), m.TraceState()); ok {
		links = append(links, l)
	}
	_, span := t.tracer.Start(context.Background(), "dlq "+group, KindInternal,
		trace.WithLinks(links...), trace.WithAttributes(System, Group(group), OpSettle, Operation("dlq"), Outcome("dlq"),
			Destination(m.UserTopic()), MessageID(m.UserID()), attribute.Int("mqgate.reconsume_times", m.ReconsumeTimes)))
	span.End()
}
