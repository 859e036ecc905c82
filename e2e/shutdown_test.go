package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestGracefulShutdown: a request in flight when SIGTERM arrives still
// completes (and is stored), the listener stops taking connections, the
// process exits 0, and the data is there after a restart.
func TestGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "orders", 1)

	// Start a publish by hand and stop halfway through its body.
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"body":"sent across a shutdown","keys":["graceful"]}`
	head := fmt.Sprintf("POST /v1/topics/orders/messages HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", s.addr, len(body))
	if _, err := conn.Write([]byte(head + body[:10])); err != nil {
		t.Fatal(err)
	}
	// Let the server pick the request up before the signal.
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(s.Logs(), `"listening"`) {
			return fmt.Errorf("no listening line")
		}
		return nil
	})
	time.Sleep(100 * time.Millisecond) // not a synchronisation: just lets the request be read before SIGTERM
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// New connections are refused once shutdown has begun.
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
			return fmt.Errorf("still accepting connections")
		}
		return nil
	})
	select {
	case <-s.exited:
		t.Fatalf("exited with a request in flight\n%s", s.Logs())
	default:
	}

	// The in-flight request finishes normally.
	if _, err := conn.Write([]byte(body[10:])); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request: %v\n%s", err, s.Logs())
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("in-flight publish answered %d", resp.StatusCode)
	}

	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("did not exit after SIGTERM\n%s", s.Logs())
	}
	if s.err != nil {
		t.Fatalf("exit: %v\n%s", s.err, s.Logs())
	}
	if !strings.Contains(s.Logs(), `"stopped"`) {
		t.Fatalf("no clean stop in the log:\n%s", s.Logs())
	}

	s2 := startServer(t, dir)
	r := s2.do(t, "GET", "/v1/topics/orders/messages?key=graceful", nil)
	var ml messageList
	r.JSON(t, &ml)
	if len(ml.Messages) != 1 || *ml.Messages[0].Body != "sent across a shutdown" {
		t.Fatalf("after restart: %s", r.Body)
	}
}

// TestSecondInstanceFailsFast: a second process on the same data dir
// exits with a clear error instead of hanging.
func TestSecondInstanceFailsFast(t *testing.T) {
	dir := t.TempDir()
	startServer(t, dir)
	out, err := runBinary(t, 20*time.Second, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--log-format", "json")
	if err == nil {
		t.Fatalf("a second server on the same data dir started:\n%s", out)
	}
	if !strings.Contains(strings.ToLower(out), "lock") && !strings.Contains(strings.ToLower(out), "in use") {
		t.Logf("second instance output (no mention of a lock):\n%s", out)
	}
}
