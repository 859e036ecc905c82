package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStreamFlowControlNeverExceeded: with maxOutstandingMessages and
// maxOutstandingBytes the server never has more unsettled deliveries out
// than allowed; acks and a flow frame let more out, a lowered limit
// stops deliveries until the stream is under it.
func TestStreamFlowControlNeverExceeded(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})
	body := strings.Repeat("x", 300)
	streamPublishN(t, s, "orders", 200, func(i int) map[string]any { return map[string]any{"body": body} })

	// By count: 10 out, none more until acks come.
	w := dialStream(t, s, "/v1/groups/g/stream?maxOutstandingMessages=10")
	got, _ := w.collect(10, 20*time.Second)
	if extra, err := w.tryRead(1500 * time.Millisecond); err == nil {
		t.Fatalf("an 11th delivery while 10 are outstanding: %v", extra)
	}
	w.send(map[string]any{"type": "ack", "id": "a1", "receiptHandles": streamHandles(got[:4])})
	more, other := w.collect(4, 10*time.Second)
	if len(more) != 4 {
		t.Fatalf("after acking 4: %d more deliveries", len(more))
	}
	if len(other) == 0 {
		w.readType("results", "a1", 10*time.Second) // the answer may follow the deliveries it made room for
	} else if len(other) != 1 || other[0].typ() != "results" {
		t.Fatalf("frames besides deliveries: %v", other)
	}
	if extra, err := w.tryRead(1500 * time.Millisecond); err == nil {
		t.Fatalf("a delivery beyond the limit after 4 acks: %v", extra)
	}
	// Raised to 20: 10 more, then nothing.
	w.send(map[string]any{"type": "flow", "id": "f1", "maxOutstandingMessages": 20})
	more, _ = w.collect(10, 10*time.Second)
	if extra, err := w.tryRead(1500 * time.Millisecond); err == nil {
		t.Fatalf("a delivery beyond the raised limit: %v (had %d more)", extra, len(more))
	}

	// By bytes: 1,024 bytes of 300-byte bodies is 3 out at a time.
	w2 := dialStream(t, s, "/v1/groups/g/stream?maxOutstandingBytes=1024")
	got2, _ := w2.collect(3, 20*time.Second)
	if extra, err := w2.tryRead(1500 * time.Millisecond); err == nil {
		t.Fatalf("a 4th delivery over the byte limit: %v (had %d)", extra, len(got2))
	}
	w2.send(map[string]any{"type": "ack", "id": "b1", "receiptHandles": streamHandles(got2)})
	if more, _ := w2.collect(3, 10*time.Second); len(more) != 3 {
		t.Fatalf("after acking: %d", len(more))
	}
}

// TestStreamOrderly: an ORDERLY group's per-key order holds on a stream
// acking as it goes, and a key's next message waits for the ack of the
// one before.
func TestStreamOrderly(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "og", map[string]any{"consumeMode": "ORDERLY", "subscriptions": []map[string]any{{"topic": "orders"}}})
	const keys, per = 4, 30
	var msgs []map[string]any
	for i := 0; i < per; i++ {
		for k := 0; k < keys; k++ {
			msgs = append(msgs, map[string]any{"body": fmt.Sprintf("k%d-%03d", k, i), "shardingKey": fmt.Sprintf("k%d", k)})
		}
	}
	streamPublishN(t, s, "orders", len(msgs), func(i int) map[string]any { return msgs[i] })
	w := dialStream(t, s, "/v1/groups/og/stream")
	next := map[string]int{}
	n := 0
	deadline := time.Now().Add(60 * time.Second)
	for n < keys*per {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d delivered", n, keys*per)
		}
		f := w.read(20 * time.Second)
		if f.typ() != "messages" {
			continue
		}
		ms := f.deliveries()
		for _, m := range ms {
			b := m["body"].(string)
			var k, i int
			fmt.Sscanf(b, "k%d-%03d", &k, &i)
			key := fmt.Sprintf("k%d", k)
			if i != next[key] {
				t.Fatalf("key %s: got %s, want index %d", key, b, next[key])
			}
			next[key]++
			n++
		}
		w.send(map[string]any{"type": "ack", "id": fmt.Sprintf("a%d", n), "receiptHandles": streamHandles(ms)})
	}
}

// TestStreamUpgradeRefusals: what is refused before the upgrade, as
// problem+json: no mqgate.v1, a plain GET, a cross-site Origin, unknown
// group or topic, bad parameters; an Origin on --stream-origins is let in.
func TestStreamUpgradeRefusals(t *testing.T) {
	s := startServer(t, t.TempDir(), "--stream-origins", "https://app.example.com")
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})

	wantProblem(t, s.do(t, "GET", "/v1/groups/g/stream", nil), http.StatusBadRequest)
	for _, tc := range []struct {
		path   string
		hdr    []string
		status int
	}{
		{"/v1/groups/g/stream", []string{"Origin", "https://evil.example.net"}, 403},
		{"/v1/topics/orders/stream", []string{"Origin", "https://evil.example.net"}, 403},
		{"/v1/groups/nope/stream", nil, 404},
		{"/v1/topics/nope/stream", nil, 404},
		{"/v1/groups/g/stream?maxOutstandingMessages=0", nil, 400},
		{"/v1/groups/g/stream?bogus=1", nil, 400},
		{"/v1/topics/orders/stream?maxUnconfirmedBytes=5", nil, 400},
	} {
		c, resp, err := tryDialStream(s, tc.path, tc.hdr...)
		if err == nil {
			_ = c.CloseNow()
			t.Errorf("%s %v: upgraded, want %d", tc.path, tc.hdr, tc.status)
			continue
		}
		if resp == nil || resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %v: %v, want %d problem+json", tc.path, tc.hdr, resp, tc.status)
		}
	}
	// Without mqgate.v1 offered.
	r := s.do(t, "GET", "/v1/groups/g/stream", nil, "Connection", "Upgrade", "Upgrade", "websocket",
		"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	wantProblem(t, r, http.StatusBadRequest)
	// The allowed origin and the server's own.
	dialStream(t, s, "/v1/groups/g/stream", "Origin", "https://app.example.com")
	dialStream(t, s, "/v1/topics/orders/stream", "Origin", "http://"+s.addr)
}

// TestStreamKeysAndCap: API keys at upgrade (header, or the
// mqgate.key.<b64url> subprotocol for browsers) with the REST grants,
// and the per-key cap answered 429 with Retry-After.
func TestStreamKeysAndCap(t *testing.T) {
	file := t.TempDir() + "/keys.json"
	writeKeyFile(t, file, `"pub:orders"`)
	s := startServer(t, t.TempDir(), "--api-keys", file, "--max-streams-per-key", "2")
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 2}, bearer(e2eAdminKey)...), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/groups/billing", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}}, bearer(e2eAdminKey)...), http.StatusCreated)

	for _, tc := range []struct {
		path   string
		hdr    []string
		status int
	}{
		{"/v1/groups/billing/stream", nil, 401},
		{"/v1/groups/billing/stream", bearer("not-a-key-0123456789"), 401},
		{"/v1/groups/billing/stream", bearer(e2ePubKey), 403},
		{"/v1/topics/orders/stream", bearer(e2eSubKey), 403},
	} {
		c, resp, err := tryDialStream(s, tc.path, tc.hdr...)
		if err == nil {
			_ = c.CloseNow()
			t.Fatalf("%s: upgraded, want %d", tc.path, tc.status)
		}
		if resp == nil || resp.StatusCode != tc.status {
			t.Fatalf("%s: %v, want %d", tc.path, resp, tc.status)
		}
	}
	// The header and the browser's subprotocol both carry the key.
	dialStream(t, s, "/v1/groups/billing/stream", bearer(e2eSubKey)...)
	b := b64urlNoPad(e2eSubKey)
	dialStream(t, s, "/v1/groups/billing/stream", "Sec-WebSocket-Protocol", "mqgate.key."+b)
	// The third stream of the key: 429 with Retry-After.
	c, resp, err := tryDialStream(s, "/v1/groups/billing/stream", bearer(e2eSubKey)...)
	if err == nil {
		_ = c.CloseNow()
		t.Fatal("a third stream of a key capped at 2 was let in")
	}
	if resp == nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %v, want 429 with Retry-After", resp)
	}
	// Another key is not affected.
	dialStream(t, s, "/v1/topics/orders/stream", bearer(e2ePubKey)...)
}

// TestStreamMalformedIsolated: malformed, unknown and binary frames on
// one stream get error frames, that stream goes on, and 10 other streams
// consuming at the same time are not affected.
func TestStreamMalformedIsolated(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})
	bad := dialStream(t, s, "/v1/groups/g/stream?maxOutstandingMessages=1")
	var good []*wsConn
	for i := 0; i < 10; i++ {
		good = append(good, dialStream(t, s, "/v1/groups/g/stream"))
	}
	for i, f := range []string{`{`, `{"type":"ack"}`, `{"type":"dance","id":"x1"}`, `{"type":"ack","id":"x2","receiptHandles":[]}`,
		`{"type":"publish","id":"x3","message":{"body":"a"}}`, `{"type":"ack","id":"x4","receiptHandles":["a"],"extra":1}`, `[1,2]`} {
		bad.sendRaw(f)
		e, _ := bad.readType("error", "", 10*time.Second)
		if p, _ := e["problem"].(map[string]any); p["status"] != float64(400) {
			t.Fatalf("frame %d %s answered %v", i, f, e)
		}
	}
	ids := map[string]bool{}
	for i := 0; i < 100; i++ {
		ids[fmt.Sprintf("m%d", i)] = true
	}
	streamPublishN(t, s, "orders", 100, func(i int) map[string]any { return map[string]any{"body": fmt.Sprintf("m%d", i)} })
	// Every message is delivered to one of the 11 streams and acked; the
	// bad one, with its limit of 1, still consumes too.
	done := make(chan string, 200)
	for _, w := range append(good, bad) {
		go func(w *wsConn) {
			for {
				f, err := w.tryRead(15 * time.Second)
				if err != nil {
					return
				}
				if f.typ() != "messages" {
					continue
				}
				ms := f.deliveries()
				b, _ := jsonMarshal(map[string]any{"type": "ack", "id": "a", "receiptHandles": streamHandles(ms)})
				if w.c.Write(t.Context(), 1, b) != nil {
					return
				}
				for _, m := range ms {
					done <- m["body"].(string)
				}
			}
		}(w)
	}
	timeout := time.After(30 * time.Second)
	for len(ids) > 0 {
		select {
		case b := <-done:
			delete(ids, b)
		case <-timeout:
			t.Fatalf("%d messages never delivered", len(ids))
		}
	}
}

// TestStreamRefillCoalesces: a client that acks one message per frame
// frees one place at a time; the server refills a quarter of the window
// at once (docs/streaming.md "Flow control"), so deliveries come several
// to a frame instead of one frame per ack, and the window still holds.
func TestStreamRefillCoalesces(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})
	const n, window = 640, 64
	streamPublishN(t, s, "orders", n, func(i int) map[string]any { return map[string]any{"body": fmt.Sprint("m", i)} })

	w := dialStream(t, s, fmt.Sprintf("/v1/groups/g/stream?maxOutstandingMessages=%d", window))
	var queue []map[string]any
	frames, acked := 0, 0
	take := func(f frame) {
		switch f.typ() {
		case "messages":
			frames++
			queue = append(queue, f.deliveries()...)
			if out := len(queue); out > window {
				t.Fatalf("%d deliveries outstanding, window %d", out, window)
			}
		case "results", "empty":
		default:
			t.Fatalf("unexpected frame %v", f)
		}
	}
	for acked < n {
		for len(queue) == 0 {
			take(w.read(20 * time.Second))
		}
		// One ack frame per message, each answered before the next: the
		// slowest refill the old pump did one receive and one frame for.
		id := fmt.Sprint("a", acked)
		w.send(map[string]any{"type": "ack", "id": id, "receiptHandles": streamHandles(queue[:1])})
		queue = queue[1:]
		acked++
		for {
			f := w.read(20 * time.Second)
			if f.typ() == "results" && f.id() == id {
				if rs := f.results(); len(rs) != 1 || rs[0]["status"] != "ok" {
					t.Fatalf("ack %s: %v", id, rs)
				}
				break
			}
			take(f)
		}
	}
	// A refill per 16 acks is 36 frames after the first window; one per
	// ack was 576.
	if frames > n/8 {
		t.Fatalf("%d messages frames for %d deliveries acked one per frame: not coalesced", frames, n)
	}
	t.Logf("%d deliveries in %d messages frames", n, frames)
}
