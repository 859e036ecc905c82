package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The safe default listener (docs/security.md, "An open API only on
// purpose"): loopback by default; beyond loopback only with --api-keys or
// an explicit --insecure-open.

// TestDefaultListenerIsLoopback starts `mqgate serve` with no --addr (and
// no MQGATE_ADDR): it listens on 127.0.0.1:8080, or, when another process
// holds that port on this shared machine, fails to bind exactly that
// address. Either way the default is loopback, and a failed bind never
// logs "stopped".
func TestDefaultListenerIsLoopback(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binPath, "serve", "--data", filepath.Join(dir, "data"), "--log-format", "json")
	cmd.Env = append(os.Environ(), "MQGATE_ADDR=", "MQGATE_API_KEYS=", "MQGATE_INSECURE_OPEN=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case <-deadline.C:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no listening line within 30s:\n%s", logs.String())
		case line, ok := <-lines:
			if !ok {
				err := cmd.Wait()
				// Only a taken port may stop it: and then it names 127.0.0.1:8080.
				if err == nil || !strings.Contains(logs.String(), "listen on 127.0.0.1:8080") {
					t.Fatalf("default serve exited (%v) without naming 127.0.0.1:8080:\n%s", err, logs.String())
				}
				if strings.Contains(logs.String(), `"stopped"`) {
					t.Fatalf("a start that never listened logged \"stopped\":\n%s", logs.String())
				}
				t.Logf("127.0.0.1:8080 is taken on this machine; the failed bind names it: %s", logs.String())
				return
			}
			logs.WriteString(line + "\n")
			var rec struct{ Message, Addr string }
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Message != "listening" {
				continue
			}
			if rec.Addr != "127.0.0.1:8080" {
				t.Errorf("default listener %q, want 127.0.0.1:8080", rec.Addr)
			}
			// Not reachable through a non-loopback address of this host.
			for _, ip := range hostIPs(t) {
				if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, "8080"), time.Second); err == nil {
					c.Close()
					t.Errorf("the default listener answers on %s:8080", ip)
				}
			}
			_ = cmd.Process.Signal(os.Interrupt)
			for line := range lines {
				logs.WriteString(line + "\n")
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("exit after SIGINT: %v\n%s", err, logs.String())
			}
			if !strings.Contains(logs.String(), `"stopped"`) {
				t.Errorf("a real start and stop logged no \"stopped\":\n%s", logs.String())
			}
			return
		}
	}
}

// hostIPs are this host's non-loopback IPv4 addresses.
func hostIPs(t *testing.T) []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ips = append(ips, n.IP.String())
		}
	}
	return ips
}

// TestOpenListenerNeedsKeysOrInsecureOpen: a non-loopback --addr without
// --api-keys is refused at start with a sentence naming the ways out, and
// nothing is created in the data directory; --insecure-open or a key file
// lets it start.
func TestOpenListenerNeedsKeysOrInsecureOpen(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0"} {
		data := filepath.Join(t.TempDir(), "data")
		out, err := runBinary(t, 20*time.Second, "serve", "--addr", addr, "--data", data, "--log-format", "json")
		if err == nil {
			t.Fatalf("--addr %s without --api-keys started:\n%s", addr, out)
		}
		for _, want := range []string{"refusing to listen on " + addr, "--api-keys", "--insecure-open", "127.0.0.1:8080"} {
			if !strings.Contains(out, want) {
				t.Errorf("--addr %s: refusal lacks %q:\n%s", addr, want, out)
			}
		}
		if strings.Contains(out, `"stopped"`) || strings.Contains(out, `"listening"`) {
			t.Errorf("--addr %s: a refused start logged listening/stopped:\n%s", addr, out)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("--addr %s: the refused start touched the data directory (%v)", addr, err)
		}
	}
	// The variable works like the flag.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "serve", "--data", t.TempDir())
	cmd.Env = append(os.Environ(), "MQGATE_ADDR=:0", "MQGATE_API_KEYS=", "MQGATE_INSECURE_OPEN=")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--insecure-open") {
		t.Fatalf("MQGATE_ADDR=:0 without keys: %v\n%s", err, out)
	}

	// Deliberately open: starts, reachable on a non-loopback address.
	s := startServer(t, t.TempDir(), "--addr", ":0", "--insecure-open")
	_, port, _ := net.SplitHostPort(s.addr)
	if !strings.Contains(s.Logs(), "/v1 is open") {
		t.Errorf("--insecure-open without a warning:\n%s", s.Logs())
	}
	for _, ip := range hostIPs(t) {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), 2*time.Second)
		if err != nil {
			t.Errorf("--addr :0 --insecure-open is not reachable on %s: %v", ip, err)
			continue
		}
		c.Close()
	}
	if r := s.do(t, "GET", "/v1/topics", nil); r.Status != 200 {
		t.Fatalf("open /v1: %d %s", r.Status, r.Body)
	}

	// With keys: starts on every interface, /v1 guarded.
	file := filepath.Join(t.TempDir(), "keys.json")
	writeKeyFile(t, file, `"pub:orders"`)
	k := startServer(t, t.TempDir(), "--addr", "0.0.0.0:0", "--api-keys", file)
	if r := k.do(t, "GET", "/v1/topics", nil); r.Status != 401 {
		t.Fatalf("keyed server, no key: %d %s", r.Status, r.Body)
	}
}
