package e2e

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Traces end to end (issue 25): the real binary exporting over OTLP/HTTP
// to an in-test receiver, which decodes the protobuf requests with the
// OTLP definitions (go.opentelemetry.io/proto/otlp).

// otlpSink is an OTLP/HTTP trace receiver on loopback.
type otlpSink struct {
	srv   *httptest.Server
	mu    sync.Mutex
	cond  *sync.Cond
	spans []*tracepb.Span
	bad   string // the first request that did not decode
}

func newOTLPSink(t *testing.T) *otlpSink {
	k := &otlpSink{}
	k.cond = sync.NewCond(&k.mu)
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		err := proto.Unmarshal(body, &req)
		k.mu.Lock()
		switch {
		case r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf":
			k.bad = r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type")
		case err != nil:
			k.bad = err.Error()
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				k.spans = append(k.spans, ss.Spans...)
			}
		}
		k.cond.Broadcast()
		k.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(k.srv.Close)
	return k
}

// wait returns the spans named name once there are n of them (or fails
// after 15 s).
func (k *otlpSink) wait(t *testing.T, name string, n int) []*tracepb.Span {
	t.Helper()
	timer := time.AfterFunc(15*time.Second, func() {
		k.mu.Lock()
		k.cond.Broadcast()
		k.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(15 * time.Second)
	k.mu.Lock()
	defer k.mu.Unlock()
	for {
		if k.bad != "" {
			t.Fatalf("OTLP receiver got a bad request: %s", k.bad)
		}
		var got []*tracepb.Span
		for _, s := range k.spans {
			if s.Name == name {
				got = append(got, s)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range k.spans {
				names = append(names, s.Name)
			}
			t.Fatalf("want %d span(s) %q; have %v", n, name, names)
		}
		k.cond.Wait()
	}
}

// waitMatch returns the first span named name for which ok holds (or
// fails after 15 s, saying what it waited for as what).
func (k *otlpSink) waitMatch(t *testing.T, name, what string, ok func(*tracepb.Span) bool) *tracepb.Span {
	t.Helper()
	timer := time.AfterFunc(15*time.Second, func() {
		k.mu.Lock()
		k.cond.Broadcast()
		k.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(15 * time.Second)
	k.mu.Lock()
	defer k.mu.Unlock()
	for {
		if k.bad != "" {
			t.Fatalf("OTLP receiver got a bad request: %s", k.bad)
		}
		for _, s := range k.spans {
			if s.Name == name && ok(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %q %s within 15 s", name, what)
		}
		k.cond.Wait()
	}
}

// linksTo reports whether s links to the span named by traceparent tp.
func linksTo(s *tracepb.Span, tp string) bool {
	tr, sp := ids(tp)
	for _, l := range s.Links {
		if hex.EncodeToString(l.TraceId) == tr && hex.EncodeToString(l.SpanId) == sp {
			return true
		}
	}
	return false
}

// childOf reports whether s is a child of the span named by tp.
func childOf(s *tracepb.Span, tp string) bool {
	tr, sp := ids(tp)
	return hex.EncodeToString(s.TraceId) == tr && hex.EncodeToString(s.ParentSpanId) == sp
}

// wantCommit checks the durable commit of the publish span pub: on the
// embedded store one "commit" span per group commit, linked to the
// publishes it made durable; on JetStream a "commit <topic>" child of
// the publish (the wait for its publish acks).
func wantCommit(t *testing.T, sink *otlpSink, js bool, topic string, pub *tracepb.Span) {
	t.Helper()
	tp := spanTraceparent(pub)
	if js {
		c := sink.waitMatch(t, "commit "+topic, "child of "+tp, func(s *tracepb.Span) bool { return childOf(s, tp) })
		wantKind(t, c, tracepb.Span_SPAN_KIND_INTERNAL)
		return
	}
	c := sink.waitMatch(t, "commit", "linked to "+tp, func(s *tracepb.Span) bool { return linksTo(s, tp) })
	wantKind(t, c, tracepb.Span_SPAN_KIND_INTERNAL)
	if len(c.ParentSpanId) != 0 {
		t.Errorf("group commit span has parent %x; want none (it links to its publishes)", c.ParentSpanId)
	}
	wantAttrs(t, c, map[string]any{"messaging.system": "mqgate", "messaging.operation.name": "commit"})
	if spanAttr(c, "messaging.batch.message_count").GetIntValue() < 1 {
		t.Errorf("commit span: messaging.batch.message_count %v", spanAttr(c, "messaging.batch.message_count"))
	}
}

func spanAttr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

// wantAttrs checks string (and int) attributes of s.
func wantAttrs(t *testing.T, s *tracepb.Span, kv map[string]any) {
	t.Helper()
	for k, v := range kv {
		got := spanAttr(s, k)
		switch v := v.(type) {
		case string:
			if got.GetStringValue() != v {
				t.Errorf("span %q: %s = %v, want %q", s.Name, k, got, v)
			}
		case int:
			if got.GetIntValue() != int64(v) {
				t.Errorf("span %q: %s = %v, want %d", s.Name, k, got, v)
			}
		}
	}
}

func wantKind(t *testing.T, s *tracepb.Span, k tracepb.Span_SpanKind) {
	t.Helper()
	if s.Kind != k {
		t.Errorf("span %q: kind %v, want %v", s.Name, s.Kind, k)
	}
}

// traceparent of a span as W3C writes it (sampled).
func spanTraceparent(s *tracepb.Span) string {
	return "00-" + hex.EncodeToString(s.TraceId) + "-" + hex.EncodeToString(s.SpanId) + "-01"
}

func ids(tp string) (trace, span string) {
	p := strings.Split(tp, "-")
	return p[1], p[2]
}

// wantParent checks that s is a child of the span named by traceparent tp.
func wantParent(t *testing.T, s *tracepb.Span, tp string) {
	t.Helper()
	tr, sp := ids(tp)
	if hex.EncodeToString(s.TraceId) != tr || hex.EncodeToString(s.ParentSpanId) != sp {
		t.Errorf("span %q: trace %x parent %x, want trace %s parent %s", s.Name, s.TraceId, s.ParentSpanId, tr, sp)
	}
}

// wantLink checks that s links to the span named by tp.
func wantLink(t *testing.T, s *tracepb.Span, tp string) {
	t.Helper()
	tr, sp := ids(tp)
	for _, l := range s.Links {
		if hex.EncodeToString(l.TraceId) == tr && hex.EncodeToString(l.SpanId) == sp {
			return
		}
	}
	t.Errorf("span %q: no link to %s (links %v)", s.Name, tp, s.Links)
}

type tracedMsg struct {
	MessageID     string            `json:"messageId"`
	Body          string            `json:"body"`
	Properties    map[string]string `json:"properties"`
	TraceParent   string            `json:"traceparent"`
	TraceState    string            `json:"tracestate"`
	ReceiptHandle string            `json:"receiptHandle"`
}

func receiveTraced(t *testing.T, s *server, group string, hdr ...string) tracedMsg {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/receive", map[string]any{"waitSeconds": 10}, hdr...)
	want(t, r, http.StatusOK)
	var out struct {
		Messages []tracedMsg `json:"messages"`
	}
	r.JSON(t, &out)
	if len(out.Messages) != 1 {
		t.Fatalf("receive %s: %d messages, want 1: %s", group, len(out.Messages), r.Body)
	}
	return out.Messages[0]
}

// hookHeaders is a webhook receiver that records the trace headers and
// body of each request.
type hookHeaders struct {
	srv  *httptest.Server
	reqs chan http.Header
}

func newHookHeaders(t *testing.T) *hookHeaders {
	h := &hookHeaders{reqs: make(chan http.Header, 16)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h.reqs <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookHeaders) next(t *testing.T) http.Header {
	t.Helper()
	select {
	case hd := <-h.reqs:
		return hd
	case <-time.After(15 * time.Second):
		t.Fatal("no webhook request within 15 s")
		return nil
	}
}

const (
	producerTP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	consumerTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	pushTP     = "00-5b8aa5a2d2c872e8321cf37308d69df2-051581bf3cb55c13-01"
)

// TestTraces: with OTEL_EXPORTER_OTLP_ENDPOINT set, a publish carrying a
// traceparent is traced through receive and ack, and through a webhook
// push, with the spans, kinds, parents, links and messaging attributes
// the conventions ask for.
func TestTraces(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { traceScenario(t, false) })
	// JetStream: the same spans (the api layer and the webhook pusher make
	// them), the context carried in NATS headers; no dlq span yet.
	t.Run("jetstream", func(t *testing.T) { traceScenario(t, true) })
}

func traceScenario(t *testing.T, js bool) {
	sink := newOTLPSink(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // ms: spans arrive at once
	var flags []string
	if js {
		flags = jsFlags(t, natsCluster(t, 1), filepath.Join(t.TempDir(), "handle.key"))
	}
	t.Setenv("MQGATE_WEBHOOK_ALLOW_LOOPBACK", "true")
	t.Setenv("MQGATE_DELAY_LEVELS", shortDelayLevels)
	s := startServer(t, t.TempDir(), flags...)
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 2}), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/topics/events", map[string]any{"queues": 1}), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/groups/billing", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}), http.StatusCreated)

	// Publish → receive → ack.
	r := s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "o1"},
		"traceparent", producerTP, "tracestate", "vendor=v1")
	want(t, r, http.StatusCreated)
	var pub struct {
		MessageID string `json:"messageId"`
	}
	r.JSON(t, &pub)
	m := receiveTraced(t, s, "billing", "traceparent", consumerTP)
	want(t, s.do(t, "POST", "/v1/groups/billing/ack", map[string]any{"receiptHandles": []string{m.ReceiptHandle}},
		"traceparent", consumerTP), http.StatusOK)

	publish := sink.wait(t, "publish orders", 1)[0]
	wantKind(t, publish, tracepb.Span_SPAN_KIND_SERVER)
	wantParent(t, publish, producerTP)
	wantAttrs(t, publish, map[string]any{"messaging.system": "mqgate", "messaging.destination.name": "orders",
		"messaging.operation.type": "send", "messaging.operation.name": "publish"})
	if publish.TraceState != "vendor=v1" {
		t.Errorf("publish span tracestate %q, want the producer's vendor=v1", publish.TraceState)
	}
	// The message's creation context is the publish span.
	if m.TraceParent != spanTraceparent(publish) || m.TraceState != "vendor=v1" {
		t.Errorf("received traceparent %q tracestate %q; want the publish span's %q, vendor=v1", m.TraceParent, m.TraceState, spanTraceparent(publish))
	}
	wantCommit(t, sink, js, "orders", publish)

	recv := sink.wait(t, "receive billing", 1)[0]
	wantKind(t, recv, tracepb.Span_SPAN_KIND_CONSUMER)
	wantParent(t, recv, consumerTP)
	wantLink(t, recv, spanTraceparent(publish))
	wantAttrs(t, recv, map[string]any{"messaging.system": "mqgate", "messaging.consumer.group.name": "billing",
		"messaging.operation.type": "receive", "messaging.destination.name": "orders", "messaging.message.id": pub.MessageID})

	ackSpan := sink.wait(t, "ack billing", 1)[0]
	wantKind(t, ackSpan, tracepb.Span_SPAN_KIND_SERVER)
	wantParent(t, ackSpan, consumerTP)
	wantAttrs(t, ackSpan, map[string]any{"messaging.operation.type": "settle", "messaging.consumer.group.name": "billing",
		"mqgate.outcome": "ack", "mqgate.settled": 1})

	// Publish → webhook push: the receiver sees a traceparent header, the
	// push span's, which continues the producer's trace.
	hook := newHookHeaders(t)
	putPushGroup(t, s, "hooks", "events", map[string]any{"url": hook.srv.URL, "secret": hookSecret}, nil)
	r = s.do(t, "POST", "/v1/topics/events/messages/batch", map[string]any{"messages": []map[string]any{
		{"body": "e1", "traceparent": pushTP}}})
	want(t, r, http.StatusCreated)
	hd := hook.next(t)
	if hd.Get("webhook-signature") == "" {
		t.Error("push without its signature header")
	}
	push := sink.wait(t, "push hooks", 1)[0]
	if got := hd.Get("traceparent"); got != spanTraceparent(push) {
		t.Errorf("webhook traceparent header %q, want the push span's %q", got, spanTraceparent(push))
	}
	wantKind(t, push, tracepb.Span_SPAN_KIND_CONSUMER)
	wantParent(t, push, pushTP) // a batch entry's own context is its creation context
	wantLink(t, push, pushTP)
	wantAttrs(t, push, map[string]any{"messaging.system": "mqgate", "messaging.consumer.group.name": "hooks",
		"messaging.operation.type": "process", "messaging.destination.name": "events", "mqgate.outcome": "ack"})
	batch := sink.wait(t, "publish events", 1)[0]
	wantLink(t, batch, pushTP)
	wantAttrs(t, batch, map[string]any{"messaging.batch.message_count": 1, "messaging.operation.type": "send"})

	// An ack without a trace context records no span (nothing would link
	// to it); checked once the later nack span has arrived.
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "o3"}), http.StatusCreated)
	m = receiveTraced(t, s, "billing")
	want(t, s.do(t, "POST", "/v1/groups/billing/ack", map[string]any{"receiptHandles": []string{m.ReceiptHandle}}), http.StatusOK)

	// A nack to the dead-letter topic: a settle span with outcome dlq.
	r = s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "o2"}, "traceparent", producerTP)
	want(t, r, http.StatusCreated)
	m = receiveTraced(t, s, "billing")
	want(t, s.do(t, "POST", "/v1/groups/billing/nack", map[string]any{"receiptHandles": []string{m.ReceiptHandle}, "delayLevel": -1},
		"traceparent", consumerTP), http.StatusOK)
	nack := sink.wait(t, "nack billing", 1)[0]
	wantParent(t, nack, consumerTP)
	if acks := sink.wait(t, "ack billing", 1); len(acks) != 1 {
		t.Errorf("%d ack spans, want 1: the ack without a traceparent recorded one", len(acks))
	}
	wantKind(t, nack, tracepb.Span_SPAN_KIND_SERVER)
	wantAttrs(t, nack, map[string]any{"mqgate.outcome": "dlq", "messaging.operation.type": "settle", "mqgate.settled": 1})
	// The dead letter keeps the message's context.
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		r := s.do(t, "GET", "/v1/groups/billing/dlq", nil)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"traceparent":"`+m.TraceParent+`"`) {
			return fmt.Errorf("the DLQ listing lacks the dead letter's traceparent %s: %d %s", m.TraceParent, r.Status, r.Body)
		}
		return nil
	})
	traceStreams(t, s, sink, js)
	if js {
		return
	}
	dlq := sink.wait(t, "dlq billing", 1)[0]
	wantKind(t, dlq, tracepb.Span_SPAN_KIND_INTERNAL)
	wantAttrs(t, dlq, map[string]any{"mqgate.outcome": "dlq", "messaging.operation.type": "settle"})
	wantLink(t, dlq, m.TraceParent)
	if t.Failed() {
		t.Logf("dlq span: %v; received %+v", dlq, m)
	}
}

// TestTraceContextPassThrough: with tracing off (no OTEL_* variable) the
// context a producer sends is stored and handed on exactly: on receive,
// in the webhook body and as the webhook's header. It is a system
// property: a user property of the same name is the user's own.
func TestTraceContextPassThrough(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { passThrough(t, false) })
	t.Run("jetstream", func(t *testing.T) { passThrough(t, true) })
}

func passThrough(t *testing.T, js bool) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(v, "")
	}
	var flags []string
	if js {
		flags = jsFlags(t, natsCluster(t, 1), filepath.Join(t.TempDir(), "handle.key"))
	}
	t.Setenv("MQGATE_WEBHOOK_ALLOW_LOOPBACK", "true")
	s := startServer(t, t.TempDir(), flags...)
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 1}), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/topics/events", map[string]any{"queues": 1}), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/groups/billing", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}), http.StatusCreated)

	// Bad input changes nothing.
	wantProblem(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": []map[string]any{
		{"body": "x", "traceparent": "00-00000000000000000000000000000000-b7ad6b7169203331-01"}}}), http.StatusBadRequest, "messages[0].traceparent")
	wantProblem(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": []map[string]any{
		{"body": "x", "tracestate": "a=b"}}}), http.StatusBadRequest, "messages[0].tracestate")
	wantProblem(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "x", "traceparent": producerTP},
		"traceparent", consumerTP), http.StatusBadRequest, "traceparent")
	// A malformed header is ignored (W3C): the message has no context.
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "plain"}, "traceparent", "garbage"), http.StatusCreated)
	if m := receiveTraced(t, s, "billing"); m.Body != "plain" || m.TraceParent != "" {
		t.Fatalf("got %+v, want the message plain without traceparent", m)
	}

	want(t, s.do(t, "POST", "/v1/topics/orders/messages",
		map[string]any{"body": "o1", "properties": map[string]string{"TRACEPARENT": "mine", "traceparent": "mine too"}},
		"traceparent", producerTP, "tracestate", "vendor=v1"), http.StatusCreated)
	m := receiveTraced(t, s, "billing")
	if m.TraceParent != producerTP || m.TraceState != "vendor=v1" {
		t.Errorf("received traceparent %q tracestate %q, want %q vendor=v1", m.TraceParent, m.TraceState, producerTP)
	}
	if len(m.Properties) != 2 || m.Properties["TRACEPARENT"] != "mine" || m.Properties["traceparent"] != "mine too" {
		t.Errorf("user properties %v, want exactly the two given", m.Properties)
	}

	hook := newHookHeaders(t)
	putPushGroup(t, s, "hooks", "events", map[string]any{"url": hook.srv.URL, "secret": hookSecret}, nil)
	want(t, s.do(t, "POST", "/v1/topics/events/messages", map[string]any{"body": "e1"}, "traceparent", pushTP), http.StatusCreated)
	if hd := hook.next(t); hd.Get("traceparent") != pushTP || hd.Get("webhook-signature") == "" {
		t.Errorf("webhook headers traceparent %q signature %q, want %q and a signature", hd.Get("traceparent"), hd.Get("webhook-signature"), pushTP)
	}
}

const (
	streamTP  = "00-6e0c63257de34c926f9efcd03899c7f1-2e41a6b71b2c4d02-01" // the publish stream's upgrade
	streamMsg = "00-7a085853722dc6d2c1e6f5b1dc8e6a3f-3f5bd0e1a2c4d6e8-01" // a message's own context
	streamCon = "00-8b196964833ed7e3d2f7a6c2ed9f7b40-4a6ce1f2b3d5e7f9-01" // the consume stream's upgrade
)

// traceStreams: a publish stream's frames are publish spans as REST
// publishes are (a single message's a child of its context, a batch's a
// child of the stream's upgrade context, linked to its entries), durably
// committed; a consume stream's deliveries are receive spans and its ack
// and nack frames settle spans, in the consumer's trace (the upgrade's
// traceparent), linked to each message's creation context.
func traceStreams(t *testing.T, s *server, sink *otlpSink, js bool) {
	want(t, s.do(t, "PUT", "/v1/topics/streamed", map[string]any{"queues": 1}), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/groups/streamers", map[string]any{
		"subscriptions": []map[string]any{{"topic": "streamed"}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}), http.StatusCreated)

	pw := dialStream(t, s, "/v1/topics/streamed/stream", "traceparent", streamTP)
	pw.send(map[string]any{"type": "publish", "id": "one", "message": map[string]any{"body": "s1", "traceparent": streamMsg}})
	if f, _ := pw.readType("confirm", "one", 10*time.Second); len(f.results()) != 1 {
		t.Fatalf("confirm %v", f)
	}
	pw.send(map[string]any{"type": "publish", "id": "two", "messages": []map[string]any{
		{"body": "s2", "traceparent": streamMsg}, {"body": "s3"}}})
	if f, _ := pw.readType("confirm", "two", 10*time.Second); len(f.results()) != 2 {
		t.Fatalf("confirm %v", f)
	}
	single := sink.waitMatch(t, "publish streamed", "child of the frame's "+streamMsg,
		func(s *tracepb.Span) bool { return childOf(s, streamMsg) })
	wantKind(t, single, tracepb.Span_SPAN_KIND_SERVER)
	wantAttrs(t, single, map[string]any{"messaging.system": "mqgate", "messaging.destination.name": "streamed",
		"messaging.operation.type": "send", "messaging.operation.name": "publish"})
	batch := sink.waitMatch(t, "publish streamed", "child of the stream's "+streamTP,
		func(s *tracepb.Span) bool { return childOf(s, streamTP) })
	wantKind(t, batch, tracepb.Span_SPAN_KIND_SERVER)
	wantLink(t, batch, streamMsg)
	wantAttrs(t, batch, map[string]any{"messaging.batch.message_count": 2, "messaging.operation.type": "send"})
	wantCommit(t, sink, js, "streamed", single)
	wantCommit(t, sink, js, "streamed", batch)

	// Each delivered message carries its creation context: the single
	// frame's publish span, the entry's own, the batch's publish span.
	cw := dialStream(t, s, "/v1/groups/streamers/stream", "traceparent", streamCon)
	got, _ := cw.collect(3, 20*time.Second)
	ctxOf := map[string]string{}
	for _, m := range got {
		ctxOf[m["body"].(string)], _ = m["traceparent"].(string)
	}
	wantCtx := map[string]string{"s1": spanTraceparent(single), "s2": streamMsg, "s3": spanTraceparent(batch)}
	for body, tp := range wantCtx {
		if ctxOf[body] != tp {
			t.Errorf("delivered %s with traceparent %q, want %q", body, ctxOf[body], tp)
		}
		sink.waitMatch(t, "receive streamers", "linked to "+tp+" in the consumer's trace", func(s *tracepb.Span) bool {
			return linksTo(s, tp) && childOf(s, streamCon)
		})
	}
	recv := sink.waitMatch(t, "receive streamers", "of the consume stream", func(s *tracepb.Span) bool { return childOf(s, streamCon) })
	wantKind(t, recv, tracepb.Span_SPAN_KIND_CONSUMER)
	wantAttrs(t, recv, map[string]any{"messaging.system": "mqgate", "messaging.consumer.group.name": "streamers",
		"messaging.operation.type": "receive", "messaging.destination.name": "streamed"})

	hs := streamHandles(got)
	cw.send(map[string]any{"type": "ack", "id": "a", "receiptHandles": hs[:2]})
	cw.readType("results", "a", 10*time.Second)
	cw.send(map[string]any{"type": "nack", "id": "n", "receiptHandles": hs[2:], "delayLevel": 1})
	cw.readType("results", "n", 10*time.Second)
	ack := sink.waitMatch(t, "ack streamers", "child of "+streamCon, func(s *tracepb.Span) bool { return childOf(s, streamCon) })
	wantKind(t, ack, tracepb.Span_SPAN_KIND_SERVER)
	wantAttrs(t, ack, map[string]any{"messaging.operation.type": "settle", "messaging.consumer.group.name": "streamers",
		"mqgate.outcome": "ack", "mqgate.settled": 2, "messaging.batch.message_count": 2})
	nack := sink.waitMatch(t, "nack streamers", "child of "+streamCon, func(s *tracepb.Span) bool { return childOf(s, streamCon) })
	wantKind(t, nack, tracepb.Span_SPAN_KIND_SERVER)
	wantAttrs(t, nack, map[string]any{"messaging.operation.type": "settle", "mqgate.outcome": "nack", "mqgate.settled": 1})
}
