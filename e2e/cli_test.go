package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runBinary runs mqgate with args and returns its combined output.
func runBinary(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, binPath, args...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mqgate %v did not finish within %v:\n%s", args, timeout, out)
	}
	return string(out), err
}

func TestCLI(t *testing.T) {
	out, err := runBinary(t, 10*time.Second, "version")
	if err != nil || !strings.HasPrefix(out, "mqgate ") {
		t.Fatalf("version: %v %q", err, out)
	}
	if out, err := runBinary(t, 10*time.Second, "serve", "--log-format", "yaml"); err == nil || !strings.Contains(out, "log-format") {
		t.Fatalf("bad --log-format accepted: %v %q", err, out)
	}
	if out, err := runBinary(t, 10*time.Second, "nonsense"); err == nil || !strings.Contains(out, "unknown command") {
		t.Fatalf("unknown command: %v %q", err, out)
	}
	// A port in use is reported at once, not after a timeout.
	s := startServer(t, t.TempDir())
	out, err = runBinary(t, 20*time.Second, "serve", "--addr", s.addr, "--data", t.TempDir(), "--log-format", "json")
	if err == nil || !strings.Contains(out, "listen") {
		t.Fatalf("second listener on %s: %v %q", s.addr, err, out)
	}
	if strings.Contains(out, `"stopped"`) {
		t.Fatalf("a start that failed to bind logged \"stopped\": %q", out)
	}

	// healthcheck against the running server, and against nothing.
	if out, err := runBinary(t, 10*time.Second, "healthcheck", "--addr", s.addr); err != nil {
		t.Fatalf("healthcheck: %v %q", err, out)
	}
	if _, err := runBinary(t, 10*time.Second, "healthcheck", "--addr", "127.0.0.1:1"); err == nil {
		t.Fatal("healthcheck succeeded with no server")
	}
}

// TestEnvConfig: MQGATE_* variables configure serve; flags win.
func TestEnvConfig(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(cmd.Environ(), "MQGATE_ADDR=127.0.0.1:1", "MQGATE_DATA="+dir, "MQGATE_LOG_FORMAT=json", "MQGATE_LOG_LEVEL=nonsense")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "log-level") {
		t.Fatalf("MQGATE_LOG_LEVEL=nonsense accepted: %v %s", err, out)
	}
}
