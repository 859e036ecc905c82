package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkShutdownDelay runs m's shutdown delay and checks that meanwhile
// /readyz is 503 while the API still serves (a topic is created), and that
// it lasts the delay.
func checkShutdownDelay(t *testing.T, m *Main, delay time.Duration) {
	t.Helper()
	base := "http://" + m.Addr()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	status := func(method, path, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s inside the shutdown delay: %v", method, path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := status("GET", "/readyz", ""); st != 200 {
		t.Fatalf("/readyz %d before the delay", st)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); m.shutdownDelay() }()
	deadline := time.After(delay / 2)
	for status("GET", "/readyz", "") != http.StatusServiceUnavailable {
		select {
		case <-deadline:
			t.Fatal("/readyz still 200 into the shutdown delay")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if st := status("PUT", "/v1/topics/during-delay", `{"queues":1}`); st != http.StatusCreated {
		t.Fatalf("create a topic inside the delay: %d", st)
	}
	if st := status("GET", "/healthz", ""); st != 200 {
		t.Fatalf("/healthz %d inside the delay", st)
	}
	<-done
	if took := time.Since(start); took < delay {
		t.Fatalf("the delay ended after %v, want %v", took, delay)
	}
}

func TestShutdownDelayEmbedded(t *testing.T) {
	m := NewMain()
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-level", "error", "--shutdown-delay", "2s"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checkShutdownDelay(t, m, 2*time.Second)
}

func TestShutdownDelayJetStream(t *testing.T) {
	m, _ := startJetStreamMain(t, "--shutdown-delay", "2s")
	checkShutdownDelay(t, m, 2*time.Second)
}

func TestShutdownDelayFlag(t *testing.T) {
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil || c.ShutdownDelay != 0 {
		t.Fatalf("default %v %v, want 0", c.ShutdownDelay, err)
	}
	t.Setenv("MQGATE_SHUTDOWN_DELAY", "7s")
	if c, err := parseServeFlags(nil, io.Discard); err != nil || c.ShutdownDelay != 7*time.Second {
		t.Fatalf("env: %v %v", c.ShutdownDelay, err)
	}
	if _, err := parseServeFlags([]string{"--shutdown-delay", "-1s"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--shutdown-delay") {
		t.Fatalf("a negative delay: %v", err)
	}
}
