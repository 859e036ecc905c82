package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process compare started: the baseline server or a gateway.
// stop ends it with SIGTERM (SIGKILL after a grace period) and waits.
type child struct {
	name string
	cmd  *exec.Cmd
	url  string
	// exited is closed when the process has been waited for.
	exited  chan struct{}
	waitErr error
	// logTail keeps the end of its output for error messages.
	logTail *tailBuffer
}

// startBaselineChild re-executes this binary as baseline-server on a free
// loopback port and learns the address from its first line of output, so
// no port is guessed and nothing polls.
func startBaselineChild(ctx context.Context, self string) (*child, error) {
	cmd := exec.Command(self, "baseline-server", "--addr", "127.0.0.1:0")
	cmd.Env = os.Environ()
	c := &child{name: "baseline-server", cmd: cmd, exited: make(chan struct{}), logTail: &tailBuffer{max: 4 << 10}}
	// exec copies the child's stdout into this writer on its own
	// goroutine, which cmd.Wait waits for.
	first := &firstLineWriter{line: make(chan string, 1), next: c.logTail}
	cmd.Stdout, cmd.Stderr = first, c.logTail
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go c.wait()
	lines := first.line
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case line := <-lines:
		if strings.HasPrefix(line, baselineReadyPrefix) {
			c.url = strings.TrimPrefix(line, baselineReadyPrefix)
			return c, nil
		}
		c.stop()
		return nil, fmt.Errorf("baseline-server: unexpected first line %q: %s", line, c.logTail)
	case <-c.exited:
		return nil, fmt.Errorf("baseline-server exited before ready (%v): %s", c.waitErr, c.logTail)
	case <-t.C:
		c.stop()
		return nil, errors.New("baseline-server did not start within 10s")
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

// startGatewayChild runs `bin serve --addr 127.0.0.1:PORT --data dataDir`
// and waits until /readyz answers 200. The gateway does not report its
// address on a machine-readable line, so the port is picked here (bound
// and released) and readiness is probed: the probe is a backoff bounded by
// the start timeout, the one place mqbench retries on a timer.
//
// env is the child's environment (nil: this process's).
func startGatewayChild(ctx context.Context, bin, dataDir string, extra, env []string) (*child, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{"serve", "--addr", addr, "--data", dataDir}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	c := &child{name: "gateway", cmd: cmd, url: "http://" + addr, exited: make(chan struct{}), logTail: &tailBuffer{max: 8 << 10}}
	cmd.Stdout, cmd.Stderr = c.logTail, c.logTail
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go c.wait()

	probe := &http.Client{Timeout: time.Second}
	defer probe.CloseIdleConnections()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	backoff := 10 * time.Millisecond
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-retry.C:
			if readyz(ctx, probe, c.url) {
				return c, nil
			}
			backoff = min(2*backoff, 200*time.Millisecond)
			retry.Reset(backoff)
		case <-c.exited:
			return nil, fmt.Errorf("gateway exited before ready (%v): %s", c.waitErr, c.logTail)
		case <-deadline.C:
			c.stop()
			return nil, fmt.Errorf("gateway not ready within 20s: %s", c.logTail)
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		}
	}
}

func readyz(ctx context.Context, c *http.Client, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (c *child) wait() {
	c.waitErr = c.cmd.Wait()
	close(c.exited)
}

// stop asks the child to shut down gracefully and waits for it.
func (c *child) stop() error {
	select {
	case <-c.exited:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-c.exited:
		return nil
	case <-t.C:
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("%s did not stop on SIGTERM within 10s; killed", c.name)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// firstLineWriter hands the first complete line written to it to line and
// passes everything on to next.
type firstLineWriter struct {
	line chan string
	next io.Writer
	buf  []byte
	sent bool
}

func (f *firstLineWriter) Write(p []byte) (int, error) {
	if !f.sent {
		f.buf = append(f.buf, p...)
		if i := strings.IndexByte(string(f.buf), '\n'); i >= 0 {
			f.line <- string(f.buf[:i])
			f.sent, f.buf = true, nil
		}
	}
	return f.next.Write(p)
}

// withoutOTEL is env without the OTEL_* variables: a gateway started from
// it has tracing off whatever the caller's environment says.
func withoutOTEL(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OTEL_") {
			out = append(out, kv)
		}
	}
	return out
}
