package stream

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/mqgate/mqgate/internal/corkconn"
)

// A stream's frames are written by one writer goroutine per stream
// (conn.writer), a batch at a time. coder/websocket flushes every
// message to the socket as it is written, so a consumer acking one
// message per frame paid a write system call per ack; the writer corks
// the connection while it writes a batch and sends the batch in one
// write, as the server does for its frames (api/stream.go).
//
// The socket is reached through the upgrade's own transport: a clone of
// the Client's *http.Transport whose dialer wraps each connection in a
// corkconn.Conn and hands it to the dial that asked for it (a context value).
// Keep-alives are off on that transport, so a connection it dials serves
// only the upgrade that dialed it. With any other RoundTripper the
// frames are still batched by the writer, only not into one write.

// corkSlot receives the corkconn.Conn dialed for one upgrade.
type corkSlot struct {
	mu sync.Mutex
	c  *corkconn.Conn
}

func (s *corkSlot) set(c *corkconn.Conn) {
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

func (s *corkSlot) get() *corkconn.Conn {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

type corkSlotKey struct{}

// upgradeClient returns the http.Client the upgrades go through (made
// once per Client): the Client's HTTPClient with its transport cloned
// to dial corkconn.Conns, or the HTTPClient itself when its transport is not
// an *http.Transport or dials TLS itself.
func (c *Client) upgradeClient() *http.Client {
	c.once.Do(func() {
		hc := c.HTTPClient
		if hc == nil {
			hc = http.DefaultClient
		}
		c.upgrade = hc
		var tr *http.Transport
		switch t := hc.Transport.(type) {
		case nil:
			tr, _ = http.DefaultTransport.(*http.Transport)
		case *http.Transport:
			tr = t
		}
		if tr == nil || tr.DialTLSContext != nil || tr.DialTLS != nil || tr.Dial != nil {
			return
		}
		tr = tr.Clone()
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			cc := corkconn.New(nc)
			if slot, ok := ctx.Value(corkSlotKey{}).(*corkSlot); ok {
				slot.set(cc)
			}
			return cc, nil
		}
		tr.DisableKeepAlives = true
		up := *hc
		up.Transport = tr
		c.upgrade = &up
	})
	return c.upgrade
}
