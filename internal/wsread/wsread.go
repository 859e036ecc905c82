// Package wsread reads whole WebSocket messages into a buffer its caller
// keeps from one message to the next. websocket.Conn.Read makes a new
// buffer for every message, grown from 512 bytes by doubling, and sets up
// a context.AfterFunc for every call: on a stream of small frames that
// was a large part of a reader's CPU and most of its garbage.
//
// The read runs under context.Background(), so nothing is armed per
// message; a reader blocked here ends when the connection closes (a close
// frame, CloseNow, or the peer going away).
package wsread

import (
	"context"
	"errors"
	"io"

	"github.com/coder/websocket"
)

// Message reads the next message into buf[:0], growing it when the
// message does not fit, and returns the message (aliasing the returned
// buffer, valid until the next call that is given it).
func Message(c *websocket.Conn, buf []byte) (websocket.MessageType, []byte, error) {
	typ, rd, err := c.Reader(context.Background())
	if err != nil {
		return 0, buf[:0], err
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return typ, buf, nil
			}
			return typ, buf, err
		}
	}
}
