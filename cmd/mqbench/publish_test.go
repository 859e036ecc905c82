package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestPublishCountSingle(t *testing.T) {
	b := startTestBaseline(t)
	var rep PublishReport
	runMode(t, &rep, "publish", "--url", b.URL(), "--count", "500", "--concurrency", "8", "--warmup", "0")
	if len(rep.Runs) != 1 {
		t.Fatalf("runs = %d, want 1", len(rep.Runs))
	}
	r := rep.Runs[0]
	if r.Messages != 500 || r.Requests != 500 || r.Failed != 0 || r.Latency.Count != 500 {
		t.Fatalf("run = %+v, want 500 messages in 500 requests, no failures", r)
	}
	if got := b.seq.Load(); got != 500 {
		t.Fatalf("server answered %d publishes, want 500", got)
	}
	if r.MsgsPerSec <= 0 || r.MBPerSec <= 0 || r.Latency.MaxMs < r.Latency.P50Ms {
		t.Fatalf("implausible figures: %+v", r)
	}
}

// A count that is not a multiple of the batch ends with one short batch,
// and the warm-up's requests are not counted but do reach the server.
func TestPublishCountBatchRemainderAndWarmup(t *testing.T) {
	b := startTestBaseline(t)
	var rep PublishReport
	runMode(t, &rep, "publish", "--url", b.URL(), "--count", "1050", "--batch", "100",
		"--concurrency", "4", "--warmup", "100ms", "--binary", "--size", "200")
	r := rep.Runs[0]
	if r.Messages != 1050 || r.Requests != 11 || r.Failed != 0 {
		t.Fatalf("run = %+v, want 1050 messages in 11 requests", r)
	}
	if r.WarmupTotal == 0 {
		t.Fatalf("no warm-up requests in 100ms")
	}
	if got, want := b.seq.Load(), 1050+100*r.WarmupTotal; got != want {
		t.Fatalf("server answered %d publishes, want %d (1050 measured + %d warm-up requests of 100)", got, want, r.WarmupTotal)
	}
}

func TestPublishDurationRuns(t *testing.T) {
	b := startTestBaseline(t)
	var rep PublishReport
	runMode(t, &rep, "publish", "--url", b.URL(), "--duration", "200ms", "--warmup", "0",
		"--concurrency", "4", "--runs", "3")
	if len(rep.Runs) != 3 {
		t.Fatalf("runs = %d, want 3", len(rep.Runs))
	}
	var total int64
	for i, r := range rep.Runs {
		if r.Messages == 0 || r.Failed != 0 {
			t.Fatalf("run %d = %+v", i, r)
		}
		if r.ElapsedSec < 0.2 || r.ElapsedSec > 5 {
			t.Fatalf("run %d elapsed %.3fs, want about 0.2s", i, r.ElapsedSec)
		}
		total += r.Messages
	}
	if got := b.seq.Load(); got != total {
		t.Fatalf("server answered %d, runs counted %d", got, total)
	}
	if rep.Median.MsgsPerSec <= 0 {
		t.Fatalf("median = %+v", rep.Median)
	}
}

// Failures are counted by status, not as throughput.
func TestPublishCountsErrors(t *testing.T) {
	// A server that creates topics and refuses every publish.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusCreated)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var rep PublishReport
	runMode(t, &rep, "publish", "--url", srv.URL, "--count", "6", "--warmup", "0", "--concurrency", "2")
	r := rep.Runs[0]
	if r.Messages != 0 || r.Failed != 6 || r.Errors["503"] != 6 || r.FirstError == "" {
		t.Fatalf("run = %+v, want 6 failures with 503", r)
	}
}

func TestPublishTable(t *testing.T) {
	b := startTestBaseline(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--url", b.URL(), "--count", "10", "--warmup", "0", "--runs", "2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"msgs/s", "p99 ms", "run 1", "run 2", "median"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"publish", "--batch", "0"},
		{"publish", "--batch", "1001"},
		{"publish", "--concurrency", "0"},
		{"compare", "--url", ""},
		{"compare", "--url", "http://127.0.0.1:1", "--gateway-bin", "/bin/true"},
		{"nosuchmode"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		}
	}
}

func TestPublishStdClient(t *testing.T) {
	b := startTestBaseline(t)
	var rep PublishReport
	runMode(t, &rep, "publish", "--url", b.URL(), "--count", "300", "--batch", "7",
		"--concurrency", "4", "--warmup", "0", "--client", "std")
	if r := rep.Runs[0]; r.Messages != 300 || r.Requests != 43 || r.Failed != 0 {
		t.Fatalf("run = %+v, want 300 messages in 43 requests", r)
	}
	if got := b.seq.Load(); got != 300 {
		t.Fatalf("server answered %d publishes, want 300", got)
	}
}

// The raw client follows a server that closes connections: after each
// `Connection: close` answer it dials again, and nothing is sent twice.
func TestRawClientReconnects(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPost {
			posts.Add(1)
			if posts.Load()%2 == 0 {
				w.Header().Set("Connection", "close")
			}
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	var rep PublishReport
	runMode(t, &rep, "publish", "--url", srv.URL, "--count", "100", "--concurrency", "3", "--warmup", "0")
	if r := rep.Runs[0]; r.Messages != 100 || r.Failed != 0 {
		t.Fatalf("run = %+v (first error %q)", r, r.FirstError)
	}
	if got := posts.Load(); got != 100 {
		t.Fatalf("server got %d publishes, want 100", got)
	}
}

// TestPayloadsCarryDelay checks --delay-level / --delay-seconds reach the
// wire in single and batch bodies, and stay off it when unset.
func TestPayloadsCarryDelay(t *testing.T) {
	for _, tc := range []struct {
		batch int
		d     delay
		want  string
	}{
		{1, delay{Level: 17}, `"delayLevel":17`},
		{100, delay{Seconds: 259200}, `"delaySeconds":259200`},
	} {
		p, err := encodePayloads(1, 8, tc.batch, 0, false, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(p.full[0]), tc.want); got != tc.batch {
			t.Errorf("batch %d: %d of %s in %s", tc.batch, got, tc.want, p.full[0])
		}
	}
	p, err := encodePayloads(1, 8, 2, 0, false, delay{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.full[0]), "delay") {
		t.Errorf("undelayed payload mentions a delay: %s", p.full[0])
	}
}
