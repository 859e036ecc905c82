package e2e

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestStreamQuotas: a stream is held to its key's rates (docs/quotas.md)
// by pacing, not refusals: a publish stream over publishPerSecond gets
// every confirm, later; a consume stream over deliveriesPerSecond gets
// every delivery, later.
func TestStreamQuotas(t *testing.T) {
	file := t.TempDir() + "/keys.json"
	body := fmt.Sprintf(`{"keys": [
  {"name": "w", "key": "stream-writer-1234567890", "grants": ["pub:orders"], "limits": {"publishPerSecond": 20, "publishBurst": 10}},
  {"name": "r", "key": "stream-reader-1234567890", "grants": ["sub:billing"], "limits": {"deliveriesPerSecond": 20, "deliveriesBurst": 10}},
  {"name": "ops", "sha256": %q, "grants": ["admin"]}]}`, sha256Hex(e2eAdminKey))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, t.TempDir(), "--api-keys", file)
	admin := bearer(e2eAdminKey)
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 2}, admin...), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/groups/billing", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}}, admin...), http.StatusCreated)

	pub := dialStream(t, s, "/v1/topics/orders/stream", bearer("stream-writer-1234567890")...)
	start := time.Now()
	const n = 50
	for i := 0; i < n; i++ {
		pub.send(map[string]any{"type": "publish", "id": fmt.Sprintf("p%d", i), "message": map[string]any{"body": "x"}})
	}
	for i := 0; i < n; i++ {
		if f := pub.read(20 * time.Second); f.typ() != "confirm" {
			t.Fatalf("publish over the key's rate answered %v, want a confirm (paced)", f)
		}
	}
	// 10 at once (the burst), 40 more at 20/s: about 2 s.
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Fatalf("50 publishes at 20/s (burst 10) took %v: not paced", took)
	}

	sub := dialStream(t, s, "/v1/groups/billing/stream", bearer("stream-reader-1234567890")...)
	start = time.Now()
	got := 0
	for got < n {
		f := sub.read(20 * time.Second)
		if f.typ() != "messages" {
			continue
		}
		ms := f.deliveries()
		got += len(ms)
		sub.send(map[string]any{"type": "ack", "id": fmt.Sprintf("a%d", got), "receiptHandles": streamHandles(ms)})
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Fatalf("50 deliveries at 20/s (burst 10) took %v: not paced", took)
	}
}

// TestStreamPacedKeepsItsPings: a stream the server holds (paced by its
// key's rate, its reader waiting) is not cut for a pong it could not
// read meanwhile: with pings every second and 4 s of pacing, every
// publish is confirmed and the stream stays open.
func TestStreamPacedKeepsItsPings(t *testing.T) {
	file := t.TempDir() + "/keys.json"
	body := fmt.Sprintf(`{"keys": [
  {"name": "w", "key": "stream-writer-1234567890", "grants": ["pub:orders"], "limits": {"publishPerSecond": 2, "publishBurst": 1}},
  {"name": "ops", "sha256": %q, "grants": ["admin"]}]}`, sha256Hex(e2eAdminKey))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, t.TempDir(), "--api-keys", file, "--stream-ping", "1s")
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 2}, bearer(e2eAdminKey)...), http.StatusCreated)

	pub := dialStream(t, s, "/v1/topics/orders/stream", bearer("stream-writer-1234567890")...)
	const n = 9
	for i := 0; i < n; i++ {
		pub.send(map[string]any{"type": "publish", "id": fmt.Sprintf("p%d", i), "message": map[string]any{"body": "x"}})
	}
	for i := 0; i < n; i++ {
		f, err := pub.tryRead(20 * time.Second)
		if err != nil {
			code, why := pub.closeStatus(time.Second)
			t.Fatalf("confirm %d of %d: %v (closed %d %q)", i+1, n, err, code, why)
		}
		if f.typ() != "confirm" {
			t.Fatalf("publish %d answered %v, want a confirm (paced)", i, f)
		}
	}
	// And it still answers afterwards.
	pub.send(map[string]any{"type": "publish", "id": "last", "message": map[string]any{"body": "x"}})
	if f := pub.read(10 * time.Second); f.typ() != "confirm" {
		t.Fatalf("after pacing: %v", f)
	}
}
