package stream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mqgate/mqgate/apiclient"
)

// These tests pin the client's side of the protocol (ids, out-of-order
// answers, the flow window, how a stream's end reaches pending calls)
// against a scripted peer; the e2e tests (e2e/stream_client_test.go) run
// the same client against the real server.

// peer is a scripted server: each test drives it frame by frame.
type peer struct {
	t      *testing.T
	srv    *httptest.Server
	conns  chan *websocket.Conn
	header chan http.Header
}

func newPeer(t *testing.T, open map[string]any) *peer {
	p := &peer{t: t, conns: make(chan *websocket.Conn, 1), header: make(chan http.Header, 1)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.header <- r.Header.Clone()
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Protocol}})
		if err != nil {
			return
		}
		b, _ := json.Marshal(open)
		if err := ws.Write(context.Background(), websocket.MessageText, b); err != nil {
			return
		}
		p.conns <- ws // the socket is hijacked: it outlives the handler
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *peer) conn() *websocket.Conn {
	select {
	case c := <-p.conns:
		p.t.Cleanup(func() { c.CloseNow() })
		return c
	case <-time.After(5 * time.Second):
		p.t.Fatal("no stream opened")
		return nil
	}
}

func readFrame(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("peer read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("peer got %q: %v", b, err)
	}
	return m
}

func writeFrame(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := c.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatalf("peer write: %v", err)
	}
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestConsumeMatchesAnswersByID(t *testing.T) {
	p := newPeer(t, map[string]any{"type": "open", "protocol": Protocol, "stream": "s-1", "group": "g",
		"maxOutstandingMessages": 64, "maxOutstandingBytes": 1 << 20, "invisibleSeconds": 30, "pingSeconds": 30})
	cl := &Client{BaseURL: p.srv.URL, Key: "k1"}
	ctx := ctx5(t)
	c, err := cl.Consume(ctx, "g", ConsumeOptions{MaxOutstandingMessages: 64})
	if err != nil {
		t.Fatal(err)
	}
	if h := <-p.header; h.Get("Authorization") != "Bearer k1" {
		t.Fatalf("Authorization = %q", h.Get("Authorization"))
	}
	ws := p.conn()
	if got := c.Limits(); got.MaxOutstandingMessages != 64 || c.InvisibleSeconds() != 30 || c.StreamID() != "s-1" {
		t.Fatalf("open not taken in: %+v %d %q", got, c.InvisibleSeconds(), c.StreamID())
	}
	writeFrame(t, ws, map[string]any{"type": "messages", "messages": []map[string]any{
		{"messageId": "m1", "receiptHandle": "h1", "body": "one", "topic": "t"},
		{"messageId": "m2", "receiptHandle": "h2", "body": "two", "topic": "t"},
	}})
	m1, err := c.Receive(ctx)
	if err != nil || m1.ReceiptHandle != "h1" {
		t.Fatalf("first delivery %+v, %v", m1, err)
	}
	m2, _ := c.Receive(ctx)
	a1 := c.AckAsync(m1.ReceiptHandle)
	a2 := c.NackAsync(NackOptions{DelayLevel: 3, Reason: "busy"}, m2.ReceiptHandle)
	f1, f2 := readFrame(t, ws), readFrame(t, ws)
	if f1["type"] != "ack" || f2["type"] != "nack" || f2["delayLevel"] != 3.0 || f2["reason"] != "busy" || f1["id"] == f2["id"] {
		t.Fatalf("frames %v %v", f1, f2)
	}
	// Answered in the other order: each future gets its own.
	writeFrame(t, ws, map[string]any{"type": "results", "id": f2["id"], "results": []map[string]any{{"receiptHandle": "h2", "status": "expired"}}})
	writeFrame(t, ws, map[string]any{"type": "results", "id": f1["id"], "results": []map[string]any{{"receiptHandle": "h1", "status": "ok"}}})
	r1, err1 := a1.Wait(ctx)
	r2, err2 := a2.Wait(ctx)
	if err1 != nil || err2 != nil || r1[0].Status != "ok" || r2[0].Status != "expired" || r2[0].ReceiptHandle != "h2" {
		t.Fatalf("results %+v %v / %+v %v", r1, err1, r2, err2)
	}

	// A flow answer updates the limits; an error frame fails only its own call.
	flowDone := make(chan error, 1)
	go func() {
		l, err := c.Flow(ctx, Limits{MaxOutstandingMessages: 5})
		if err == nil && l.MaxOutstandingMessages != 5 {
			err = errors.New("flow answer not returned")
		}
		flowDone <- err
	}()
	ff := readFrame(t, ws)
	if ff["type"] != "flow" || ff["maxOutstandingMessages"] != 5.0 || ff["maxOutstandingBytes"] != nil {
		t.Fatalf("flow frame %v", ff)
	}
	ext := c.ExtendAsync(120, "h9")
	fe := readFrame(t, ws)
	writeFrame(t, ws, map[string]any{"type": "error", "id": fe["id"], "problem": map[string]any{"type": "urn:mqgate:problem:invalid", "title": "Invalid request", "status": 400, "detail": "bad handle"}})
	writeFrame(t, ws, map[string]any{"type": "flow", "id": ff["id"], "maxOutstandingMessages": 5, "maxOutstandingBytes": 1 << 20})
	if err := <-flowDone; err != nil {
		t.Fatal(err)
	}
	if c.Limits().MaxOutstandingMessages != 5 {
		t.Fatalf("limits %+v", c.Limits())
	}
	_, err = ext.Wait(ctx)
	var pe *ProblemError
	if !errors.As(err, &pe) || pe.Problem.Status != 400 {
		t.Fatalf("extend error %v", err)
	}

	// An empty frame is kept (the answer after it shows the reader has
	// handled it); Close fails what is pending with ErrClosed.
	writeFrame(t, ws, map[string]any{"type": "empty", "empty": map[string]any{"reason": "PAUSED"}})
	after := c.AckAsync("h3")
	fa := readFrame(t, ws)
	writeFrame(t, ws, map[string]any{"type": "results", "id": fa["id"], "results": []map[string]any{{"receiptHandle": "h3", "status": "ok"}}})
	if _, err := after.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Empty() != "PAUSED" {
		t.Fatalf("empty reason %q", c.Empty())
	}
	pending := c.AckAsync("h4")
	readFrame(t, ws)
	go func() { // the peer answers the close handshake
		ws.Read(context.Background())
	}()
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := pending.Wait(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("pending after close: %v", err)
	}
	if _, err := c.Receive(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("receive after close: %v", err)
	}
}

func TestPublishWindowAndConfirmsByID(t *testing.T) {
	p := newPeer(t, map[string]any{"type": "open", "protocol": Protocol, "stream": "s-2", "topic": "t",
		"maxUnconfirmedMessages": 2, "maxUnconfirmedBytes": 1 << 20, "pingSeconds": 30})
	cl := &Client{BaseURL: p.srv.URL}
	ctx := ctx5(t)
	pub, err := cl.PublishStream(ctx, "t", PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-p.header
	ws := p.conn()
	if n, _ := pub.Limits(); n != 2 {
		t.Fatalf("limit %d", n)
	}
	c1, err := pub.Publish(ctx, apiclient.PublishRequest{Body: ptr("a"), DeduplicationId: ptr("r-1")})
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := pub.Publish(ctx, apiclient.PublishRequest{Body: ptr("b")})
	f1, f2 := readFrame(t, ws), readFrame(t, ws)
	msg := f1["message"].(map[string]any)
	if f1["type"] != "publish" || msg["body"] != "a" || msg["deduplicationId"] != "r-1" {
		t.Fatalf("publish frame %v", f1)
	}
	// At the limit: a third publish waits for a confirm.
	third := make(chan *Confirm, 1)
	go func() {
		c, err := pub.Publish(ctx, apiclient.PublishRequest{Body: ptr("c")})
		if err != nil {
			t.Error(err)
		}
		third <- c
	}()
	select {
	case <-third:
		t.Fatal("a third publish went out past maxUnconfirmedMessages 2")
	case <-time.After(100 * time.Millisecond):
	}
	writeFrame(t, ws, map[string]any{"type": "confirm", "id": f2["id"], "results": []map[string]any{{"messageId": "B", "topic": "t", "queueId": 1, "queueOffset": 7}}})
	var c3 *Confirm
	select {
	case c3 = <-third:
	case <-time.After(5 * time.Second):
		t.Fatal("the third publish did not go out after a confirm")
	}
	r2, err := c2.Wait(ctx)
	if err != nil || r2[0].MessageId != "B" || *r2[0].QueueOffset != 7 {
		t.Fatalf("confirm 2: %+v %v", r2, err)
	}
	f3 := readFrame(t, ws)
	writeFrame(t, ws, map[string]any{"type": "error", "id": f3["id"], "problem": map[string]any{"type": "urn:mqgate:problem:invalid", "title": "Invalid request", "status": 400}})
	var pe *ProblemError
	if _, err := c3.Wait(ctx); !errors.As(err, &pe) {
		t.Fatalf("bad message: %v", err)
	}
	// The server ends the stream: the unconfirmed publish says so.
	if err := ws.Close(4000, "topic deleted"); err != nil {
		t.Fatal(err)
	}
	_, err = c1.Wait(ctx)
	var ce *ClosedError
	if !errors.Is(err, ErrNotConfirmed) || !errors.As(err, &ce) || ce.Code != 4000 || ce.Reason != "topic deleted" {
		t.Fatalf("unconfirmed at close: %v", err)
	}
	if _, err := pub.Publish(ctx, apiclient.PublishRequest{Body: ptr("d")}); !errors.As(err, &ce) {
		t.Fatalf("publish on an ended stream: %v", err)
	}
	if err := pub.Close(); err != nil {
		t.Fatalf("close of an ended stream: %v", err)
	}
}

func TestRefusedUpgradeIsAnHTTPError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"type":"urn:mqgate:problem:too-many-streams","title":"Too Many Requests","status":429,"detail":"64 streams open"}`))
	}))
	defer srv.Close()
	_, err := (&Client{BaseURL: srv.URL}).Consume(ctx5(t), "g", ConsumeOptions{})
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 429 || he.RetryAfter != 3*time.Second || he.Problem == nil || *he.Problem.Detail != "64 streams open" {
		t.Fatalf("refused: %#v", err)
	}
}

func ptr[T any](v T) *T { return &v }
