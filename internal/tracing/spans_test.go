package tracing

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func recorded(t *testing.T) (*Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tr := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, rec
}

func attrOf(s sdktrace.ReadOnlySpan, k string) (attribute.Value, bool) {
	for _, a := range s.Attributes() {
		if string(a.Key) == k {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestGroupCommitted: one commit span per group, linked to the group's
// traced publishes (ended ones too) and to nothing else; a group without
// one records no span.
func TestGroupCommitted(t *testing.T) {
	tr, rec := recorded(t)
	pub1, span1 := tr.Start(context.Background(), "publish a")
	pub2, span2 := tr.Start(context.Background(), "publish b")
	span1.End() // its publisher was answered before the group was reported
	defer span2.End()
	remote, _ := Parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "")
	header := trace.ContextWithRemoteSpanContext(context.Background(), remote) // a request's traceparent only
	start := time.Now().Add(-time.Millisecond)

	tr.GroupCommitted(start, []context.Context{header, context.Background()}, 3, nil)
	tr.GroupCommitted(start, []context.Context{pub1, header, context.Background(), pub2}, 7, errors.New("disk full"))

	var commits []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "commit" {
			commits = append(commits, s)
		}
	}
	if len(commits) != 1 {
		t.Fatalf("%d commit spans, want 1 (the group without a traced publish records none)", len(commits))
	}
	c := commits[0]
	if c.SpanKind() != trace.SpanKindInternal || !c.StartTime().Equal(start) || c.Parent().IsValid() {
		t.Errorf("commit span kind %v start %v parent %v; want internal, %v, no parent", c.SpanKind(), c.StartTime(), c.Parent(), start)
	}
	links := c.Links()
	if len(links) != 2 || links[0].SpanContext.SpanID() != span1.SpanContext().SpanID() ||
		links[1].SpanContext.SpanID() != span2.SpanContext().SpanID() {
		t.Errorf("links %v; want the two publish spans", links)
	}
	if v, _ := attrOf(c, "messaging.batch.message_count"); v.AsInt64() != 7 {
		t.Errorf("message count %v, want 7", v.Emit())
	}
	if v, _ := attrOf(c, "messaging.system"); v.AsString() != "mqgate" {
		t.Errorf("messaging.system %q", v.Emit())
	}
	if c.Status().Code != codes.Error {
		t.Errorf("status %v, want an error", c.Status())
	}
}

// TestGroupCommittedLinksAtMost: a group of more traced publishes than
// MaxLinks links the first MaxLinks.
func TestGroupCommittedLinksAtMost(t *testing.T) {
	tr, rec := recorded(t)
	var ctxs []context.Context
	for i := range MaxLinks + 10 {
		ctx, span := tr.Start(context.Background(), fmt.Sprint("publish ", i))
		span.End()
		ctxs = append(ctxs, ctx)
	}
	tr.GroupCommitted(time.Now(), ctxs, len(ctxs), nil)
	for _, s := range rec.Ended() {
		if s.Name() == "commit" {
			if n := len(s.Links()); n != MaxLinks {
				t.Fatalf("%d links, want %d", n, MaxLinks)
			}
			return
		}
	}
	t.Fatal("no commit span")
}

// TestShape: a shape is built once per operation and destination, its
// name and attributes as the conventions ask, and the cache is bounded.
func TestShape(t *testing.T) {
	tr, rec := recorded(t)
	a := tr.Shape("publish", OpSend, "orders", Destination)
	if b := tr.Shape("publish", OpSend, "orders", Destination); a != b {
		t.Error("the same shape built twice")
	}
	if a.Name != "publish orders" {
		t.Errorf("name %q", a.Name)
	}
	_, span := tr.Start(context.Background(), a.Name, a.Attrs)
	span.End()
	s := rec.Ended()[0]
	for k, want := range map[string]string{"messaging.system": "mqgate", "messaging.operation.name": "publish",
		"messaging.operation.type": "send", "messaging.destination.name": "orders"} {
		if v, _ := attrOf(s, k); v.AsString() != want {
			t.Errorf("%s = %q, want %q", k, v.Emit(), want)
		}
	}
	for i := range maxShapes + 10 {
		tr.Shape("publish", OpSend, fmt.Sprint("t", i), Destination)
	}
	if n := tr.shapes.n.Load(); n != maxShapes {
		t.Errorf("%d shapes cached, want the bound %d", n, maxShapes)
	}
	if sh := tr.Shape("publish", OpSend, "past-the-bound", Destination); sh.Name != "publish past-the-bound" {
		t.Errorf("a shape past the bound: %q", sh.Name)
	}
}

// TestShapeWith: Shape.With is the shape's attributes and the span's own
// in one option, and leaves the shape's own option as it was.
func TestShapeWith(t *testing.T) {
	tr, rec := recorded(t)
	sh := tr.Shape("ack", OpSettle, "g1", Group)
	_, span := tr.Start(context.Background(), sh.Name, sh.With(Outcome("ack"), BatchCount(3)))
	span.End()
	_, span = tr.Start(context.Background(), sh.Name, sh.Attrs)
	span.End()
	with, alone := rec.Ended()[0], rec.Ended()[1]
	want := map[string]string{"messaging.system": "mqgate", "messaging.operation.name": "ack",
		"messaging.operation.type": "settle", "messaging.consumer.group.name": "g1", "mqgate.outcome": "ack"}
	for k, w := range want {
		if v, _ := attrOf(with, k); v.AsString() != w {
			t.Errorf("With: %s = %q, want %q", k, v.Emit(), w)
		}
	}
	if v, _ := attrOf(with, "messaging.batch.message_count"); v.AsInt64() != 3 {
		t.Errorf("With: messaging.batch.message_count = %s, want 3", v.Emit())
	}
	if n := len(with.Attributes()); n != 6 {
		t.Errorf("With: %d attributes, want 6", n)
	}
	if n := len(alone.Attributes()); n != 4 {
		t.Errorf("Attrs after With: %d attributes %v, want the shape's 4", n, alone.Attributes())
	}

	// No operation type: the zero KeyValue is left out, not recorded as
	// a dropped (invalid) attribute.
	c := tr.Shape("commit", attribute.KeyValue{}, "orders", Destination)
	_, span = tr.Start(context.Background(), c.Name, c.With(BatchCount(2)))
	span.End()
	s := rec.Ended()[2]
	if c.Name != "commit orders" || len(s.Attributes()) != 4 || s.DroppedAttributes() != 0 {
		t.Errorf("commit shape: name %q, attributes %v, %d dropped", c.Name, s.Attributes(), s.DroppedAttributes())
	}
	if _, ok := attrOf(s, "messaging.operation.type"); ok {
		t.Error("commit shape: an operation type")
	}
}

// TestBatchDefaults: mqgate's batch sizes apply only where the OTEL_BSP_*
// variables are unset (an option would override the variable).
func TestBatchDefaults(t *testing.T) {
	apply := func(env map[string]string) sdktrace.BatchSpanProcessorOptions {
		var o sdktrace.BatchSpanProcessorOptions
		for _, f := range batchDefaults(func(k string) string { return env[k] }) {
			f(&o)
		}
		return o
	}
	if o := apply(nil); o.MaxExportBatchSize != 2048 || o.MaxQueueSize != 8192 {
		t.Errorf("unset: batch %d queue %d, want 2048 and 8192", o.MaxExportBatchSize, o.MaxQueueSize)
	}
	o := apply(map[string]string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "100", "OTEL_BSP_MAX_QUEUE_SIZE": "400"})
	if o.MaxExportBatchSize != 0 || o.MaxQueueSize != 0 {
		t.Errorf("set: options batch %d queue %d applied; the variables must win", o.MaxExportBatchSize, o.MaxQueueSize)
	}
}
