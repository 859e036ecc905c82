package wsread

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestMessage: messages of every size come whole, each in the buffer the
// last one left (grown only when a message does not fit), with their type;
// the end of the connection is an error.
func TestMessage(t *testing.T) {
	sizes := []int{0, 1, 511, 512, 513, 70_000, 3, 200_000}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for i, n := range sizes {
			typ := websocket.MessageText
			if i%2 == 1 {
				typ = websocket.MessageBinary
			}
			if err := c.Write(r.Context(), typ, bytes.Repeat([]byte{byte('a' + i)}, n)); err != nil {
				return
			}
		}
		c.Close(websocket.StatusNormalClosure, "done")
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(-1)
	buf := make([]byte, 0, 600)
	for i, n := range sizes {
		before := cap(buf)
		typ, got, err := Message(c, buf)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		want := websocket.MessageText
		if i%2 == 1 {
			want = websocket.MessageBinary
		}
		if typ != want || !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + i)}, n)) {
			t.Fatalf("message %d: type %v, %d bytes, want %v of %d", i, typ, len(got), want, n)
		}
		if n <= before && cap(got) != before {
			t.Fatalf("message %d of %d bytes did not reuse a buffer of %d (cap %d)", i, n, before, cap(got))
		}
		buf = got
	}
	if _, _, err := Message(c, buf); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the last message: %v, want the close frame", err)
	}
}
