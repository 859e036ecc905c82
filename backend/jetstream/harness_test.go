package jetstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/backend/jetstream/jstest"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// One 3-node cluster (R3, sync always) for the package; every test uses
// topic and group names of its own.
var cluster *jstest.Cluster

// testLevels are short delay levels so retry tests run in seconds.
var testLevels = []time.Duration{
	200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
	100 * time.Millisecond, 100 * time.Millisecond,
}

var testKey = bytes.Repeat([]byte{7}, 32)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mqgate-js-*")
	if err != nil {
		panic(err)
	}
	cluster, err = jstest.Start(dir, 3)
	if err != nil {
		panic(err)
	}
	code := m.Run()
	cluster.Shutdown()
	os.RemoveAll(dir)
	os.Exit(code)
}

// gw is one gateway instance: a backend with its own connection and a
// real HTTP server on 127.0.0.1.
type gw struct {
	b   *jetstream.Backend
	reg *prometheus.Registry // the webhook pushers' metrics
	nc  *nats.Conn
	srv *httptest.Server
}

func (g *gw) URL() string { return g.srv.URL }

// Close stops the instance like a crash would, as far as JetStream sees
// it: its connection goes away with whatever it held.
func (g *gw) Close() {
	g.srv.Close()
	g.b.Close(context.Background())
	g.nc.Close()
}

// env is two gateways behind a round-robin reverse proxy.
type env struct {
	t   *testing.T
	gws []*gw
	lb  *httptest.Server
}

func startGateway(t *testing.T, server int) *gw {
	t.Helper()
	urls := strings.Split(cluster.URLs(), ",")
	// Prefer server `server`, fail over to the others.
	order := append([]string{urls[server%len(urls)]}, urls...)
	nc, err := nats.Connect(strings.Join(order, ","), nats.DontRandomize(), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	b, err := jetstream.Open(context.Background(), jetstream.Options{
		Conn: nc, Key: testKey, Replicas: 3, DelayLevels: testLevels, MaxAtomicBatch: jstest.MaxBatch,
		InstanceID: fmt.Sprintf("gw%d", server), RequestTimeout: 5 * time.Second, Timeline: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel)
	reg := prometheus.NewRegistry()
	// The embedded gateway's webhook options: loopback allowed for the
	// test sinks, TEST-NET-1 denied (the guard's CIDR flags).
	if err := b.StartPush(jetstream.PushOptions{Webhook: webhook.Options{AllowLoopback: true,
		DenyCIDRs: []string{"192.0.2.0/24"}, Registerer: reg, Logger: &log}, PollWait: time.Second}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Options{Backend: b, Logger: &log}))
	g := &gw{b: b, reg: reg, nc: nc, srv: srv}
	t.Cleanup(g.Close)
	return g
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t}
	e.gws = []*gw{startGateway(t, 0), startGateway(t, 1)}
	var n atomic.Uint64
	targets := []*url.URL{}
	for _, g := range e.gws {
		u, _ := url.Parse(g.URL())
		targets = append(targets, u)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[n.Add(1)%uint64(len(targets))])
	}}
	e.lb = httptest.NewServer(proxy)
	t.Cleanup(e.lb.Close)
	return e
}

// do sends one JSON request and decodes the answer into out (if non-nil).
func do(t *testing.T, method, u string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, u, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, u, raw, err)
		}
	}
	if resp.StatusCode >= 300 && out == nil {
		t.Logf("%s %s → %d %s", method, u, resp.StatusCode, raw)
	}
	return resp.StatusCode
}

func mustDo(t *testing.T, method, u string, body any, out any, want ...int) {
	t.Helper()
	st := do(t, method, u, body, out)
	for _, w := range want {
		if st == w {
			return
		}
	}
	t.Fatalf("%s %s → %d, want %v", method, u, st, want)
}

type msg struct {
	MessageID      string    `json:"messageId"`
	Topic          string    `json:"topic"`
	QueueID        int       `json:"queueId"`
	Body           string    `json:"body"`
	ShardingKey    string    `json:"shardingKey"`
	ReconsumeTimes int       `json:"reconsumeTimes"`
	ReceiptHandle  string    `json:"receiptHandle"`
	InvisibleUntil time.Time `json:"invisibleUntil"`
}

type results struct {
	Results []struct {
		ReceiptHandle  string    `json:"receiptHandle"`
		Status         string    `json:"status"`
		InvisibleUntil time.Time `json:"invisibleUntil"`
	} `json:"results"`
}

func (e *env) topic(name string, queues int) {
	mustDo(e.t, "PUT", e.lb.URL+"/v1/topics/"+name, map[string]any{"queues": queues}, nil, 200, 201)
}

func (e *env) group(name string, cfg map[string]any) {
	mustDo(e.t, "PUT", e.lb.URL+"/v1/groups/"+name, cfg, nil, 200, 201)
}

func (e *env) publish(base, topic string, body map[string]any) string {
	var r struct {
		MessageID string `json:"messageId"`
	}
	mustDo(e.t, "POST", base+"/v1/topics/"+topic+"/messages", body, &r, 201)
	return r.MessageID
}

func (e *env) receive(base, group string, max, wait, invisible int) []msg {
	var r struct {
		Messages []msg `json:"messages"`
	}
	body := map[string]any{"maxMessages": max, "waitSeconds": wait}
	if invisible > 0 {
		body["invisibleSeconds"] = invisible
	}
	mustDo(e.t, "POST", base+"/v1/groups/"+group+"/receive", body, &r, 200)
	return r.Messages
}

func (e *env) settle(base, group, op string, handles []string, extra map[string]any) results {
	body := map[string]any{"receiptHandles": handles}
	for k, v := range extra {
		body[k] = v
	}
	var r results
	mustDo(e.t, "POST", base+"/v1/groups/"+group+"/"+op, body, &r, 200)
	return r
}

func status(r results) []string {
	var out []string
	for _, x := range r.Results {
		out = append(out, x.Status)
	}
	return out
}
