package jetstream

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/core"
)

// TestTraceContextHeaders: a message's trace context travels in the NATS
// headers traceparent / tracestate and comes back as the system
// properties every API answer and webhook push reads; a user property of
// the same name stays a user property.
func TestTraceContextHeaders(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	h := nats.Header{}
	encodeHeaders(h, "id1", core.PutMessage{Body: []byte("x"), TraceParent: tp, TraceState: "v=1",
		Properties: map[string]string{"TRACEPARENT": "user"}}, time.Now())
	if h.Get("traceparent") != tp || h.Get("tracestate") != "v=1" {
		t.Fatalf("headers %v", h)
	}
	m := decodeMessage("t.0", h, []byte("x"), 1, time.Now())
	if m.TraceParent() != tp || m.TraceState() != "v=1" || m.Properties["TRACEPARENT"] != "user" || len(m.Properties) != 1 {
		t.Fatalf("decoded trace %q %q properties %v", m.TraceParent(), m.TraceState(), m.Properties)
	}
	h = nats.Header{}
	encodeHeaders(h, "id2", core.PutMessage{Body: []byte("x")}, time.Now())
	if _, ok := h["traceparent"]; ok {
		t.Fatal("traceparent header without a trace context")
	}
	if m := decodeMessage("t.0", h, []byte("x"), 2, time.Now()); m.TraceParent() != "" {
		t.Fatalf("trace context %q from nothing", m.TraceParent())
	}
}
