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

// flushAt bounds the bytes held while corked: a write that would take the
// buffer past it first writes the held bytes through. A batch of a
// thousand 1 KiB frames thus costs four system calls and a buffer that
// never grows past flushAt, instead of a buffer regrown from nothing to
// 1 MiB on every batch (that regrowth was a fifth of the Go client's CPU
// on a publish stream).
const flushAt = 256 << 10

// Conn is a net.Conn whose writes are held while corked.
type Conn struct {
	net.Conn
	mu       sync.Mutex
	corked   bool
	deadline time.Time // of the writes made through while corked
	buf      []byte
}

// New wraps c.
func New(c net.Conn) *Conn { return &Conn{Conn: c} }

// Write holds p while corked, else writes it through.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked {
		return c.Conn.Write(p)
	}
	if len(c.buf) > 0 && len(c.buf)+len(p) > flushAt {
		if err := c.flushLocked(c.deadline); err != nil {
			return 0, err
		}
	}
	if len(p) >= flushAt {
		if err := c.writeLocked(p, c.deadline); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if need := len(c.buf) + len(p); need > cap(c.buf) {
		// grow by doubling, never past flushAt (need is within it here)
		nb := make([]byte, len(c.buf), min(max(2*cap(c.buf), need), flushAt))
		copy(nb, c.buf)
		c.buf = nb
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// Cork starts holding writes. The held bytes are written by Uncork, or
// earlier once they reach flushAt; those writes end by deadline unless
// it is zero.
func (c *Conn) Cork(deadline time.Time) {
	c.mu.Lock()
	c.corked, c.deadline = true, deadline
	c.mu.Unlock()
}

// Uncork writes what is still held in one write and stops holding.
func (c *Conn) Uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked(c.deadline)
}

func (c *Conn) flushLocked(deadline time.Time) error {
	if len(c.buf) == 0 {
		return nil
	}
	err := c.writeLocked(c.buf, deadline)
	c.buf = c.buf[:0]
	return err
}

func (c *Conn) writeLocked(p []byte, deadline time.Time) error {
	if !deadline.IsZero() {
		_ = c.Conn.SetWriteDeadline(deadline)
		defer func() { _ = c.Conn.SetWriteDeadline(time.Time{}) }()
	}
	_, err := c.Conn.Write(p)
	return err
}
