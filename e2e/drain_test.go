package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitExit waits up to limit for s to exit and returns how long it took
// from since; it fails the test when s is still running.
func waitExit(t *testing.T, s *server, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case <-s.exited:
		return time.Since(since)
	case <-time.After(limit):
		s.kill()
		t.Fatalf("still running %v after SIGTERM\n%s", limit, s.Logs())
	}
	return 0
}

// TestShutdownDelay: with --shutdown-delay, SIGTERM turns /readyz 503 at
// once while the listener keeps accepting connections and answering
// requests for the delay; then the server shuts down and exits 0.
func TestShutdownDelay(t *testing.T) {
	const delay = 4 * time.Second
	s := startServer(t, t.TempDir(), "--shutdown-delay", delay.String())
	createTopic(t, s, "orders", 1)
	want(t, s.do(t, "GET", "/readyz", nil), http.StatusOK)

	sent := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 2*time.Second, 10*time.Millisecond, func() error {
		if r, err := s.try("GET", "/readyz", nil); err != nil || r.Status != http.StatusServiceUnavailable {
			return errNotYet
		}
		return nil
	})
	// During the delay: fresh connections are accepted and served, and a
	// publish is stored; /healthz stays 200 (the process is alive).
	n := 0
	for time.Since(sent) < delay-2*time.Second { // leaves 2 s for the last round under load
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Post(s.base+"/v1/topics/orders/messages", "application/json", strings.NewReader(fmt.Sprintf(`{"body":"during the delay %d"}`, n)))
		if err != nil {
			t.Fatalf("publish %v after SIGTERM, inside the delay: %v", time.Since(sent), err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("publish inside the delay answered %d", resp.StatusCode)
		}
		want(t, s.do(t, "GET", "/healthz", nil), http.StatusOK)
		wantProblem(t, s.do(t, "GET", "/readyz", nil), http.StatusServiceUnavailable)
		n++
		time.Sleep(100 * time.Millisecond) // pacing the client, not a synchronisation
	}
	if n == 0 {
		t.Fatal("no request made inside the delay")
	}
	took := waitExit(t, s, sent, delay+20*time.Second)
	if took < delay {
		t.Fatalf("exited %v after SIGTERM, before the %v delay", took, delay)
	}
	if s.err != nil {
		t.Fatalf("exit after the delay: %v\n%s", s.err, s.Logs())
	}
	if !strings.Contains(s.Logs(), "shutdown delay") || !strings.Contains(s.Logs(), `"stopped"`) {
		t.Fatalf("no delay or clean stop in the log:\n%s", s.Logs())
	}
}

// TestSlowBody408ClosesConnection: a connection whose body stopped
// arriving gets its 408 and is then closed by the server at once (it used
// to stay open past the idle timeout, and one such connection made
// SIGTERM wait out --shutdown-timeout and exit 1). SIGTERM afterwards
// exits 0 well inside the timeout.
func TestSlowBody408ClosesConnection(t *testing.T) {
	s := startServer(t, t.TempDir(), "--body-read-timeout", "300ms", "--shutdown-timeout", "20s")
	createTopic(t, s, "orders", 1)

	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 10 bytes of a 100-byte body, then nothing: the client stalls.
	req := "POST /v1/topics/orders/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"body\":\"x"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no 408: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantRawProblem(t, resp, body, http.StatusRequestTimeout)
	if !resp.Close { // net/http reads Connection: close into resp.Close
		t.Fatalf("408 without Connection: close: %v", resp.Header)
	}
	// The server closes its end: the next read sees EOF (or a reset),
	// not our own deadline.
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	_, err = br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open %v after its 408", time.Since(start))
	}
	if err == nil {
		t.Fatal("server sent more bytes after its 408")
	}

	sent := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	took := waitExit(t, s, sent, 30*time.Second)
	if s.err != nil {
		t.Fatalf("exit after SIGTERM (%v): %v\n%s", took, s.err, s.Logs())
	}
	if took > 5*time.Second {
		t.Fatalf("SIGTERM took %v with a 408'd connection around; want well inside the 20s timeout", took)
	}
}

// TestHealthcheckTLS: `mqgate healthcheck` (the Docker HEALTHCHECK) speaks
// HTTPS to a --tls-cert server, trusting the server's own certificate file
// (MQGATE_TLS_CERT, which the container shares with the server) without a
// host name check; a certificate that is not the server's fails it, and
// --insecure-skip-verify is the documented way around a file it cannot read.
func TestHealthcheckTLS(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t, t.TempDir())
	otherCert, _, _ := selfSigned(t, t.TempDir())
	s := startServer(t, t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile)

	hc := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(binPath, append([]string{"healthcheck", "--addr", s.addr}, args...)...)
		cmd.Env = append(cleanEnv(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := hc([]string{"MQGATE_TLS_CERT=" + certFile}); err != nil {
		t.Fatalf("healthcheck over TLS with the server's certificate: %v\n%s", err, out)
	}
	if out, err := hc(nil, "--tls-cert", certFile); err != nil {
		t.Fatalf("healthcheck --tls-cert: %v\n%s", err, out)
	}
	if out, err := hc([]string{"MQGATE_TLS_CERT=" + otherCert}); err == nil {
		t.Fatalf("healthcheck trusted a certificate that is not the server's:\n%s", out)
	} else if !strings.Contains(out, "certificate") {
		t.Fatalf("a wrong certificate fails without saying so: %s", out)
	}
	if out, err := hc(nil, "--insecure-skip-verify"); err != nil {
		t.Fatalf("healthcheck --insecure-skip-verify: %v\n%s", err, out)
	}
	// Plain HTTP against the TLS port fails (the old behaviour, which left
	// the container unhealthy) and says why.
	if out, err := hc(nil); err == nil {
		t.Fatalf("plain-HTTP healthcheck passed against a TLS server:\n%s", out)
	}
	// And a plain server still passes a plain healthcheck.
	p := startServer(t, t.TempDir())
	cmd := exec.Command(binPath, "healthcheck", "--addr", p.addr)
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("plain healthcheck: %v\n%s", err, out)
	}
}

// cleanEnv is the test's environment without MQGATE_* variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MQGATE_") {
			env = append(env, kv)
		}
	}
	return env
}
