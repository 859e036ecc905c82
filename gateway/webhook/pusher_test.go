package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mqgate/mqgate/core"
)

// TestSignedPayload: one request per message, signed so that Verify
// accepts it, with the API.md message shape and no receipt handle.
func TestSignedPayload(t *testing.T) {
	type seen struct {
		h    http.Header
		body []byte
		err  error
	}
	got := make(chan seen, 4)
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Header.Clone(), b, Verify(testSecret, r.Header, b)}
		w.WriteHeader(http.StatusNoContent)
	})
	p := newTestPusher(t, core.PushConfig{URL: srv.URL}, Options{AllowLoopback: true})
	rec := newRecorder()
	msgs := makeMsgs("m", 0, 2)
	msgs[1].Body, msgs[1].BodyIsText = []byte{0xff, 0x00}, false
	msgs[1].ReconsumeTimes = 3
	msgs[1].SysProps = map[string]string{core.PropOriginMessageID: "orig-1", core.PropRetryTopic: "orders"}
	msgs[1].Topic = "%RETRY%g"
	p.Consume(rec.deliver(0, false, msgs))
	rec.wait(t, 2, 5*time.Second)

	byID := map[string]seen{}
	for range 2 {
		s := <-got
		if s.err != nil {
			t.Fatalf("signature does not verify: %v", s.err)
		}
		if ct := s.h.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("content-type %q", ct)
		}
		byID[s.h.Get(HeaderID)] = s
	}
	s0, ok := byID["m-0"]
	if !ok {
		t.Fatalf("webhook-ids %v", keys(byID))
	}
	var p0 struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(s0.body, &p0); err != nil || len(p0.Messages) != 1 {
		t.Fatalf("body %s: %v", s0.body, err)
	}
	m := p0.Messages[0]
	if m["messageId"] != "m-0" || m["body"] != `{"n":0}` || m["topic"] != "orders" || m["tags"] != "created" {
		t.Fatalf("message %v", m)
	}
	if _, has := m["receiptHandle"]; has {
		t.Fatal("receiptHandle sent to a webhook")
	}
	if born, _ := m["bornAt"].(string); !strings.HasSuffix(born, "Z") || len(born) != len("2006-01-02T15:04:05.000Z") {
		t.Fatalf("bornAt %q", born)
	}
	// A retry copy shows its original id and topic; bytes go as base64;
	// the webhook-id is the original id, the attempt is its own header.
	s1, ok := byID["orig-1"]
	if !ok {
		t.Fatalf("webhook-ids %v", keys(byID))
	}
	if a0, a1 := s0.h.Get(HeaderAttempt), s1.h.Get(HeaderAttempt); a0 != "1" || a1 != "4" {
		t.Fatalf("webhook-attempt %q and %q, want 1 and 4", a0, a1)
	}
	if !strings.Contains(string(s1.body), `"messageId":"orig-1","topic":"orders"`) || !strings.Contains(string(s1.body), `"bodyBase64":"/wA="`) {
		t.Fatalf("retry body %s", s1.body)
	}
	if acked, nacked, doubles := rec.counts(); acked != 2 || nacked != 0 || doubles != 0 {
		t.Fatalf("acked %d nacked %d doubles %d", acked, nacked, doubles)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestLoadBalancedReceivers: three receivers behind a round-robin reverse
// proxy get every message exactly once, all signatures verify.
func TestLoadBalancedReceivers(t *testing.T) {
	for _, batch := range []int{1, 8} {
		t.Run(fmt.Sprintf("batch%d", batch), func(t *testing.T) {
			var (
				mu       sync.Mutex
				seen     = map[string]int{}
				perRecv  [3]int
				badSig   atomic.Int32
				backends [3]*url.URL
			)
			for i := range backends {
				srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					if Verify(testSecret, r.Header, b) != nil {
						badSig.Add(1)
						w.WriteHeader(http.StatusUnauthorized)
						return
					}
					var pl struct {
						Messages []struct {
							MessageID string `json:"messageId"`
						} `json:"messages"`
					}
					if err := json.Unmarshal(b, &pl); err != nil {
						w.WriteHeader(http.StatusBadRequest)
						return
					}
					mu.Lock()
					perRecv[i] += len(pl.Messages)
					for _, m := range pl.Messages {
						seen[m.MessageID]++
					}
					mu.Unlock()
					w.WriteHeader(http.StatusOK)
				})
				backends[i], _ = url.Parse(srv.URL)
			}
			var next atomic.Uint64
			lb := receiver(t, (&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(backends[(next.Add(1)-1)%3])
			}}).ServeHTTP)

			p := newTestPusher(t, core.PushConfig{URL: lb.URL, MaxInFlight: 16, BatchSize: batch}, Options{AllowLoopback: true})
			rec := newRecorder()
			const queues, perQueue, rounds = 4, 25, 3
			for round := range rounds {
				for q := range queues {
					p.Consume(rec.deliver(q, false, makeMsgs(fmt.Sprintf("q%d-r%d", q, round), q, perQueue)))
				}
			}
			total := queues * perQueue * rounds
			rec.wait(t, total, 20*time.Second)
			acked, nacked, doubles := rec.counts()
			if acked != total || nacked != 0 || doubles != 0 || badSig.Load() != 0 {
				t.Fatalf("acked %d nacked %d doubles %d bad signatures %d", acked, nacked, doubles, badSig.Load())
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != total {
				t.Fatalf("receivers saw %d distinct messages, want %d", len(seen), total)
			}
			for i, n := range perRecv {
				if n == 0 {
					t.Fatalf("receiver %d got nothing: %v", i, perRecv)
				}
			}
			t.Logf("messages per receiver: %v", perRecv)
			if st := p.Status(); st.Delivered != uint64(total) || st.InFlight != 0 || st.Queued != 0 {
				t.Fatalf("status %+v", st)
			}
		})
	}
}

// TestFailuresNack: non-2xx, timeouts and redirects are nacked (level 0,
// the engine's ladder) and show in the status.
func TestFailuresNack(t *testing.T) {
	var redirectTargetHits atomic.Int32
	target := receiver(t, func(w http.ResponseWriter, r *http.Request) { redirectTargetHits.Add(1) })
	release := make(chan struct{})
	cases := []struct {
		name      string
		timeout   int
		h         http.HandlerFunc
		wantError string
	}{
		{"500", 0, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "database down", http.StatusInternalServerError)
		}, "HTTP 500 Internal Server Error: database down"},
		{"404", 0, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "HTTP 404"},
		{"timeout", 1, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}, "no answer within 1s"},
		{"redirect", 0, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		}, "redirects are not followed"},
		{"503 without Retry-After", 0, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}, "HTTP 503"},
	}
	defer close(release)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := receiver(t, c.h)
			p := newTestPusher(t, core.PushConfig{URL: srv.URL, TimeoutSeconds: c.timeout}, Options{AllowLoopback: true})
			rec := newRecorder()
			start := time.Now()
			p.Consume(rec.deliver(0, false, makeMsgs("m", 0, 2)))
			rec.wait(t, 2, 10*time.Second)
			for _, id := range []string{"m-0", "m-1"} {
				if a, _ := rec.get(id); a.ok || a.level != 0 {
					t.Fatalf("%s answered %+v, want nack level 0", id, a)
				} else if !strings.HasPrefix(a.reason, "webhook ") || !strings.Contains(a.reason, "ms: ") || !strings.Contains(a.reason, c.wantError) {
					t.Fatalf("%s nack reason %q: want the outcome, timing and %q", id, a.reason, c.wantError)
				}
			}
			st := p.Status()
			if !strings.Contains(st.LastError, c.wantError) || st.ConsecutiveFailures != 2 || st.Failed != 2 || st.LastErrorAt.IsZero() {
				t.Fatalf("status %+v", st)
			}
			if !st.PausedUntil.IsZero() {
				t.Fatalf("paused without Retry-After: %+v", st)
			}
			if c.timeout > 0 && time.Since(start) < time.Duration(c.timeout)*time.Second {
				t.Fatalf("timed out after %s", time.Since(start))
			}
		})
	}
	if n := redirectTargetHits.Load(); n != 0 {
		t.Fatalf("redirect followed %d times", n)
	}
}

// TestRetryAfter: a 429 with Retry-After pauses the whole group for that
// long, nacks with a delay level at least as long, and pushing resumes.
func TestRetryAfter(t *testing.T) {
	var (
		mu    sync.Mutex
		times []time.Time
		calls atomic.Int32
	)
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	levels := []time.Duration{time.Second, 5 * time.Second, 10 * time.Second}
	p := newTestPusher(t, core.PushConfig{URL: srv.URL, MaxInFlight: 4}, Options{AllowLoopback: true, DelayLevelFor: LevelAtLeast(levels)})
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("a", 0, 1)))
	rec.wait(t, 1, 5*time.Second)
	if a, _ := rec.get("a-0"); a.ok || a.level != 2 {
		t.Fatalf("throttled message answered %+v, want nack level 2 (5s >= 2s)", a)
	}
	st := p.Status()
	if st.PausedUntil.IsZero() || !strings.Contains(st.LastError, "Retry-After 2s") {
		t.Fatalf("status %+v", st)
	}
	// Messages arriving during the pause wait (no request, no answer)...
	p.Consume(rec.deliver(1, false, makeMsgs("b", 1, 5)))
	p.Consume(rec.deliver(2, true, makeMsgs("c", 2, 3)))
	if st := p.Status(); st.Queued != 8 || st.InFlight != 0 {
		t.Fatalf("during pause: %+v", st)
	}
	// ...and go out once it is over, not sooner.
	rec.wait(t, 9, 10*time.Second)
	if acked, _, _ := rec.counts(); acked != 8 {
		t.Fatalf("acked %d after the pause", acked)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, at := range times[1:] {
		if gap := at.Sub(times[0]); gap < 2*time.Second-10*time.Millisecond {
			t.Fatalf("request %s after the 429, Retry-After was 2s", gap)
		}
	}
	if st := p.Status(); !st.PausedUntil.IsZero() || st.ConsecutiveFailures != 0 {
		t.Fatalf("after pause: %+v", st)
	}
}

// TestHangingReceiverBoundsInFlight: a receiver that never answers holds at
// most maxInFlight requests; the rest wait without goroutines; another
// group's pusher is not stalled; releasing it delivers everything.
func TestHangingReceiverBoundsInFlight(t *testing.T) {
	const maxInFlight = 4
	var active, peak atomic.Int32
	release := make(chan struct{})
	hang := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := active.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		active.Add(-1)
	})
	fast := receiver(t, func(w http.ResponseWriter, r *http.Request) {})

	p := newTestPusher(t, core.PushConfig{URL: hang.URL, MaxInFlight: maxInFlight, TimeoutSeconds: 60}, Options{AllowLoopback: true})
	other := newTestPusher(t, core.PushConfig{URL: fast.URL}, Options{AllowLoopback: true})
	rec, otherRec := newRecorder(), newRecorder()
	for q := range 5 {
		p.Consume(rec.deliver(q, false, makeMsgs(fmt.Sprintf("q%d", q), q, 10)))
	}
	checkFor(t, 5*time.Second, func() error {
		if st := p.Status(); st.InFlight != maxInFlight || st.Queued != 50-maxInFlight {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	other.Consume(otherRec.deliver(0, false, makeMsgs("o", 0, 20)))
	otherRec.wait(t, 20, 5*time.Second)
	if st := p.Status(); st.InFlight != maxInFlight || peak.Load() != maxInFlight {
		t.Fatalf("in flight %d, receiver peak %d", st.InFlight, peak.Load())
	}
	close(release)
	rec.wait(t, 50, 10*time.Second)
	if acked, _, doubles := rec.counts(); acked != 50 || doubles != 0 {
		t.Fatalf("acked %d doubles %d", acked, doubles)
	}
	if n := peak.Load(); n > maxInFlight {
		t.Fatalf("receiver saw %d concurrent requests, maxInFlight %d", n, maxInFlight)
	}
}

// TestOrderly: an orderly delivery goes out one request at a time, in
// order; on a failure nothing later is posted and the tail is nacked.
func TestOrderly(t *testing.T) {
	for _, batch := range []int{1, 3} {
		t.Run(fmt.Sprintf("batch%d", batch), func(t *testing.T) {
			var (
				mu      sync.Mutex
				order   = map[string][]string{} // by queue prefix
				active  = map[string]int{}
				overlap bool
			)
			srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
				var pl struct {
					Messages []struct {
						MessageID string `json:"messageId"`
					} `json:"messages"`
				}
				_ = json.NewDecoder(r.Body).Decode(&pl)
				q, _, _ := strings.Cut(pl.Messages[0].MessageID, "-")
				mu.Lock()
				active[q]++
				if active[q] > 1 {
					overlap = true
				}
				fail := false
				for _, m := range pl.Messages {
					order[q] = append(order[q], m.MessageID)
					fail = fail || m.MessageID == "q0-5"
				}
				mu.Unlock()
				time.Sleep(time.Millisecond) // widen the window an overlap would need
				mu.Lock()
				active[q]--
				mu.Unlock()
				if fail {
					w.WriteHeader(http.StatusInternalServerError)
				}
			})
			p := newTestPusher(t, core.PushConfig{URL: srv.URL, MaxInFlight: 8, BatchSize: batch}, Options{AllowLoopback: true})
			rec := newRecorder()
			for q := range 4 {
				p.Consume(rec.deliver(q, true, makeMsgs(fmt.Sprintf("q%d", q), q, 10)))
			}
			rec.wait(t, 40, 10*time.Second)

			// Queue 0 fails at message 5: before it acked, from it on nacked.
			failChunk := 5 / batch * batch
			for i := range 10 {
				a, _ := rec.get(fmt.Sprintf("q0-%d", i))
				if want := i < failChunk; a.ok != want {
					t.Fatalf("q0-%d answered %+v, want ok=%v", i, a, want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if overlap {
				t.Fatal("two requests of one orderly queue were in flight together")
			}
			for q := range 4 {
				name := fmt.Sprintf("q%d", q)
				n := 10
				if q == 0 {
					n = min(failChunk+batch, 10) // nothing after the failed request
				}
				var want []string
				for i := range n {
					want = append(want, fmt.Sprintf("%s-%d", name, i))
				}
				if fmt.Sprint(order[name]) != fmt.Sprint(want) {
					t.Fatalf("%s posted %v, want %v", name, order[name], want)
				}
			}
			if _, _, doubles := rec.counts(); doubles != 0 {
				t.Fatalf("%d double answers", doubles)
			}
		})
	}
}

// TestCloseAbortsAndNacks: Close nacks what waits, and when its context
// ends it aborts requests in flight and nacks them; Consume after Close
// nacks at once.
func TestCloseAbortsAndNacks(t *testing.T) {
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	p, err := New("g", core.PushConfig{URL: srv.URL, MaxInFlight: 2, TimeoutSeconds: 60, Secret: testSecret}, Options{AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("m", 0, 6)))
	checkFor(t, 5*time.Second, func() error {
		if st := p.Status(); st.InFlight != 2 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want deadline exceeded", err)
	}
	rec.wait(t, 6, time.Second)
	p.Consume(rec.deliver(0, false, makeMsgs("late", 0, 2)))
	rec.wait(t, 8, time.Second)
	if acked, nacked, doubles := rec.counts(); acked != 0 || nacked != 8 || doubles != 0 {
		t.Fatalf("acked %d nacked %d doubles %d", acked, nacked, doubles)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestCloseWaitsForInFlight: requests in flight at Close finish and are
// answered by their outcome.
func TestCloseWaitsForInFlight(t *testing.T) {
	arrived := make(chan struct{}, 10)
	release := make(chan struct{})
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	})
	p, err := New("g", core.PushConfig{URL: srv.URL, MaxInFlight: 2, Secret: testSecret}, Options{AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("m", 0, 5)))
	<-arrived
	<-arrived
	closed := make(chan error)
	go func() { closed <- p.Close(context.Background()) }()
	rec.wait(t, 3, 5*time.Second) // the three queued ones, nacked at once
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if acked, nacked, _ := rec.counts(); acked != 2 || nacked != 3 {
		t.Fatalf("acked %d nacked %d", acked, nacked)
	}
}

// TestUpdate: a new URL and a larger maxInFlight apply to waiting messages
// without a restart; invalid settings are refused.
func TestUpdate(t *testing.T) {
	var aHits, bActive, bPeak atomic.Int32
	release := make(chan struct{})
	a := receiver(t, func(w http.ResponseWriter, r *http.Request) { aHits.Add(1) })
	b := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := bActive.Add(1)
		for {
			old := bPeak.Load()
			if n <= old || bPeak.CompareAndSwap(old, n) {
				break
			}
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		bActive.Add(-1)
	})
	p := newTestPusher(t, core.PushConfig{URL: a.URL, MaxInFlight: 1}, Options{AllowLoopback: true})
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("a", 0, 3)))
	rec.wait(t, 3, 5*time.Second)

	if err := p.Update(core.PushConfig{URL: "gopher://x", Secret: testSecret}); err == nil {
		t.Fatal("invalid update accepted")
	}
	if err := p.Update(core.PushConfig{URL: b.URL, MaxInFlight: 1, Secret: testSecret}); err != nil {
		t.Fatal(err)
	}
	p.Consume(rec.deliver(0, false, makeMsgs("b", 0, 10)))
	checkFor(t, 5*time.Second, func() error {
		if n := bActive.Load(); n != 1 {
			return fmt.Errorf("b active %d", n)
		}
		return nil
	})
	if err := p.Update(core.PushConfig{URL: b.URL, MaxInFlight: 4, Secret: testSecret}); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, func() error {
		if n := bActive.Load(); n != 4 {
			return fmt.Errorf("b active %d after raising maxInFlight", n)
		}
		return nil
	})
	close(release)
	rec.wait(t, 13, 5*time.Second)
	if aHits.Load() != 3 || bPeak.Load() != 4 {
		t.Fatalf("a hits %d, b peak %d", aHits.Load(), bPeak.Load())
	}
}

// TestHTTP2Receiver: an https receiver that speaks HTTP/2 gets HTTP/2.
func TestHTTP2Receiver(t *testing.T) {
	protos := make(chan string, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos <- r.Proto
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	p := newTestPusher(t, core.PushConfig{URL: srv.URL}, Options{AllowLoopback: true, TLSConfig: &tls.Config{RootCAs: roots}})
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("m", 0, 2)))
	rec.wait(t, 2, 5*time.Second)
	if acked, _, _ := rec.counts(); acked != 2 {
		t.Fatalf("acked %d; status %+v", acked, p.Status())
	}
	if proto := <-protos; proto != "HTTP/2.0" {
		t.Fatalf("proto %s", proto)
	}
}

// TestMetrics: pushers of two groups share one registry; counters by
// outcome and the latency histogram count requests; Close forgets the
// group's series.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	ok := receiver(t, func(w http.ResponseWriter, r *http.Request) {})
	bad := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	p1, err := New("g1", core.PushConfig{URL: ok.URL, Secret: testSecret}, Options{AllowLoopback: true, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := New("g2", core.PushConfig{URL: bad.URL, Secret: testSecret}, Options{AllowLoopback: true, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	p1.Consume(rec.deliver(0, false, makeMsgs("a", 0, 3)))
	p2.Consume(rec.deliver(1, false, makeMsgs("b", 1, 2)))
	rec.wait(t, 5, 5*time.Second)

	want := map[string]float64{
		`mqgate_webhook_requests_total{group="g1",outcome="success"}`: 3,
		`mqgate_webhook_requests_total{group="g2",outcome="status"}`:  2,
		`mqgate_webhook_messages_total{group="g1",result="acked"}`:    3,
		`mqgate_webhook_messages_total{group="g2",result="nacked"}`:   2,
		`mqgate_webhook_request_duration_seconds{group="g1"}`:         3, // sample count
		`mqgate_webhook_in_flight_requests{group="g1"}`:               0,
	}
	got := gather(t, reg)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if err := p1.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := gather(t, reg); len(got) != 0 {
		t.Fatalf("series left after Close: %v", got)
	}
}

// gather flattens a registry into "name{labels}" → value (histograms:
// sample count).
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			k := mf.GetName() + "{" + strings.Join(ls, ",") + "}"
			switch {
			case m.Counter != nil:
				out[k] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[k] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[k] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

// TestStatusCountsARequestWhenItEnds: once a request's answer is read,
// its messages are counted delivered (or failed) in the same step that
// takes them out of flight, before they are acked or nacked, so Status
// never shows them as neither.
func TestStatusCountsARequestWhenItEnds(t *testing.T) {
	ok := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	bad := receiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	for _, c := range []struct {
		url               string
		delivered, failed uint64
	}{{ok.URL, 3, 0}, {bad.URL, 0, 3}} {
		p := newTestPusher(t, core.PushConfig{URL: c.url}, Options{AllowLoopback: true})
		p.post(makeMsgs("m", 0, 3)) // the request alone: nothing acked or nacked yet
		if st := p.Status(); st.InFlight != 0 || st.Delivered != c.delivered || st.Failed != c.failed {
			t.Fatalf("%s: status after the answer %+v, want %d delivered and %d failed", c.url, st, c.delivered, c.failed)
		}
	}
}
