package main

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConfigFlagsWinOverEnv(t *testing.T) {
	t.Setenv("MQGATE_ADDR", "127.0.0.1:9999")
	t.Setenv("MQGATE_DATA", "/env/data")
	t.Setenv("MQGATE_LOG_LEVEL", "debug")
	c, err := parseServeFlags([]string{"--addr", "127.0.0.1:7777"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7777" || c.Data != "/env/data" || c.LogLevel != "debug" || c.LogFormat != "auto" {
		t.Fatalf("config %+v", c)
	}
	if _, err := parseServeFlags([]string{"--log-level", "loud"}, io.Discard); err == nil {
		t.Fatal("bad log level accepted")
	}
	if _, err := parseServeFlags([]string{"extra"}, io.Discard); err == nil {
		t.Fatal("stray argument accepted")
	}
}

// TestMainInProcess runs the whole program in-process on :0 (wtf style).
func TestMainInProcess(t *testing.T) {
	m := NewMain()
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-format", "json", "--log-level", "error"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + m.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("readyz %d", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + m.Addr() + "/healthz"); err == nil {
		t.Fatal("still serving after Close")
	}
}

func TestRunCommands(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "mqgate ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	if code := run(nil, &out, &errb); code != 1 {
		t.Fatalf("no command: %d", code)
	}
}

// TestPprofListener: --pprof-addr serves the profiles on a listener of its
// own, and the API's listener does not serve them.
func TestPprofListener(t *testing.T) {
	m := NewMain()
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0", "--data", t.TempDir(),
		"--log-format", "json", "--log-level", "error"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer http.DefaultClient.CloseIdleConnections()
	get := func(url string) int {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	pp := m.pprof.Addr()
	if code := get("http://" + pp + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK {
		t.Fatalf("pprof goroutine profile: %d", code)
	}
	if code := get("http://" + m.Addr() + "/debug/pprof/"); code != http.StatusNotFound {
		t.Fatalf("API listener serves pprof: %d", code)
	}
	http.DefaultClient.CloseIdleConnections()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + pp + "/debug/pprof/"); err == nil {
		t.Fatal("pprof still serving after Close")
	}
}

func TestContainerMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int64{"max\n": 0, "1073741824\n": 1 << 30, "": 0, "junk": 0} {
		p := dir + "/memory.max"
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, ok := containerMemoryLimit(p)
		if got != want || ok != (want > 0) {
			t.Fatalf("%q: %d %v", content, got, ok)
		}
	}
	if _, ok := containerMemoryLimit(dir + "/absent"); ok {
		t.Fatal("absent file gave a limit")
	}
}

// A bad MQGATE_* value is an error naming the variable, not silently
// replaced by the default; every flag has its variable.
func TestEnvGoesThroughFlagParsers(t *testing.T) {
	t.Setenv("MQGATE_CACHE_BUDGET_MIB", "lots")
	if _, err := parseServeFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "MQGATE_CACHE_BUDGET_MIB") {
		t.Fatalf("bad env value: err = %v", err)
	}
	t.Setenv("MQGATE_CACHE_BUDGET_MIB", "64")
	t.Setenv("MQGATE_MAX_WAITING", "10")
	t.Setenv("MQGATE_BROADCAST_IDLE_TIMEOUT", "90s")
	c, err := parseServeFlags([]string{"--max-waiting", "20"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.CacheBudgetMiB != 64 || c.MaxWaiting != 20 || c.BroadcastIdleTimeout != 90*time.Second {
		t.Fatalf("env and flags: %+v", c)
	}
}

// --h2c is cleartext HTTP/2: with TLS it is refused with the reason.
func TestH2CNotWithTLS(t *testing.T) {
	_, err := parseServeFlags([]string{"--h2c", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--h2c") {
		t.Fatalf("--h2c with TLS: %v", err)
	}
}
