package tracing

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// What a span costs is mostly the SDK's and the exporter's work per span
// and per attribute (docs/observability.md "Cost"), so mqgate makes few
// spans with few attributes, and builds what repeats once: a span's name
// and its constant attributes per operation and topic or group (Shape),
// and one commit span per group commit rather than one per publish
// (GroupCommitted).

// Shape is the name and constant start options of the spans of one
// operation on one destination ("publish orders" with its messaging.*
// attributes), built once and shared: a span started with it allocates
// neither its name nor its attribute option.
type Shape struct {
	Name  string
	Attrs trace.SpanStartOption
	kvs   []attribute.KeyValue // what Attrs holds, for With
}

// With is Attrs and more as one attribute option, for a span that adds
// attributes of its own (a count, an outcome): the SDK copies each
// attribute option into the span's start configuration, so two options
// cost the span a second copy (and its slice growth) that one does not.
func (sh *Shape) With(more ...attribute.KeyValue) trace.SpanStartOption {
	kvs := make([]attribute.KeyValue, 0, len(sh.kvs)+len(more))
	return trace.WithAttributes(append(append(kvs, sh.kvs...), more...)...)
}

// maxShapes bounds the shapes cached: names come from requests, and a
// stream of unknown topics must not grow the cache without end (past the
// bound a shape is built per span, as before the cache).
const maxShapes = 4096

type shapeKey struct{ op, dest string }

// shapes caches Shapes by operation and destination.
type shapes struct {
	m sync.Map // shapeKey -> *Shape
	n atomic.Int32
}

// Shape returns the shape of op (publish, receive, ack…) on dest, whose
// spans carry messaging.system, messaging.operation.name op, the
// operation type typ (none when typ is the zero KeyValue: a commit is
// not one of the conventions' operation types) and the attribute
// more(dest) gives (the destination or consumer group).
func (t *Tracer) Shape(op string, typ attribute.KeyValue, dest string, more func(string) attribute.KeyValue) *Shape {
	k := shapeKey{op, dest}
	if v, ok := t.shapes.m.Load(k); ok {
		return v.(*Shape)
	}
	kvs := []attribute.KeyValue{System, Operation(op), typ, more(dest)}
	if typ.Key == "" {
		kvs = append(kvs[:2], kvs[3])
	}
	sh := &Shape{Name: op + " " + dest, Attrs: trace.WithAttributes(kvs...), kvs: kvs}
	if t.shapes.n.Load() >= maxShapes {
		return sh
	}
	if v, loaded := t.shapes.m.LoadOrStore(k, sh); loaded {
		return v.(*Shape)
	}
	t.shapes.n.Add(1)
	return sh
}

// The commit span's name is "commit" alone, since a group holds
// publishes to any topics; its attributes are System, Operation("commit")
// and the group's count, one attribute option (Shape.With).

// GroupCommitted records the commit span of one group commit
// (engine.Options.GroupCommitted): INTERNAL, from when the writer took
// the group to its durable answer, linked to the publish spans whose
// messages it made durable (at most MaxLinks; messaging.batch.message_count
// is the group's messages). A group without a traced publish (consumer
// positions, an untraced publish) records nothing.
func (t *Tracer) GroupCommitted(start time.Time, ctxs []context.Context, ops int, err error) {
	var buf [16]trace.Link
	links := buf[:0]
	for _, c := range ctxs {
		if len(links) == MaxLinks {
			break
		}
		// Only mqgate's own spans: a context with just a remote parent
		// (a request's traceparent) is not a traced publish. The publish
		// span may have ended already (its publisher was answered).
		sp, ok := trace.SpanFromContext(c).(sdktrace.ReadOnlySpan)
		if !ok {
			continue
		}
		if sc := sp.SpanContext(); sc.IsSampled() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	if len(links) == 0 {
		return
	}
	_, span := t.tracer.Start(context.Background(), "commit", KindInternal, trace.WithTimestamp(start),
		trace.WithAttributes(System, Operation("commit"), BatchCount(ops)), trace.WithLinks(links...))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
