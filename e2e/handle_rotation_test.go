package e2e

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHandleKeyRotation: receipt handles are signed with --handle-key-file;
// after a rotation, --handle-previous-key-file keeps handles signed with
// the old key verifying (an earlier run's handle answers expired, as
// without a rotation), the new key signs, and once the old key is dropped
// its handles are forged: invalid.
func TestHandleKeyRotation(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	oldKey, newKey := filepath.Join(dir, "old.key"), filepath.Join(dir, "new.key")
	if err := os.WriteFile(oldKey, bytes.Repeat([]byte{7}, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newKey, []byte("8f2a"+string(bytes.Repeat([]byte("0123456789abcdef"), 4))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	setup := func(s *server) {
		createTopic(t, s, "rot", 1)
		want(t, s.do(t, "PUT", "/v1/groups/g", map[string]any{
			"subscriptions": []map[string]any{{"topic": "rot"}},
			"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
		}), http.StatusCreated)
		for _, b := range []string{"a", "b"} {
			want(t, s.do(t, "POST", "/v1/topics/rot/messages", map[string]any{"body": b}), http.StatusCreated)
		}
	}
	status := func(s *server, verb, handle string) string {
		t.Helper()
		body := map[string]any{"receiptHandles": []string{handle}}
		if verb == "extend" {
			body["invisibleSeconds"] = 60
		}
		st, err := answer(s, "g", verb, body)
		if err != nil || len(st) != 1 {
			t.Fatalf("%s: %v %v", verb, st, err)
		}
		return st[0]
	}

	s := startServer(t, data, "--handle-key-file", oldKey)
	setup(s)
	first := receiveN(t, s, "g", 2, 10*time.Second)
	s.stop(t)

	// Rotated: the new key signs, the old one still verifies.
	s = startServer(t, data, "--handle-key-file", newKey, "--handle-previous-key-file", oldKey)
	if got := status(s, "ack", first[0].ReceiptHandle); got != "expired" {
		t.Fatalf("old-key handle of an earlier run after the rotation: %s, want expired", got)
	}
	again := receiveN(t, s, "g", 2, 10*time.Second)
	if got := status(s, "extend", again[0].ReceiptHandle); got != "ok" {
		t.Fatalf("extend of a new-key handle: %s", got)
	}
	if got := status(s, "ack", again[0].ReceiptHandle); got != "ok" {
		t.Fatalf("ack of a new-key handle: %s", got)
	}
	s.stop(t)

	// The old key dropped: its handles are forged now; the new key's
	// still verify (and, from an earlier run, answer expired).
	s = startServer(t, data, "--handle-key-file", newKey)
	if got := status(s, "ack", first[1].ReceiptHandle); got != "invalid" {
		t.Fatalf("old-key handle once the old key is dropped: %s, want invalid", got)
	}
	if got := status(s, "ack", again[1].ReceiptHandle); got != "expired" {
		t.Fatalf("new-key handle of an earlier run: %s, want expired", got)
	}
	s.stop(t)

	// A previous key file that is too short is refused at start.
	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, []byte("tiny"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runBinary(t, 20*time.Second, "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--handle-previous-key-file", short)
	if err == nil || !strings.Contains(out, "--handle-previous-key-file") {
		t.Fatalf("a 4-byte previous key was accepted: %v %s", err, out)
	}
}
