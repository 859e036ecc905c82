package stream

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/mqgate/mqgate/apiclient"
)

// gatedConn counts the writes that reach the socket once armed, and
// holds the first of them until released: the frames sent meanwhile
// queue up behind it.
type gatedConn struct {
	net.Conn
	mu      sync.Mutex
	armed   bool
	writes  int
	first   chan struct{} // closed when the first armed write has begun
	release chan struct{}
}

func (g *gatedConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	armed := g.armed
	first := armed && g.writes == 0
	if armed {
		g.writes++
	}
	g.mu.Unlock()
	if first {
		close(g.first)
		<-g.release
	}
	return g.Conn.Write(p)
}

// TestFramesQueuedShareOneWrite: frames sent while the writer is busy
// (acks, each in its own frame here) go out together, in one write to
// the socket, each still its own frame with its own answer. Without the cork, 100 frames were 100
// writes (a system call each).
func TestFramesQueuedShareOneWrite(t *testing.T) {
	p := newPeer(t, map[string]any{"type": "open", "protocol": Protocol, "stream": "s-1", "group": "g",
		"maxOutstandingMessages": 1000, "maxOutstandingBytes": 1 << 20, "invisibleSeconds": 30, "pingSeconds": 30})
	var gc *gatedConn
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		gc = &gatedConn{Conn: c, first: make(chan struct{}), release: make(chan struct{})}
		return gc, nil
	}}
	cl := &Client{BaseURL: p.srv.URL, HTTPClient: &http.Client{Transport: tr}}
	ctx := ctx5(t)
	// Frames of their own (acks would gather into one, ackgather.go).
	c, err := cl.Consume(ctx, "g", ConsumeOptions{OneFramePerAck: true})
	if err != nil {
		t.Fatal(err)
	}
	ws := p.conn()
	gc.mu.Lock()
	gc.armed = true
	gc.mu.Unlock()

	const n = 100
	acks := make([]*Future[[]apiclient.HandleResult], 0, n)
	acks = append(acks, c.AckAsync("h0"))
	<-gc.first // the writer is in its first write; the rest queue behind it
	for i := 1; i < n; i++ {
		acks = append(acks, c.AckAsync("h"+string(rune('a'+i%26))))
	}
	close(gc.release)
	ids := map[any]bool{}
	for range n {
		f := readFrame(t, ws)
		if f["type"] != "ack" {
			t.Fatalf("frame %v", f)
		}
		ids[f["id"]] = true
		writeFrame(t, ws, map[string]any{"type": "results", "id": f["id"], "results": []map[string]any{{"receiptHandle": "h", "status": "ok"}}})
	}
	if len(ids) != n {
		t.Fatalf("%d distinct ids for %d frames", len(ids), n)
	}
	for _, a := range acks {
		if rs, err := a.Wait(ctx); err != nil || len(rs) != 1 || rs[0].Status != "ok" {
			t.Fatalf("ack: %v %v", rs, err)
		}
	}
	gc.mu.Lock()
	writes := gc.writes
	gc.mu.Unlock()
	if writes > 3 {
		t.Fatalf("%d frames took %d writes to the socket: not gathered", n, writes)
	}
	go func() { ws.Read(context.Background()) }()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
