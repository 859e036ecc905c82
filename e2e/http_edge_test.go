package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange writes req on a fresh connection to s and reads one answer.
// halfClose closes the write side after req (the client gave up on the
// body). It fails the test when no answer comes within limit.
func rawExchange(t *testing.T, s *server, req string, halfClose bool, limit time.Duration) (*http.Response, []byte, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(limit))
	start := time.Now()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", limit, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body, time.Since(start)
}

func wantRawProblem(t *testing.T, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q on %d: %s", ct, status, body)
	}
	var p problem
	if err := json.Unmarshal(body, &p); err != nil || p.Status != status {
		t.Fatalf("problem body %s: %v", body, err)
	}
}

// TestHTTPEdge checks the edge of the HTTP layer against the real binary:
// slow and short bodies, HEAD on the probes, 404/405 as problem+json.
func TestHTTPEdge(t *testing.T) {
	t.Setenv("MQGATE_BODY_READ_TIMEOUT", "400ms")
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 1)

	t.Run("slow body is 408", func(t *testing.T) {
		req := "POST /v1/topics/orders/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"body\":"
		resp, body, took := rawExchange(t, s, req, false, 10*time.Second)
		wantRawProblem(t, resp, body, http.StatusRequestTimeout)
		if took > 5*time.Second {
			t.Fatalf("408 after %v; the body deadline is 400ms", took)
		}
	})
	t.Run("short body fails fast", func(t *testing.T) {
		// Content-Length larger than what comes, then the client stops
		// sending: answered at once, not after a read timeout.
		req := "POST /v1/topics/orders/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"body\":\"x\"}"
		resp, body, took := rawExchange(t, s, req, true, 10*time.Second)
		wantRawProblem(t, resp, body, http.StatusBadRequest)
		if took > 300*time.Millisecond {
			t.Fatalf("short body answered after %v, want at once", took)
		}
	})
	t.Run("HEAD probes", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			r := s.do(t, "HEAD", path, nil)
			want(t, r, http.StatusOK)
			if len(r.Body) != 0 {
				t.Fatalf("HEAD %s has a body: %q", path, r.Body)
			}
		}
	})
	t.Run("chi 404 and 405 are problem+json", func(t *testing.T) {
		wantProblem(t, s.do(t, "GET", "/nope", nil), http.StatusNotFound)
		r := s.do(t, "POST", "/readyz", nil)
		wantProblem(t, r, http.StatusMethodNotAllowed)
		if r.Header.Get("Allow") != "GET, HEAD" {
			t.Fatalf("Allow %q", r.Header.Get("Allow"))
		}
	})
	t.Run("net/http's own answers stay plain text", func(t *testing.T) {
		// A malformed request line never reaches the router (docs/errors.md).
		resp, body, _ := rawExchange(t, s, "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", false, 5*time.Second)
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(resp.Header.Get("Content-Type"), "problem") {
			t.Fatalf("bad escape: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	})
}

// TestRetryAfter checks that a 429 (too many parked receives) carries
// Retry-After.
func TestRetryAfter(t *testing.T) {
	t.Setenv("MQGATE_MAX_WAITING", "1")
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 1)
	r := s.do(t, "PUT", "/v1/groups/g", map[string]any{"subscriptions": []map[string]string{{"topic": "orders"}}})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("no gateway wired")
	}
	want(t, r, http.StatusCreated)
	parked := make(chan *response, 1)
	go func() {
		r, _ := s.try("POST", "/v1/groups/g/receive", map[string]any{"waitSeconds": 5})
		parked <- r
	}()
	// Wait until the first receive is parked (the group shows it).
	checkFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		var g struct {
			Status struct{ Waiting int }
		}
		s.do(t, "GET", "/v1/groups/g", nil).JSON(t, &g)
		if g.Status.Waiting != 1 {
			return errNotYet
		}
		return nil
	})
	r = s.do(t, "POST", "/v1/groups/g/receive", map[string]any{"waitSeconds": 5})
	wantProblem(t, r, http.StatusTooManyRequests)
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	// Publishing wakes the parked receive, so the test does not wait 5 s.
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "x"}), http.StatusCreated)
	<-parked
}

var errNotYet = errNotYetT{}

type errNotYetT struct{}

func (errNotYetT) Error() string { return "not yet" }
