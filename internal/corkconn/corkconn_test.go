package corkconn

import (
	"io"
	"net"
	"testing"
	"time"
)

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes int
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes++
	return c.Conn.Write(p)
}

// loopbackPeer dials a loopback listener whose one connection is read to
// its end; got receives everything the peer read once raw is closed.
func loopbackPeer(t *testing.T) (raw net.Conn, got <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	read := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			read <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		read <- b
	}()
	raw, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return raw, read
}

func TestCorkedWritesLeaveAsOne(t *testing.T) {
	raw, got := loopbackPeer(t)
	cc := &countingConn{Conn: raw}
	c := New(cc)
	c.Cork(time.Now().Add(5 * time.Second))
	for _, s := range []string{"ab", "cd", "ef"} {
		if n, err := c.Write([]byte(s)); n != 2 || err != nil {
			t.Fatalf("corked write: %d, %v", n, err)
		}
	}
	if cc.writes != 0 {
		t.Fatalf("%d writes reached the socket while corked", cc.writes)
	}
	if err := c.Uncork(); err != nil {
		t.Fatal(err)
	}
	if cc.writes != 1 {
		t.Fatalf("uncork made %d writes, want 1", cc.writes)
	}
	if err := c.Uncork(); err != nil || cc.writes != 1 {
		t.Fatalf("an empty uncork wrote: %d writes, %v", cc.writes, err)
	}
	if _, err := c.Write([]byte("gh")); err != nil || cc.writes != 2 {
		t.Fatalf("an uncorked write is not written through: %d writes, %v", cc.writes, err)
	}
	c.Close()
	if b := <-got; string(b) != "abcdefgh" {
		t.Fatalf("peer read %q", b)
	}
}

// A corked burst bigger than flushAt is written through in pieces of at
// most flushAt, in order, and the held buffer never grows past flushAt.
func TestCorkedBurstIsBounded(t *testing.T) {
	raw, got := loopbackPeer(t)
	cc := &sizingConn{Conn: raw}
	c := New(cc)
	var want []byte
	c.Cork(time.Now().Add(5 * time.Second))
	frame := make([]byte, 1100)
	for i := range 1000 {
		for j := range frame {
			frame[j] = byte(i + j)
		}
		want = append(want, frame...)
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		if cap(c.buf) > flushAt {
			t.Fatalf("held buffer grew to %d bytes (bound %d)", cap(c.buf), flushAt)
		}
	}
	big := make([]byte, 2*flushAt) // one frame past the bound goes through whole
	want = append(want, big...)
	if _, err := c.Write(big); err != nil {
		t.Fatal(err)
	}
	if err := c.Uncork(); err != nil {
		t.Fatal(err)
	}
	for _, n := range cc.sizes {
		if n > flushAt && n != len(big) {
			t.Fatalf("a write of %d bytes (bound %d)", n, flushAt)
		}
	}
	if len(cc.sizes) < len(want)/flushAt || len(cc.sizes) > 2*len(want)/flushAt+2 {
		t.Fatalf("%d writes for %d bytes", len(cc.sizes), len(want))
	}
	c.Close()
	if b := <-got; string(b) != string(want) {
		t.Fatalf("peer read %d bytes, not the %d written in order", len(b), len(want))
	}
}

type sizingConn struct {
	net.Conn
	sizes []int
}

func (c *sizingConn) Write(p []byte) (int, error) {
	c.sizes = append(c.sizes, len(p))
	return c.Conn.Write(p)
}
