// Package corkconn gathers the writes made between Cork and Uncork into
// one system call. WebSocket libraries flush every frame; a stream that
// sends one small frame per message (an ack, a confirm) would otherwise
// pay a write syscall per message. The server's streams (api) and the Go
// stream client (apiclient/stream) both write through it.
package corkconn

import (
	"net"
	"sync"
	"time"
)

// keepCap is the largest buffer kept between batches; a bigger one (a
// burst of large frames) is dropped so an idle stream holds little.
const keepCap = 256 << 10

// Conn is a net.Conn whose writes are held while corked.
type Conn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	buf    []byte
}

// New wraps c.
func New(c net.Conn) *Conn { return &Conn{Conn: c} }

// Write holds p while corked, else writes it through.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// Cork starts holding writes.
func (c *Conn) Cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// Uncork writes what was held in one write, by deadline when it is not
// zero, and stops holding.
func (c *Conn) Uncork(deadline time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.buf) == 0 {
		return nil
	}
	if !deadline.IsZero() {
		_ = c.Conn.SetWriteDeadline(deadline)
		defer func() { _ = c.Conn.SetWriteDeadline(time.Time{}) }()
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > keepCap {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}
