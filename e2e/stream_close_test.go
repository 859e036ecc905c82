package e2e

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStreamCloseCodes: the close codes of docs/streaming.md other than
// shutdown's: 4000 when the group or the topic is deleted, 1008 when the stream's API
// key is revoked (a reload of the key file), 4008 when no pong answers
// the server's ping.
func TestStreamCloseCodes(t *testing.T) {
	file := t.TempDir() + "/keys.json"
	writeKeyFile(t, file, `"pub:orders"`)
	s := startServer(t, t.TempDir(), "--api-keys", file, "--stream-ping", "1s")
	admin := bearer(e2eAdminKey)
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 2}, admin...), http.StatusCreated)
	for _, g := range []string{"billing", "doomed"} {
		want(t, s.do(t, "PUT", "/v1/groups/"+g, map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}}, admin...), http.StatusCreated)
	}

	// The group deleted under a stream: 4000.
	doomed := dialStream(t, s, "/v1/groups/doomed/stream", admin...)
	want(t, s.do(t, "DELETE", "/v1/groups/doomed", nil, admin...), http.StatusNoContent)
	if code, why := doomed.closeStatus(30 * time.Second); code != 4000 {
		t.Fatalf("deleted group: closed %d %q, want 4000", code, why)
	}

	// The topic deleted under a publish stream: the next publish gets its
	// error frame, then the stream closes with 4000.
	want(t, s.do(t, "PUT", "/v1/topics/brief", map[string]any{"queues": 1}, admin...), http.StatusCreated)
	brief := dialStream(t, s, "/v1/topics/brief/stream", admin...)
	brief.send(map[string]any{"type": "publish", "id": "before", "message": map[string]any{"body": "a"}})
	if f, _ := brief.readType("confirm", "before", 10*time.Second); len(f.results()) != 1 {
		t.Fatalf("confirm before the delete: %v", f)
	}
	want(t, s.do(t, "DELETE", "/v1/topics/brief", nil, admin...), http.StatusNoContent)
	brief.send(map[string]any{"type": "publish", "id": "after", "message": map[string]any{"body": "b"}})
	if f, _ := brief.readType("error", "after", 10*time.Second); f.problemType() != "urn:mqgate:problem:not_found" {
		t.Fatalf("a publish to the deleted topic answered %v", f)
	}
	if code, why := brief.closeStatus(10 * time.Second); code != 4000 {
		t.Fatalf("deleted topic: closed %d %q, want 4000", code, why)
	}

	// The key revoked: 1008 at the next ping.
	sub := dialStream(t, s, "/v1/groups/billing/stream", bearer(e2eSubKey)...)
	pub := dialStream(t, s, "/v1/topics/orders/stream", bearer(e2ePubKey)...)
	if err := os.WriteFile(file, []byte(`{"keys":[{"name":"ops","sha256":"`+sha256Hex(e2eAdminKey)+`","grants":["admin"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Process.Signal(syscall.SIGHUP)
	for _, w := range []*wsConn{sub, pub} {
		if code, why := w.closeStatus(15 * time.Second); code != 1008 {
			t.Fatalf("revoked key: closed %d %q, want 1008", code, why)
		}
	}

	// No pong: 4008. A raw client that never reads never answers the ping.
	c := rawUpgrade(t, s, "/v1/groups/billing/stream", "Authorization: Bearer "+e2eAdminKey)
	time.Sleep(4 * time.Second)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	// A server close frame: FIN+close (0x88), its length, code 4008 (0x0fa8).
	if !bytes.Contains(got.Bytes(), []byte{0x0f, 0xa8}) || !bytes.Contains(got.Bytes(), []byte{0x88}) {
		t.Fatalf("no 4008 close frame in what the server sent: %q", got.Bytes())
	}
}

// TestStreamFrameTooLarge: a frame over the stream's limit (a consume
// stream's is the REST settlement limit, 256 KiB) closes it with 1009;
// one within it is only an error frame.
func TestStreamFrameTooLarge(t *testing.T) {
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "g", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}})
	w := dialStream(t, s, "/v1/groups/g/stream")
	w.sendRaw(`{"type":"ack","id":"big","receiptHandles":["` + strings.Repeat("h", 200<<10) + `"]}`)
	if f, _ := w.readType("error", "big", 10*time.Second); f.problemType() != "urn:mqgate:problem:invalid" {
		t.Fatalf("a 200 KiB frame answered %v", f)
	}
	w.sendRaw(`{"type":"ack","id":"huge","receiptHandles":["` + strings.Repeat("h", 300<<10) + `"]}`)
	if code, why := w.closeStatus(10 * time.Second); code != 1009 {
		t.Fatalf("a 300 KiB frame: closed %d %q, want 1009", code, why)
	}
}
