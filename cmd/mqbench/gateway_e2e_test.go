package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests drive the real mqgate binary, built from this tree, the way
// a user runs mqbench. They are skipped with -short.

// gatewayBuild is the mqgate binary built once for all tests of the
// package; TestMain removes its directory.
var gatewayBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func buildGateway(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts the real gateway; skipped with -short")
	}
	b := &gatewayBuild
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "mqbench-e2e-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "mqgate")
		out, err := exec.Command("go", "build", "-o", b.bin, "github.com/mqgate/mqgate/cmd/mqgate").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build ./cmd/mqgate: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// startGateway runs the binary on a temp data dir until the test ends.
func startGateway(t *testing.T, bin string) string {
	t.Helper()
	gw, err := startGatewayChild(context.Background(), bin, t.TempDir(), []string{"--log-level", "warn"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := gw.stop(); err != nil {
			t.Errorf("stop gateway: %v", err)
		}
	})
	return gw.url
}

// TestCompareStartsGateway is issue 2's benchmark in miniature: compare
// starts both the baseline and the gateway itself.
func TestCompareStartsGateway(t *testing.T) {
	bin := buildGateway(t)
	t.Setenv(envRunMain, "1")
	var rep CompareReport
	runMode(t, &rep, "compare", "--gateway-bin", bin, "--gateway-args", "--log-level warn",
		"--runs", "1", "--count", "400", "--batch", "20", "--concurrency", "8", "--warmup", "0")
	if len(rep.Gateway) != 1 || len(rep.Baseline) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	if g := rep.Gateway[0]; g.Messages != 400 || g.Failed != 0 {
		t.Fatalf("gateway run = %+v (first error %q)", g, g.FirstError)
	}
	if rep.Ratio <= 0 {
		t.Fatalf("ratio = %v", rep.Ratio)
	}
}

// skipWithoutConsumption skips until the gateway serves the groups API.
func skipWithoutConsumption(t *testing.T, url string) {
	t.Helper()
	c := newClient(1, 5*time.Second)
	defer closeClient(c)
	status, err := doJSON(context.Background(), c, http.MethodGet, url+"/v1/groups", nil, nil)
	var he *httpError
	// 404/405: not routed yet; 503: routed, consumption not wired in.
	if errors.As(err, &he) && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed ||
		status == http.StatusServiceUnavailable) {
		t.Skipf("gateway does not serve consumption yet: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestConsumeAgainstGateway(t *testing.T) {
	url := startGateway(t, buildGateway(t))
	skipWithoutConsumption(t, url)
	var rep ConsumeReport
	runMode(t, &rep, "consume", "--url", url, "--count", "1000", "--queues", "4", "--consumers", "8", "--run-timeout", "60s")
	r := rep.Runs[0]
	if r.Acked != 1000 || r.Missing != 0 || r.Duplicates != 0 || r.TimedOut || r.Errors != nil {
		t.Fatalf("run = %+v, want every message delivered once and acked (first error %q)", r, r.FirstError)
	}
}

func TestLatencyAgainstGateway(t *testing.T) {
	url := startGateway(t, buildGateway(t))
	skipWithoutConsumption(t, url)
	var rep LatencyReport
	runMode(t, &rep, "latency", "--url", url, "--rate", "200", "--duration", "1s", "--warmup", "300ms", "--drain", "10s")
	r := rep.Runs[0]
	if r.Missing != 0 || r.Measured != 200 || r.EndToEnd.Count != 200 || r.Errors != nil {
		t.Fatalf("run = %+v, want 200 measured and none missing (first error %q)", r, r.FirstError)
	}
}

// The gateway pushes to mqbench's own receiver; it needs the loopback
// allowance, and the test skips until the binary has that flag.
func TestWebhookAgainstGateway(t *testing.T) {
	bin := buildGateway(t)
	if out, _ := exec.Command(bin, "serve", "--help").CombinedOutput(); !strings.Contains(string(out), "webhook-allow-loopback") {
		t.Skip("gateway has no --webhook-allow-loopback yet")
	}
	gw, err := startGatewayChild(context.Background(), bin, t.TempDir(), []string{"--log-level", "warn", "--webhook-allow-loopback"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := gw.stop(); err != nil {
			t.Errorf("stop gateway: %v", err)
		}
	})
	var rep WebhookReport
	runMode(t, &rep, "webhook", "--url", gw.url, "--rate", "200", "--duration", "1s", "--warmup", "300ms", "--drain", "10s")
	r := rep.Runs[0]
	if r.Missing != 0 || r.Measured != 200 || r.EndToEnd.Count != 200 || r.BadSignatures != 0 || r.Errors != nil {
		t.Fatalf("run = %+v, want 200 measured, none missing, all signatures valid (first error %q)", r, r.FirstError)
	}
}

// TestStreamsStartsGateway is issue 22's benchmark in miniature: every
// stream case beside its REST one, on a gateway streams starts, with the
// server's CPU per message.
func TestStreamsStartsGateway(t *testing.T) {
	bin := buildGateway(t)
	var rep StreamsReport
	runMode(t, &rep, "streams", "--gateway-bin", bin, "--gateway-args", "--log-level warn", "--runs", "1",
		"--count", "500", "--producers", "8", "--rate", "200", "--latency-duration", "1s", "--latency-warmup", "300ms", "--h2c", "--frame-per-ack")
	if len(rep.Runs) != 1 || len(rep.Runs[0].Cases) != len(caseOrder) {
		t.Fatalf("report = %+v", rep)
	}
	for _, c := range rep.Runs[0].Cases {
		want := int64(500)
		if strings.HasPrefix(c.Case, "latency") {
			want = 260 // 200/s for 1.3 s, warm-up included
		}
		if c.Messages != want || c.Missing != 0 || c.Duplicates != 0 || c.Errors != 0 || c.MsgsPerSec <= 0 {
			t.Errorf("%s: %+v, want %d messages, none missing, no errors", c.Case, c, want)
		}
		if c.ServerCPUPerMsgUs <= 0 && !strings.HasPrefix(c.Case, "consume") {
			t.Errorf("%s: no server CPU per message", c.Case)
		}
		// The server's frame counts: a frame per ack with OneFramePerAck,
		// at most that gathered, a frame per publish.
		switch c.Case {
		case "consume stream frame/ack", "publish stream":
			if c.FramesIn != 1 {
				t.Errorf("%s: %v frames read per message, want 1", c.Case, c.FramesIn)
			}
		case "consume stream":
			if c.FramesIn <= 0 || c.FramesIn > 1 {
				t.Errorf("%s: %v frames read per message, want (0, 1]", c.Case, c.FramesIn)
			}
		}
	}
	if rep.Ratios["publish msgs/s stream/rest"] <= 0 || rep.Ratios["consume msgs/s stream/rest-ack1"] <= 0 {
		t.Fatalf("ratios = %v", rep.Ratios)
	}
}

// TestGatewayTracesToSink: a gateway started with the sink's endpoint
// (compare --trace, ab.sh TRACE=) exports its spans there; one started
// from withoutOTEL's environment exports nothing whatever the caller's
// OTEL_* say.
func TestGatewayTracesToSink(t *testing.T) {
	bin := buildGateway(t)
	sink, err := startOTLPSink("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close(context.Background())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.Endpoint())
	for _, traced := range []bool{false, true} {
		env := withoutOTEL(os.Environ())
		if traced {
			env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+sink.Endpoint())
		}
		before := sink.requests.Load()
		gw, err := startGatewayChild(context.Background(), bin, t.TempDir(), []string{"--log-level", "warn"}, env)
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(1, 5*time.Second)
		if _, err := doJSON(context.Background(), c, http.MethodPut, gw.url+"/v1/topics/t", map[string]any{"queues": 1}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := doJSON(context.Background(), c, http.MethodPost, gw.url+"/v1/topics/t/messages", map[string]any{"body": "x"}, nil); err != nil {
			t.Fatal(err)
		}
		closeClient(c)
		if err := gw.stop(); err != nil { // a graceful stop flushes the spans
			t.Fatal(err)
		}
		if got := sink.requests.Load() - before; (got > 0) != traced {
			t.Fatalf("traced %v: %d export requests", traced, got)
		}
	}
}
