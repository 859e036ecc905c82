package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

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
	t := tracing.New(sdktrace.NewTracerProvider(append(opts, sdktrace.WithBatcher(exp))...))
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
		Tracer: benchTracer(b, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))))})
	body := []byte(`{"body":"` + strings.Repeat("x", 1024) + `","tags":"created"}`)
	benchPost(b, s, "/v1/topics/orders/messages", body)
}

// BenchmarkAckHandlerTraced is BenchmarkAckHandler with tracing on and
// a traceparent header (an ack without one records no span).
func BenchmarkAckHandlerTraced(b *testing.B) {
	log := zerolog.New(io.Discard)
	s := New(Options{Backend: ackOnlyService{}, Logger: &log, Tracer: benchTracer(b)})
	body := []byte(`{"receiptHandles":["AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYgAZemsOuwrq34JQIA"]}`)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/v1/groups/g1/ack", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
