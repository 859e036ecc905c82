package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// API keys (API.md "Operations", docs/security.md): the real binary with
// --api-keys pointing at a key file in the test's temp dir.

const (
	e2ePubKey   = "e2e-pub-2f9c1b7d8e4a6035"
	e2eSubKey   = "e2e-sub-7a3e9d1c5b2f4086"
	e2eAdminKey = "e2e-admin-c4d8e2f6a1b3957"
)

func sha256Hex(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

// writeKeyFile writes the test key file: the admin and sub keys stored as
// hashes, the pub key in plain (both forms must work).
func writeKeyFile(t *testing.T, file string, pubGrants string) {
	t.Helper()
	body := fmt.Sprintf(`{"keys": [
  {"name": "orders-writer", "key": %q, "grants": [%s]},
  {"name": "billing-reader", "sha256": %q, "grants": ["sub:billing"]},
  {"name": "ops", "sha256": %q, "grants": ["admin"]}
]}`, e2ePubKey, pubGrants, sha256Hex(e2eSubKey), sha256Hex(e2eAdminKey))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func startAuthServer(t *testing.T) (*server, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "keys.json")
	writeKeyFile(t, file, `"pub:orders", "pub:orders-*"`)
	t.Setenv("MQGATE_API_KEYS", file)
	return startServer(t, t.TempDir()), file
}

func bearer(key string) []string { return []string{"Authorization", "Bearer " + key} }

func TestAuthKeysAndGrants(t *testing.T) {
	s, _ := startAuthServer(t)
	msg := map[string]any{"body": "hello"}

	// No header, a wrong key, another scheme: 401 problem+json with the
	// Bearer challenge, whatever the route (unknown ones included).
	for _, hdr := range [][]string{nil, bearer("not-a-key-0123456789"), {"Authorization", "Basic " + e2eAdminKey}} {
		for _, path := range []string{"/v1/topics", "/v1/groups/billing", "/v1/nope"} {
			r := s.do(t, "GET", path, nil, hdr...)
			wantProblem(t, r, http.StatusUnauthorized)
			if ch := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer ") {
				t.Fatalf("GET %s %v: WWW-Authenticate %q", path, hdr, ch)
			}
		}
	}

	// Admin sets up; publish with the pub key to its topics only.
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]any{"queues": 4}, bearer(e2eAdminKey)...), http.StatusCreated)
	want(t, s.do(t, "PUT", "/v1/topics/payments", nil, bearer(e2eAdminKey)...), http.StatusCreated)
	r := s.do(t, "PUT", "/v1/groups/billing", map[string]any{"subscriptions": []map[string]any{{"topic": "orders"}}}, bearer(e2eAdminKey)...)
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)

	want(t, s.do(t, "POST", "/v1/topics/orders/messages", msg, bearer(e2ePubKey)...), http.StatusCreated)
	p := wantProblem(t, s.do(t, "POST", "/v1/topics/payments/messages", msg, bearer(e2ePubKey)...), http.StatusForbidden)
	if !strings.Contains(p.Detail, "orders-writer") || strings.Contains(p.Detail, e2ePubKey) {
		t.Fatalf("403 detail %q: want the key's name, never its secret", p.Detail)
	}
	wantProblem(t, s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{}, bearer(e2ePubKey)...), http.StatusForbidden)
	wantProblem(t, s.do(t, "PUT", "/v1/topics/orders-new", nil, bearer(e2ePubKey)...), http.StatusForbidden)
	want(t, s.do(t, "GET", "/v1/topics/orders", nil, bearer(e2ePubKey)...), http.StatusOK)

	// The sub key consumes through billing, and nothing else.
	var got struct {
		Messages []recvMsg `json:"messages"`
	}
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		r := s.do(t, "POST", "/v1/groups/billing/receive", map[string]any{"waitSeconds": 1}, bearer(e2eSubKey)...)
		want(t, r, http.StatusOK)
		r.JSON(t, &got)
		if len(got.Messages) == 0 {
			return fmt.Errorf("no message received yet")
		}
		return nil
	})
	want(t, s.do(t, "POST", "/v1/groups/billing/ack", map[string]any{"receiptHandles": []string{got.Messages[0].ReceiptHandle}}, bearer(e2eSubKey)...), http.StatusOK)
	want(t, s.do(t, "GET", "/v1/groups/billing/offsets", nil, bearer(e2eSubKey)...), http.StatusOK)
	want(t, s.do(t, "GET", "/v1/groups/billing/dlq", nil, bearer(e2eSubKey)...), http.StatusOK)
	wantProblem(t, s.do(t, "POST", "/v1/topics/orders/messages", msg, bearer(e2eSubKey)...), http.StatusForbidden)
	wantProblem(t, s.do(t, "POST", "/v1/groups/billing/dlq/redrive", map[string]any{}, bearer(e2eSubKey)...), http.StatusForbidden)
	wantProblem(t, s.do(t, "DELETE", "/v1/groups/billing", nil, bearer(e2eSubKey)...), http.StatusForbidden)

	// Lists show what the key may see; admin sees everything.
	var topics struct {
		Topics []struct{ Name string } `json:"topics"`
	}
	s.do(t, "GET", "/v1/topics", nil, bearer(e2ePubKey)...).JSON(t, &topics)
	if len(topics.Topics) != 1 || topics.Topics[0].Name != "orders" {
		t.Fatalf("the pub key lists %+v, want only orders", topics.Topics)
	}
	s.do(t, "GET", "/v1/topics", nil, bearer(e2eAdminKey)...).JSON(t, &topics)
	if len(topics.Topics) != 2 {
		t.Fatalf("admin lists %+v, want orders and payments", topics.Topics)
	}

	// Rejected requests changed nothing: no payments message, no
	// orders-new topic, billing still there.
	var pay struct {
		Stats struct {
			Messages int64 `json:"messages"`
		} `json:"stats"`
	}
	s.do(t, "GET", "/v1/topics/payments", nil, bearer(e2eAdminKey)...).JSON(t, &pay)
	if pay.Stats.Messages != 0 {
		t.Fatalf("payments holds %d messages after a refused publish", pay.Stats.Messages)
	}
	wantProblem(t, s.do(t, "GET", "/v1/topics/orders-new", nil, bearer(e2eAdminKey)...), http.StatusNotFound)
	want(t, s.do(t, "GET", "/v1/groups/billing", nil, bearer(e2eAdminKey)...), http.StatusOK)

	// Admin may do the rest: redrive, delete.
	want(t, s.do(t, "POST", "/v1/groups/billing/dlq/redrive", map[string]any{}, bearer(e2eAdminKey)...), http.StatusOK)
	want(t, s.do(t, "DELETE", "/v1/topics/payments", nil, bearer(e2eAdminKey)...), http.StatusNoContent)

	// Operations stay open.
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"} {
		want(t, s.do(t, "GET", path, nil), http.StatusOK)
	}

	// Request log lines name the key that made the request.
	checkFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(s.Logs(), `"key":"ops"`) || !strings.Contains(s.Logs(), `"key":"orders-writer"`) {
			return fmt.Errorf("no request line names the keys ops and orders-writer")
		}
		return nil
	})

	// Secrets never reach the log.
	for _, k := range []string{e2ePubKey, e2eSubKey, e2eAdminKey} {
		if strings.Contains(s.Logs(), k) {
			t.Fatalf("the server logged an API key")
		}
	}
}

// TestAuthReloadOnSIGHUP revokes a grant by editing the file and sending
// SIGHUP; a broken file on a later SIGHUP keeps the keys in force.
func TestAuthReloadOnSIGHUP(t *testing.T) {
	s, file := startAuthServer(t)
	want(t, s.do(t, "PUT", "/v1/topics/orders", nil, bearer(e2eAdminKey)...), http.StatusCreated)
	msg := map[string]any{"body": "x"}
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", msg, bearer(e2ePubKey)...), http.StatusCreated)

	writeKeyFile(t, file, `"pub:invoices"`)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if r := s.do(t, "POST", "/v1/topics/orders/messages", msg, bearer(e2ePubKey)...); r.Status != http.StatusForbidden {
			return fmt.Errorf("publish after the reload: %d, want 403", r.Status)
		}
		return nil
	})

	if err := os.WriteFile(file, []byte(`{"keys": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(s.Logs(), "API keys not reloaded") {
			return fmt.Errorf("no reload error logged yet")
		}
		return nil
	})
	want(t, s.do(t, "GET", "/v1/topics", nil, bearer(e2eAdminKey)...), http.StatusOK)
}

// TestAuthBadKeyFileFailsStart: a key file that does not load stops the
// start with an error naming the entry.
func TestAuthBadKeyFileFailsStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(file, []byte(`{"keys":[{"name":"w","key":"0123456789abcdef0","grants":["publish:orders"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runBinary(t, 30*time.Second, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--api-keys", file)
	if err == nil {
		t.Fatalf("mqgate serve started with a bad key file:\n%s", out)
	}
	if !strings.Contains(out, `keys[0] "w"`) || !strings.Contains(out, "unknown grant") {
		t.Fatalf("the error does not name the entry and the grant:\n%s", out)
	}
}
