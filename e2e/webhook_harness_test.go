package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mqgate/mqgate/gateway/webhook"
)

// Webhook push end to end (issue 6): the real binary pushing to real
// receivers on loopback.

// hookSecret signs every test group's requests.
const hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// shortDelayLevels makes retries come back in 100–300 ms (level 3 and up,
// where nacks without a level start), so failure tests take seconds.
const shortDelayLevels = "100ms 100ms 100ms 100ms 100ms 200ms 200ms 200ms 300ms 300ms 300ms 300ms 300ms 300ms 300ms 300ms 300ms 300ms"

// startPushServer starts mqgate with webhooks allowed to reach loopback
// and short delay levels (through the environment, which the harness's
// process inherits).
func startPushServer(t *testing.T, dir string) *server {
	t.Helper()
	t.Setenv("MQGATE_WEBHOOK_ALLOW_LOOPBACK", "true")
	t.Setenv("MQGATE_DELAY_LEVELS", shortDelayLevels)
	return startServer(t, dir)
}

// hookMsg is one message of a webhook request.
type hookMsg struct {
	MessageID      string `json:"messageId"`
	Topic          string `json:"topic"`
	QueueID        int    `json:"queueId"`
	QueueOffset    int64  `json:"queueOffset"`
	Body           string `json:"body"`
	ShardingKey    string `json:"shardingKey"`
	ReconsumeTimes int    `json:"reconsumeTimes"`
}

// hookRequest is what a receiver saw of one POST.
type hookRequest struct {
	At       time.Time
	Msgs     []hookMsg
	Status   int // what the receiver answered
	Verified bool
}

// receiver is a loopback webhook endpoint. decide picks each request's
// answer (nil: 204); it runs with no lock held and may block (a hanging
// receiver). Every request is checked against hookSecret.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	decide func(r *http.Request, msgs []hookMsg) (status int, hdr http.Header)

	inFlight, maxInFlight atomic.Int64

	mu       sync.Mutex
	reqs     []hookRequest
	acked    map[string]int // body → 2xx answers that carried it
	badSigs  int
	badSigAt string
}

func newReceiver(t testing.TB, decide func(r *http.Request, msgs []hookMsg) (int, http.Header)) *receiver {
	rc := &receiver{t: t, decide: decide, acked: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	n := rc.inFlight.Add(1)
	defer rc.inFlight.Add(-1)
	for {
		m := rc.maxInFlight.Load()
		if n <= m || rc.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	sigErr := webhook.Verify(hookSecret, r.Header, raw)
	var p struct {
		Messages []hookMsg `json:"messages"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || r.Header.Get("Content-Type") != "application/json" {
		rc.t.Errorf("webhook body %q (content-type %q): %v", raw, r.Header.Get("Content-Type"), err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	status, hdr := http.StatusNoContent, http.Header(nil)
	if rc.decide != nil {
		status, hdr = rc.decide(r, p.Messages)
	}
	if sigErr != nil {
		status = http.StatusUnauthorized
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, hookRequest{At: time.Now(), Msgs: p.Messages, Status: status, Verified: sigErr == nil})
	if sigErr != nil {
		rc.badSigs++
		rc.badSigAt = fmt.Sprintf("%v (headers %v)", sigErr, r.Header)
	}
	if status >= 200 && status < 300 {
		for _, m := range p.Messages {
			rc.acked[m.Body]++
		}
	}
	rc.mu.Unlock()
	for k, vs := range hdr {
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
}

// ackedCount is how many distinct bodies got a 2xx.
func (rc *receiver) ackedCount() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.acked)
}

func (rc *receiver) requests() []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookRequest(nil), rc.reqs...)
}

func (rc *receiver) checkSignatures(t testing.TB) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.badSigs > 0 {
		t.Fatalf("%d requests failed signature verification, e.g. %s", rc.badSigs, rc.badSigAt)
	}
}

// roundRobin is a load balancer in front of receivers: each request goes
// to the next backend (httputil.ReverseProxy).
func roundRobin(t testing.TB, backends ...*receiver) *httptest.Server {
	var next atomic.Uint64
	targets := make([]*url.URL, len(backends))
	for i, b := range backends {
		targets[i], _ = url.Parse(b.srv.URL)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(targets[next.Add(1)%uint64(len(targets))])
		},
		Transport: tr,
	}
	lb := httptest.NewServer(proxy)
	t.Cleanup(func() {
		lb.Close()
		tr.CloseIdleConnections()
	})
	return lb
}

// putPushGroup creates (or replaces) a push group on topic.
func putPushGroup(t testing.TB, s *server, group, topic string, push map[string]any, extra map[string]any) {
	t.Helper()
	body := map[string]any{
		"subscriptions": []map[string]any{{"topic": topic}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
		"push":          push,
	}
	for k, v := range extra {
		body[k] = v
	}
	r := s.do(t, "PUT", "/v1/groups/"+group, body)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("PUT group %s: %d %s", group, r.Status, r.Body)
	}
}

// publishN publishes bodies prefix0..prefix(n-1) to topic in batches;
// key, if set, gives each message's sharding key.
func publishN(t testing.TB, s *server, topic, prefix string, n int, key func(i int) string) {
	t.Helper()
	// Batches of 100: each batch goes to one queue, so the messages
	// spread over the topic's queues.
	for lo := 0; lo < n; lo += 100 {
		var msgs []map[string]any
		for i := lo; i < min(lo+100, n); i++ {
			m := map[string]any{"body": prefix + strconv.Itoa(i)}
			if key != nil {
				m["shardingKey"] = key(i)
			}
			msgs = append(msgs, m)
		}
		if r := s.do(t, "POST", "/v1/topics/"+topic+"/messages/batch", map[string]any{"messages": msgs}); r.Status != http.StatusCreated {
			t.Fatalf("publish batch: status %d", r.Status)
		}
	}
}

// pushStatus is status.push of GET /v1/groups/{group}.
type pushStatus struct {
	URL                 string `json:"url"`
	InFlight            int    `json:"inFlight"`
	Queued              int    `json:"queued"`
	Delivered           uint64 `json:"delivered"`
	Failed              uint64 `json:"failed"`
	ConsecutiveFailures int    `json:"consecutiveFailures"`
	LastSuccessAt       string `json:"lastSuccessAt"`
	LastErrorAt         string `json:"lastErrorAt"`
	LastError           string `json:"lastError"`
	PausedUntil         string `json:"pausedUntil"`
}

type groupView struct {
	Push *struct {
		URL       string `json:"url"`
		BatchSize int    `json:"batchSize"`
		HasSecret bool   `json:"hasSecret"`
	} `json:"push"`
	Status struct {
		DLQDepth   int64       `json:"dlqDepth"`
		RetryDepth int64       `json:"retryDepth"`
		Consumers  []string    `json:"consumers"`
		Push       *pushStatus `json:"push"`
	} `json:"status"`
}

func getGroup(t testing.TB, s *server, group string) groupView {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group, nil)
	want(t, r, http.StatusOK)
	var g groupView
	r.JSON(t, &g)
	return g
}
