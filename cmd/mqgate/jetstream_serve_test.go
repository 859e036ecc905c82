package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/backend/jetstream/jstest"
)

// serve --backend jetstream runs the API over a JetStream server, and
// /readyz turns 503 when the server goes away.
func TestServeJetStream(t *testing.T) {
	m, cl := startJetStreamMain(t, "--pprof-addr", "127.0.0.1:0")
	base := "http://" + m.Addr()
	get := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get("/readyz"); st != 200 {
		t.Fatalf("/readyz = %d", st)
	}
	// --pprof-addr serves on JetStream too (the shared set-up).
	if m.pprof == nil {
		t.Fatal("--pprof-addr ignored with --backend jetstream")
	}
	if resp, err := http.Get("http://" + m.pprof.Addr() + "/debug/pprof/"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("pprof: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	req, _ := http.NewRequest("PUT", base+"/v1/topics/served", strings.NewReader(`{"queues":2}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create topic: %v %v", err, resp)
	}
	resp.Body.Close()
	// The keys' limits count per instance on JetStream, and say so.
	resp, err = http.Get(base + "/v1/admin/limits")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"scope":"instance"`) {
		t.Fatalf("limits: %d %s, want scope instance", resp.StatusCode, b)
	}
	cl.Kill(0)
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for get("/readyz") != 503 {
		if time.Now().After(deadline) {
			t.Fatal("/readyz still 200 without NATS")
		}
		<-tick.C
	}
}

// Against a single (non-clustered) server with the default 3 replicas the
// start fails at once and says what to pass, not a raw NATS error.
func TestServeJetStreamSingleServerSaysReplicas(t *testing.T) {
	dir := t.TempDir()
	cl, err := jstest.Start(filepath.Join(dir, "nats"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Shutdown()
	keyFile := filepath.Join(dir, "handle.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain()
	if err := m.ParseFlags([]string{"--backend", "jetstream", "--nats-url", cl.URLs(),
		"--handle-key-file", keyFile, "--addr", "127.0.0.1:0", "--log-level", "error"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = m.Run()
	defer m.Close()
	if err == nil || !strings.Contains(err.Error(), "--nats-replicas 1") {
		t.Fatalf("Run = %v, want advice to pass --nats-replicas 1", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the refusal took %s", d)
	}
	t.Log(err)
}

// startJetStreamMain runs serve --backend jetstream on 127.0.0.1 over a
// one-node in-process JetStream server (returned too, for tests that
// stop it), with extra flags after the common ones; both stop when the
// test ends.
func startJetStreamMain(t *testing.T, extra ...string) (*Main, *jstest.Cluster) {
	t.Helper()
	dir := t.TempDir()
	cl, err := jstest.Start(filepath.Join(dir, "nats"), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	keyFile := filepath.Join(dir, "handle.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain()
	args := append([]string{"--backend", "jetstream", "--nats-url", cl.URLs(), "--nats-replicas", "1",
		"--handle-key-file", keyFile, "--addr", "127.0.0.1:0", "--log-level", "error"}, extra...)
	if err := m.ParseFlags(args, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, cl
}
