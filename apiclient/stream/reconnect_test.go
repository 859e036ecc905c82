package stream

import (
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestReconnectUntilAFinalClose: with Reconnect, a stream closed 1001
// (the server going away) is followed by a new one, with the limits in
// force and the deliveries flowing again; a close no new stream would
// escape (4000, the group deleted) ends the Consumer.
func TestReconnectUntilAFinalClose(t *testing.T) {
	p := newPeer(t, map[string]any{"type": "open", "protocol": Protocol, "stream": "s-1", "group": "g",
		"maxOutstandingMessages": 7, "maxOutstandingBytes": 1 << 20, "invisibleSeconds": 30, "pingSeconds": 30})
	cl := &Client{BaseURL: p.srv.URL}
	ctx := ctx5(t)
	c, err := cl.Consume(ctx, "g", ConsumeOptions{Reconnect: &Reconnect{MinDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	<-p.header
	ws1 := p.conn()
	if err := ws1.Close(websocket.StatusGoingAway, "server shutting down"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.header:
	case <-ctx.Done():
		t.Fatal("no new stream after 1001")
	}
	ws2 := p.conn()
	writeFrame(t, ws2, map[string]any{"type": "messages", "messages": []map[string]any{{"messageId": "m1", "receiptHandle": "h1", "topic": "t"}}})
	m, err := c.Receive(ctx)
	if err != nil || m.MessageId != "m1" || c.Reconnects() != 1 {
		t.Fatalf("after the reconnect: %+v %v (reconnects %d)", m, err, c.Reconnects())
	}
	if err := ws2.Close(websocket.StatusCode(4000), "the group was deleted"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the Consumer went on after 4000")
	}
	var ce *ClosedError
	if !errors.As(c.Err(), &ce) || ce.Code != 4000 {
		t.Fatalf("Err = %v, want the 4000 close", c.Err())
	}
	if _, err := c.Receive(ctx); !errors.As(err, &ce) {
		t.Fatalf("Receive after the end: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close after the end: %v", err)
	}
}
