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

func TestCorkedWritesLeaveAsOne(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{Conn: raw}
	c := New(cc)
	c.Cork()
	for _, s := range []string{"ab", "cd", "ef"} {
		if n, err := c.Write([]byte(s)); n != 2 || err != nil {
			t.Fatalf("corked write: %d, %v", n, err)
		}
	}
	if cc.writes != 0 {
		t.Fatalf("%d writes reached the socket while corked", cc.writes)
	}
	if err := c.Uncork(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if cc.writes != 1 {
		t.Fatalf("uncork made %d writes, want 1", cc.writes)
	}
	if err := c.Uncork(time.Time{}); err != nil || cc.writes != 1 {
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
