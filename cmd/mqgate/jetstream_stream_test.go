package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The WebSocket streams (issue 22) on --backend jetstream: the same
// handlers over the backend's Engine and Service, no code of their own.
// A publish stream's confirms, a consume stream's deliveries, its acks
// answered per handle, and one of its handles acked on REST.
func TestServeJetStreamStreams(t *testing.T) {
	m, _ := startJetStreamMain(t)
	base := "http://" + m.Addr()
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if st, b := do("PUT", "/v1/topics/js", `{"queues":2}`); st != 201 {
		t.Fatalf("create topic: %d %s", st, b)
	}
	if st, b := do("PUT", "/v1/groups/jg", `{"subscriptions":[{"topic":"js"}]}`); st != 201 {
		t.Fatalf("create group: %d %s", st, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dial := func(path string) *websocket.Conn {
		t.Helper()
		c, _, err := websocket.Dial(ctx, "ws://"+m.Addr()+path, &websocket.DialOptions{Subprotocols: []string{"mqgate.v1"}})
		if err != nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		t.Cleanup(func() { _ = c.CloseNow() })
		return c
	}
	type frame struct {
		Type     string            `json:"type"`
		ID       string            `json:"id"`
		Messages []json.RawMessage `json:"messages"`
		Results  []struct {
			Status        string `json:"status"`
			MessageID     string `json:"messageId"`
			ReceiptHandle string `json:"receiptHandle"`
		} `json:"results"`
	}
	read := func(c *websocket.Conn) frame {
		t.Helper()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var f frame
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	write := func(c *websocket.Conn, s string) {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}

	pub := dial("/v1/topics/js/stream")
	if f := read(pub); f.Type != "open" {
		t.Fatalf("publish stream opened with %+v", f)
	}
	const n = 20
	for i := 0; i < n; i++ {
		write(pub, fmt.Sprintf(`{"type":"publish","id":"p%d","message":{"body":"m%d"}}`, i, i))
	}
	for i := 0; i < n; i++ {
		if f := read(pub); f.Type != "confirm" || len(f.Results) != 1 || f.Results[0].MessageID == "" {
			t.Fatalf("publish answered %+v", f)
		}
	}

	sub := dial("/v1/groups/jg/stream")
	if f := read(sub); f.Type != "open" {
		t.Fatalf("consume stream opened with %+v", f)
	}
	var handles []string
	for len(handles) < n {
		f := read(sub)
		if f.Type != "messages" {
			continue
		}
		for _, raw := range f.Messages {
			var m struct {
				ReceiptHandle string `json:"receiptHandle"`
			}
			_ = json.Unmarshal(raw, &m)
			handles = append(handles, m.ReceiptHandle)
		}
	}
	hs, _ := json.Marshal(handles[1:])
	write(sub, `{"type":"ack","id":"a1","receiptHandles":`+string(hs)+`}`)
	for {
		f := read(sub)
		if f.Type != "results" {
			continue
		}
		if f.ID != "a1" || len(f.Results) != n-1 {
			t.Fatalf("ack answered %+v", f)
		}
		for _, r := range f.Results {
			if r.Status != "ok" {
				t.Fatalf("ack answered %+v", f)
			}
		}
		break
	}
	if st, b := do("POST", "/v1/groups/jg/ack", `{"receiptHandles":["`+handles[0]+`"]}`); st != 200 || !strings.Contains(string(b), `"ok"`) {
		t.Fatalf("REST ack of a stream handle: %d %s", st, b)
	}
}
