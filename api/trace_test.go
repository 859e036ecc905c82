package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mqgate/mqgate/backend/embedded"
	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/internal/tracing"
)

// TestTraceHeadersAbsentAllocateNothing: with no trace headers the trace
// context code on the publish path (header lookup) allocates nothing,
// so tracing off costs a request without a traceparent nothing.
// (BenchmarkPublishHandler's allocs/op are the same as before tracing
// was added: 34, batch 38, ack 32.)
func TestTraceHeadersAbsentAllocateNothing(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/topics/t/messages", strings.NewReader(`{"body":"x"}`))
	r.Header.Set("Content-Type", "application/json")
	if n := testing.AllocsPerRun(100, func() {
		if _, _, ok := traceHeaders(r); ok {
			t.Fatal("trace headers found")
		}
	}); n != 0 {
		t.Fatalf("traceHeaders without headers: %v allocations", n)
	}
}

// benchTracer is a tracer exporting over OTLP/HTTP (the binary's
// exporter, protobuf encoding included) to a loopback sink that
// discards, for the tracing-on benchmarks.
func benchTracer(b *testing.B, opts ...sdktrace.TracerProviderOption) *tracing.Tracer {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(sink.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	t := tracing.New(sdktrace.NewTracerProvider(append(opts, tracing.Batcher(exp))...)) // as the binary batches
	b.Cleanup(func() { _ = t.Shutdown(context.Background()) })
	return t
}

// BenchmarkPublishHandlerTraced is BenchmarkPublishHandler with tracing
// on (every request sampled): the publish and commit spans and their
// export.
//
//	go test -run XXX -bench 'PublishHandler(Traced)?$' -benchmem ./api
func BenchmarkPublishHandlerTraced(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: putOnlyEngine{}, Logger: &log, Tracer: benchTracer(b), GroupCommitSpans: true})
	body := []byte(`{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`)
	benchPost(b, s, "/v1/topics/orders/messages", body)
}

// BenchmarkPublishHandlerTracedCommit is BenchmarkPublishHandlerTraced
// on a backend that does not report its group commits (JetStream): a
// commit span per publish, a child of its publish span.
func BenchmarkPublishHandlerTracedCommit(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: putOnlyEngine{}, Logger: &log, Tracer: benchTracer(b)})
	body := []byte(`{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`)
	benchPost(b, s, "/v1/topics/orders/messages", body)
}

// BenchmarkPublishHandlerSampled is BenchmarkPublishHandlerTraced with
// one trace in ten sampled (OTEL_TRACES_SAMPLER=parentbased_traceidratio,
// OTEL_TRACES_SAMPLER_ARG=0.1): the others cost a non-recording span.
func BenchmarkPublishHandlerSampled(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: putOnlyEngine{}, Logger: &log,
		Tracer: benchTracer(b, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1)))), GroupCommitSpans: true})
	body := []byte(`{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`)
	benchPost(b, s, "/v1/topics/orders/messages", body)
}

// BenchmarkAckHandlerTraced is BenchmarkAckHandler with tracing on and
// a traceparent header (an ack without one records no span). The header
// is put in the map as the server's reader leaves it, so that allocs/op
// against BenchmarkAckHandler are the server's alone.
func BenchmarkAckHandlerTraced(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: ackOnlyService{}, Logger: &log, Tracer: benchTracer(b)})
	body := []byte(`{"receiptHandles":["AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYgAZemsOuwrq34JQIA"]}`)
	tp := []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v1/groups/g1/ack", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header[headerTraceParent] = tp
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	_ = s.tracer.Shutdown(context.Background())
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// receiveService answers every receive with its messages at once (each
// carrying the trace context its publish stored) and every ack ok.
type receiveService struct {
	ackOnlyService
	got []core.Received
}

func (r receiveService) Receive(context.Context, string, core.ReceiveRequest) ([]core.Received, error) {
	return r.got, nil
}

// benchReceive serves a receive of n 1 KiB messages per iteration
// (mqbench consume receives up to 32 at a time), tracing on or off: the
// receive span, linked to each message's creation context, and its
// export. Its request has no traceparent (mqbench's have none).
//
//	go test -run XXX -bench 'ReceiveHandler' -benchmem ./api
func benchReceive(b *testing.B, n int, traced bool) {
	var tr *tracing.Tracer
	if traced {
		tr = benchTracer(b)
	}
	got := make([]core.Received, n)
	for i := range got {
		got[i] = core.Received{ReceiptHandle: "AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYgAZemsOuwrq34JQIA",
			InvisibleUntil: time.Now().Add(time.Minute), Message: &core.Message{
				ID: fmt.Sprintf("0a1b2c3d4e5f60718293a4b5%02x", i), Topic: "orders", QueueID: 1, QueueOffset: int64(i),
				Body: bytes.Repeat([]byte("x"), 1024), BodyIsText: true, Tags: "created", BornAt: time.Now(), StoredAt: time.Now(),
				SysProps: map[string]string{core.PropTraceParent: fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e47%02x-00f067aa0ba902b7-01", i)}}}
	}
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: receiveService{got: got}, Logger: &log, Tracer: tr})
	body := []byte(`{"maxMessages":32}`)
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v1/groups/g1/receive", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	if tr != nil {
		_ = tr.Shutdown(context.Background())
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkReceiveHandler(b *testing.B)         { benchReceive(b, 1, false) }
func BenchmarkReceiveHandlerTraced(b *testing.B)   { benchReceive(b, 1, true) }
func BenchmarkReceive32Handler(b *testing.B)       { benchReceive(b, 32, false) }
func BenchmarkReceive32HandlerTraced(b *testing.B) { benchReceive(b, 32, true) }

// benchEngine publishes 1 KiB messages through the whole handler to a
// real engine (its group commit and fsync) from 64 goroutines, and
// reports the process's CPU per publish (cpu-ns/op: the writer, syncer
// and span exporter goroutines too, which ns/op misses). traced turns
// tracing on as the binary has it: a publish span each, one commit span
// per group commit.
//
//	go test -run XXX -bench 'PublishEngine(Traced)?$' -benchtime 20000x ./api
func benchEngine(b *testing.B, traced bool) {
	var tr *tracing.Tracer
	var committed func(time.Time, []context.Context, int, error)
	if traced {
		tr = benchTracer(b)
		committed = tr.GroupCommitted
	}
	be, err := embedded.Open(embedded.Options{Engine: engine.Options{Dir: b.TempDir(), GroupCommitted: committed}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close(context.Background()) })
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: be, Logger: &log, Tracer: tr, GroupCommitSpans: traced})
	r := httptest.NewRequest("PUT", "/v1/topics/orders", strings.NewReader(`{"queues":4}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 201 {
		b.Fatalf("create topic: %d %s", w.Code, w.Body)
	}
	body := []byte(`{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`)
	b.SetParallelism(32) // 64 publishers on 2 cores, as mqbench publish --concurrency 64
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest("POST", "/v1/topics/orders/messages", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code != 201 {
				b.Errorf("%d %s", w.Code, w.Body)
				return
			}
		}
	})
	b.StopTimer()
	if tr != nil {
		_ = tr.Shutdown(context.Background()) // the queued spans' export counts too
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	ws := be.Engine.WriterStats()
	b.ReportMetric(float64(ws.Requests)/float64(max(ws.Groups, 1)), "reqs/group")
}

func BenchmarkPublishEngine(b *testing.B)       { benchEngine(b, false) }
func BenchmarkPublishEngineTraced(b *testing.B) { benchEngine(b, true) }

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestRequestContextIsExtract: requestContext gives the parent the
// propagator's Extract over the headers gives, for every shape of trace
// headers (none, several, malformed, other versions and flags).
func TestRequestContextIsExtract(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, h := range []http.Header{
		{},
		{"Traceparent": {tp}},
		{"Traceparent": {tp}, "Tracestate": {"a=1,b=2"}},
		{"Traceparent": {tp}, "Tracestate": {"a=1", "b=2"}},
		{"Traceparent": {tp}, "Tracestate": {"not a tracestate"}},
		{"Traceparent": {tp, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}},
		{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}},
		{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03"}},
		{"Traceparent": {"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"}},
		{"Traceparent": {"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}},
		{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"}},
		{"Traceparent": {""}},
		{"Traceparent": {}},
	} {
		r := httptest.NewRequest("POST", "/v1/groups/g1/ack", nil)
		r.Header = h
		want := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(h)))
		got := trace.SpanContextFromContext(requestContext(r))
		if !got.Equal(want) || got.TraceState().String() != want.TraceState().String() {
			t.Errorf("%v: requestContext %v (%q), Extract %v (%q)", h, got, got.TraceState(), want, want.TraceState())
		}
	}
}
