package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A small mqgate.v1 client for the stream tests (issue 22): it speaks the
// protocol of docs/streaming.md over github.com/coder/websocket, the
// library the server uses, and reads frames as generic JSON so a test
// sees exactly what the server sent.

type wsConn struct {
	t      testing.TB
	c      *websocket.Conn
	open   map[string]any
	frames chan frame // read by a goroutine: the library closes a connection whose read context ends
	err    error      // why frames closed
}

// frame is one decoded frame.
type frame map[string]any

func (f frame) typ() string { s, _ := f["type"].(string); return s }
func (f frame) id() string  { s, _ := f["id"].(string); return s }

// dialStream opens path (with its query) on s and reads the open frame.
// hdr is extra header name, value pairs.
func dialStream(t testing.TB, s *server, path string, hdr ...string) *wsConn {
	t.Helper()
	c, resp, err := tryDialStream(s, path, hdr...)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", path, err, status)
	}
	w := &wsConn{t: t, c: c, frames: make(chan frame, 4096)}
	t.Cleanup(func() { _ = c.CloseNow() })
	go func() {
		defer close(w.frames)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				w.err = err
				return
			}
			var f frame
			if err := json.Unmarshal(b, &f); err != nil {
				w.err = err
				return
			}
			w.frames <- f
		}
	}()
	f := w.read(10 * time.Second)
	if f.typ() != "open" {
		t.Fatalf("first frame %v, want open", f)
	}
	w.open = f
	return w
}

func tryDialStream(s *server, path string, hdr ...string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	protos := []string{"mqgate.v1"}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Sec-WebSocket-Protocol" {
			protos = append(protos, hdr[i+1]) // the library sets the header from Subprotocols
			continue
		}
		h.Add(hdr[i], hdr[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws://"+s.addr+path, &websocket.DialOptions{
		Subprotocols: protos, HTTPHeader: h,
	})
	if err == nil {
		c.SetReadLimit(64 << 20)
	}
	return c, resp, err
}

func (w *wsConn) send(v any) {
	w.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		w.t.Fatal(err)
	}
	w.sendRaw(string(b))
}

func (w *wsConn) sendRaw(s string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// read returns the next frame, failing the test after within.
func (w *wsConn) read(within time.Duration) frame {
	w.t.Helper()
	f, err := w.tryRead(within)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return f
}

func (w *wsConn) tryRead(within time.Duration) (frame, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case f, ok := <-w.frames:
		if !ok {
			return nil, w.err
		}
		return f, nil
	case <-t.C:
		return nil, errors.New("no frame within " + within.String())
	}
}

// readType reads until a frame of type typ (and id, when not "") comes,
// returning it and the frames of other types read on the way.
func (w *wsConn) readType(typ, id string, within time.Duration) (frame, []frame) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	var skipped []frame
	for {
		left := time.Until(deadline)
		if left <= 0 {
			w.t.Fatalf("no %s frame %q within %v; got %v", typ, id, within, skipped)
		}
		f := w.read(left)
		if f.typ() == typ && (id == "" || f.id() == id) {
			return f, skipped
		}
		skipped = append(skipped, f)
	}
}

// deliveries returns the messages of a messages frame.
func (f frame) deliveries() []map[string]any {
	ms, _ := f["messages"].([]any)
	out := make([]map[string]any, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.(map[string]any))
	}
	return out
}

// results returns a results or confirm frame's results.
func (f frame) results() []map[string]any {
	rs, _ := f["results"].([]any)
	out := make([]map[string]any, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.(map[string]any))
	}
	return out
}

// problemType is an error frame's problem type.
func (f frame) problemType() string {
	p, _ := f["problem"].(map[string]any)
	s, _ := p["type"].(string)
	return s
}

// collect reads messages frames until n deliveries came, answering
// nothing; other frames are returned apart.
func (w *wsConn) collect(n int, within time.Duration) ([]map[string]any, []frame) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	var got []map[string]any
	var other []frame
	for len(got) < n {
		left := time.Until(deadline)
		if left <= 0 {
			w.t.Fatalf("%d of %d deliveries within %v (other frames: %v)", len(got), n, within, other)
		}
		f := w.read(left)
		if f.typ() == "messages" {
			got = append(got, f.deliveries()...)
		} else {
			other = append(other, f)
		}
	}
	return got, other
}

func streamHandles(ms []map[string]any) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m["receiptHandle"].(string)
	}
	return out
}

func streamPublishN(t testing.TB, s *server, topic string, n int, body func(i int) map[string]any) {
	t.Helper()
	for i := 0; i < n; i += 100 {
		var batch []map[string]any
		for j := i; j < min(n, i+100); j++ {
			batch = append(batch, body(j))
		}
		want(t, s.do(t, "POST", "/v1/topics/"+topic+"/messages/batch", map[string]any{"messages": batch}), http.StatusCreated)
	}
}

// closeStatus waits for the stream to end and returns its close code and
// reason (-1 when it ended without a close frame).
func (w *wsConn) closeStatus(within time.Duration) (websocket.StatusCode, string) {
	w.t.Helper()
	t := time.NewTimer(within)
	defer t.Stop()
	for {
		select {
		case _, ok := <-w.frames:
			if ok {
				continue
			}
			var ce websocket.CloseError
			if errors.As(w.err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, w.err.Error()
		case <-t.C:
			w.t.Fatalf("stream still open after %v", within)
		}
	}
}

func b64urlNoPad(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
