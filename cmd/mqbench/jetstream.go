package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/apiclient/stream"
	"github.com/mqgate/mqgate/backend/embedded"
	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/backend/jetstream/jstest"
	"github.com/mqgate/mqgate/core/engine"
)

// `mqbench jetstream` compares, on one machine and in this process:
// two gateways with the jetstream backend behind a round-robin reverse
// proxy, a direct JetStream client, both on one in-process 3-node R3
// cluster (sync always), and the embedded backend — publish msgs/s,
// receive+ack msgs/s and publish→receive latency at a fixed rate.

type jsBenchConfig struct {
	size        int
	concurrency int
	duration    time.Duration
	messages    int
	rate        int
	jsonOut     bool
	only        string // run only the systems whose name contains it
	cpuProfile  string // write a CPU profile of the whole run (servers, gateways, load) here
	runs        int    // rounds over every system; the table shows each figure's median
}

func jetstreamMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mqbench jetstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c jsBenchConfig
	fs.IntVar(&c.size, "size", 1024, "body bytes")
	fs.IntVar(&c.concurrency, "concurrency", 32, "publishers / consumers")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "publish and latency phase length")
	fs.IntVar(&c.messages, "messages", 5000, "messages pre-published for the receive+ack phase")
	fs.IntVar(&c.rate, "rate", 200, "publishes per second in the latency phase")
	fs.BoolVar(&c.jsonOut, "json", false, "JSON output")
	fs.StringVar(&c.only, "only", "", "run only the systems whose name contains this (e.g. \"no proxy\", direct)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (everything is in this process) to this file")
	fs.IntVar(&c.runs, "runs", 1, "rounds over every system (interleaved: system 1, 2, …, then again); figures are medians")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.size < 16 || c.concurrency < 1 || c.duration <= 0 || c.messages < 1 || c.rate < 1 || c.runs < 1 {
		return usagef("--size ≥ 16, --concurrency, --duration, --messages, --rate and --runs must be positive")
	}
	dir, err := os.MkdirTemp("", "mqbench-js-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cl, err := jstest.Start(dir+"/cluster", 3)
	if err != nil {
		return err
	}
	defer cl.Shutdown()

	gws, gw0URL, closeGW, err := startJSGateways(ctx, cl)
	if err != nil {
		return err
	}
	defer closeGW()
	emb, closeEmb, err := startEmbeddedGateway(dir + "/embedded")
	if err != nil {
		return err
	}
	defer closeEmb()
	direct, err := newDirectSUT(ctx, cl, false)
	if err != nil {
		return err
	}
	defer direct.close()

	directAsync, err := newDirectSUT(ctx, cl, true)
	if err != nil {
		return err
	}
	defer directAsync.close()
	gwStreams := newStreamSUT("2 gateways, publish stream (R3)", gws, c.concurrency)
	defer gwStreams.close()

	suts := []benchSUT{
		&httpSUT{name: "2 gateways, jetstream (R3)", base: gws, client: benchClient(c.concurrency)},
		gwStreams,
		&httpSUT{name: "1 jetstream gateway, no proxy", base: gw0URL, client: benchClient(c.concurrency)},
		direct,
		directAsyncSUT{directAsync},
		&httpSUT{name: embeddedLabel, base: emb, client: benchClient(c.concurrency)},
		&httpSUT{name: "2 gateways, jetstream (R3), ORDERLY group", base: gws, client: benchClient(c.concurrency), orderly: true},
		&httpSUT{name: "embedded (bbolt), ORDERLY group", base: emb, client: benchClient(c.concurrency), orderly: true},
	}
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var runs [][]jsBenchRow // by system, one row per round
	var picked []benchSUT
	for _, s := range suts {
		if c.only == "" || strings.Contains(s.label(), c.only) {
			picked = append(picked, s)
		}
	}
	runs = make([][]jsBenchRow, len(picked))
	// A warm-up publish on every system first: the first system to run
	// on a new cluster otherwise pays for its elections and cold caches.
	for i, s := range picked {
		n, err := warmUp(ctx, s, c, fmt.Sprintf("warms%d", i))
		if err != nil {
			return fmt.Errorf("%s: warm-up: %w", s.label(), err)
		}
		fmt.Fprintf(stderr, "warm-up: %d publishes on %s\n", n, s.label())
	}
	for r := 0; r < c.runs && ctx.Err() == nil; r++ {
		// Each round starts at another system, so none always runs first.
		for k := range picked {
			i := (k + r) % len(picked)
			s := picked[i]
			// Each round and system gets topics of its own: a system's
			// earlier round left its messages and consumers behind, and
			// systems on one cluster would share a group (the ORDERLY
			// rows' PUT turned the CONCURRENTLY rows' group ORDERLY,
			// whose new consumers then delivered every earlier message
			// again from the first offset).
			row, err := runJSBench(ctx, s, c, fmt.Sprintf("r%ds%d", r, i))
			if err != nil {
				return fmt.Errorf("%s: %w", s.label(), err)
			}
			runs[i] = append(runs[i], row)
			if ctx.Err() != nil {
				break
			}
		}
	}
	rows := make([]jsBenchRow, 0, len(runs))
	for _, rs := range runs {
		if len(rs) > 0 {
			rows = append(rows, medianRow(rs))
		}
	}
	ratios(rows)
	if c.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	fmt.Fprintf(stdout, "size %d B, concurrency %d, publish %v, receive+ack %d msgs, latency at %d/s; medians of %d rounds\n",
		c.size, c.concurrency, c.duration, c.messages, c.rate, c.runs)
	fmt.Fprintf(stdout, "%-32s %10s %13s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "system", "publish/s", "receive+ack/s", "per rcv",
		"p50 ms", "p99 ms", "pub p50", "pub µs", "r+a µs", "pub/dir", "r+a/dir", "p99/dir")
	// Without the direct client's row (--only) there is nothing to divide
	// by: a dash, not a ratio of 0.
	cell := func(v float64) string {
		if v == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", v)
	}
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-32s %10.0f %13.0f %8.1f %8.2f %8.2f %8.2f %8.0f %8.0f %8s %8s %8s\n", r.System, r.PublishPerSec,
			r.ReceiveAckPerSec, r.PerReceive, r.Latency.P50Ms, r.Latency.P99Ms, r.PublishLatency.P50Ms,
			r.PublishCPUMicros, r.ReceiveAckCPUMicros, cell(r.VsDirect.Publish), cell(r.VsDirect.ReceiveAck), cell(r.VsDirect.P99))
	}
	fmt.Fprintln(stdout, "pub µs, r+a µs: this process's CPU (servers, gateways, proxy, load) per message in that phase")
	return nil
}

// warmUp publishes to s for a second (at most 2,000 messages), unrecorded,
// and says how many it stored (for CPU per message from --cpuprofile).
func warmUp(ctx context.Context, s benchSUT, c jsBenchConfig, topic string) (int64, error) {
	if err := s.setup(ctx, topic); err != nil {
		return 0, err
	}
	var ok atomic.Int64
	body := bytes.Repeat([]byte("x"), c.size)
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < c.concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wctx.Err() == nil && n.Add(1) <= 2000 {
				if s.publish(wctx, topic, body) == nil {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return ok.Load(), nil
}

// medianRow is the median of each figure over a system's rounds (each
// figure on its own: the rows' runs, in brackets in the docs, are in the
// JSON as Runs).
func medianRow(rs []jsBenchRow) jsBenchRow {
	med := func(f func(jsBenchRow) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	out := jsBenchRow{System: rs[0].System, Rounds: len(rs)}
	out.PublishPerSec = med(func(r jsBenchRow) float64 { return r.PublishPerSec })
	out.PublishErrors = int64(med(func(r jsBenchRow) float64 { return float64(r.PublishErrors) }))
	out.ReceiveAckPerSec = med(func(r jsBenchRow) float64 { return r.ReceiveAckPerSec })
	out.PerReceive = med(func(r jsBenchRow) float64 { return r.PerReceive })
	out.PublishCPUMicros = med(func(r jsBenchRow) float64 { return r.PublishCPUMicros })
	out.ReceiveAckCPUMicros = med(func(r jsBenchRow) float64 { return r.ReceiveAckCPUMicros })
	out.Latency = LatencySummary{Count: rs[0].Latency.Count,
		MeanMs: med(func(r jsBenchRow) float64 { return r.Latency.MeanMs }),
		P50Ms:  med(func(r jsBenchRow) float64 { return r.Latency.P50Ms }),
		P90Ms:  med(func(r jsBenchRow) float64 { return r.Latency.P90Ms }),
		P99Ms:  med(func(r jsBenchRow) float64 { return r.Latency.P99Ms }),
		MaxMs:  med(func(r jsBenchRow) float64 { return r.Latency.MaxMs })}
	out.PublishLatency = LatencySummary{Count: rs[0].PublishLatency.Count,
		P50Ms: med(func(r jsBenchRow) float64 { return r.PublishLatency.P50Ms }),
		P99Ms: med(func(r jsBenchRow) float64 { return r.PublishLatency.P99Ms })}
	for _, r := range rs {
		out.Runs = append(out.Runs, jsRun{r.PublishPerSec, r.ReceiveAckPerSec, r.Latency.P99Ms})
	}
	return out
}

// cpuPer is d per message in µs (0 without messages).
func cpuPer(d time.Duration, msgs int64) float64 {
	if msgs <= 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(msgs)
}

// ratios sets each row's figures against the direct client's and the
// embedded backend's medians (when those ran).
func ratios(rows []jsBenchRow) {
	find := func(sub string) *jsBenchRow {
		for i := range rows {
			if rows[i].System == sub {
				return &rows[i]
			}
		}
		return nil
	}
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	set := func(r *jsBenchRow, ref *jsBenchRow) jsRatio {
		return jsRatio{Publish: div(r.PublishPerSec, ref.PublishPerSec), ReceiveAck: div(r.ReceiveAckPerSec, ref.ReceiveAckPerSec),
			P99: div(r.Latency.P99Ms, ref.Latency.P99Ms)}
	}
	// The reference is the synchronous direct client (not its async
	// acks row, which would otherwise match too).
	d, e := find(directSyncLabel), find(embeddedLabel)
	for i := range rows {
		if d != nil {
			rows[i].VsDirect = set(&rows[i], d)
		}
		if e != nil {
			rows[i].VsEmbedded = set(&rows[i], e)
		}
	}
}

// jsRatio is a row's figures over another's: throughputs (higher is
// better) and p99 latency (lower is better).
type jsRatio struct {
	Publish    float64 `json:"publish"`
	ReceiveAck float64 `json:"receiveAck"`
	P99        float64 `json:"p99"`
}

// jsRun is one round's figures.
type jsRun struct {
	PublishPerSec    float64 `json:"publishPerSec"`
	ReceiveAckPerSec float64 `json:"receiveAckPerSec"`
	P99Ms            float64 `json:"p99Ms"`
}

type jsBenchRow struct {
	System           string         `json:"system"`
	PublishPerSec    float64        `json:"publishPerSec"`
	PublishErrors    int64          `json:"publishErrors"`
	ReceiveAckPerSec float64        `json:"receiveAckPerSec"`
	Latency          LatencySummary `json:"publishToReceive"`
	// PublishLatency is the publish round trip alone in the latency
	// phase (at --rate): what of publishToReceive is the publish.
	PublishLatency LatencySummary `json:"publishLatency"`
	// PublishCPUMicros and ReceiveAckCPUMicros are this process's CPU
	// (servers, gateways, proxy and load generator: everything) per
	// message stored or received and acked in those phases, in µs: less
	// sensitive to a shared machine than the rates.
	PublishCPUMicros    float64 `json:"publishCpuMicros"`
	ReceiveAckCPUMicros float64 `json:"receiveAckCpuMicros"`
	// PerReceive is messages per non-empty receive (of 32 asked) in the
	// receive+ack phase.
	PerReceive float64 `json:"perReceive"`
	Rounds     int     `json:"rounds,omitempty"`
	Runs       []jsRun `json:"runs,omitempty"`
	VsDirect   jsRatio `json:"vsDirect"`
	VsEmbedded jsRatio `json:"vsEmbedded"`
}

// benchSUT is one system under test. Every phase gets a fresh topic name.
type benchSUT interface {
	label() string
	setup(ctx context.Context, topic string) error
	publish(ctx context.Context, topic string, body []byte) error
	// receive takes up to 32 messages of topic's group, waiting up to
	// wait, acknowledges them and returns their bodies.
	receive(ctx context.Context, topic string, wait time.Duration) ([][]byte, error)
}

// pipelinedSUT is a system whose publish phase keeps many publishes in
// flight per connection, each confirmed on its own (a client with async
// acks), instead of one per publisher.
type pipelinedSUT interface {
	benchSUT
	// publishAsync sends one publish and returns the wait for its
	// confirm; it blocks while the connection's window is full.
	publishAsync(ctx context.Context, topic string, body []byte) (wait func(context.Context) error, err error)
}

func runJSBench(ctx context.Context, s benchSUT, c jsBenchConfig, round string) (jsBenchRow, error) {
	row := jsBenchRow{System: s.label()}
	pubT, rcvT, latT := "pub"+round, "rcv"+round, "lat"+round
	body := bytes.Repeat([]byte("x"), c.size)

	// Publish for duration with concurrency publishers.
	if err := s.setup(ctx, pubT); err != nil {
		return row, err
	}
	var ok, bad int64
	var elapsed time.Duration
	cpu0 := processCPU()
	if ps, pipelined := s.(pipelinedSUT); pipelined {
		ok, bad, elapsed = publishPipelined(ctx, ps, pubT, body, c)
	} else {
		ok, bad, elapsed = publishEach(ctx, s, pubT, body, c)
	}
	row.PublishPerSec = float64(ok) / elapsed.Seconds()
	row.PublishErrors = bad
	row.PublishCPUMicros = cpuPer(processCPU()-cpu0, ok)
	var wg sync.WaitGroup

	// Receive+ack of messages pre-published.
	if err := s.setup(ctx, rcvT); err != nil {
		return row, err
	}
	var next atomic.Int64
	for i := 0; i < c.concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(c.messages) && ctx.Err() == nil {
				for s.publish(ctx, rcvT, body) != nil && ctx.Err() == nil {
				}
			}
		}()
	}
	wg.Wait()
	var got, receives atomic.Int64
	start := time.Now()
	cpu0 = processCPU()
	deadline := start.Add(2 * time.Minute)
	for i := 0; i < c.concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for got.Load() < int64(c.messages) && time.Now().Before(deadline) && ctx.Err() == nil {
				bs, err := s.receive(ctx, rcvT, time.Second)
				if err == nil && len(bs) > 0 {
					got.Add(int64(len(bs)))
					receives.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	row.ReceiveAckPerSec = float64(got.Load()) / time.Since(start).Seconds()
	row.ReceiveAckCPUMicros = cpuPer(processCPU()-cpu0, got.Load())
	if n := receives.Load(); n > 0 {
		row.PerReceive = float64(got.Load()) / float64(n)
	}

	// Publish → receive latency at a fixed rate.
	if err := s.setup(ctx, latT); err != nil {
		return row, err
	}
	var mu sync.Mutex
	var lat, pubLat []time.Duration
	lctx, lcancel := context.WithCancel(ctx)
	var cw sync.WaitGroup
	for i := 0; i < min(c.concurrency, 8); i++ {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for lctx.Err() == nil {
				bs, err := s.receive(lctx, latT, time.Second)
				now := time.Now()
				if err != nil {
					continue
				}
				mu.Lock()
				for _, b := range bs {
					if n, err := strconv.ParseInt(strings.TrimSpace(string(b[:min(len(b), 20)])), 10, 64); err == nil {
						lat = append(lat, now.Sub(time.Unix(0, n)))
					}
				}
				mu.Unlock()
			}
		}()
	}
	tick := time.NewTicker(time.Second / time.Duration(c.rate))
	end := time.Now().Add(c.duration)
	sent := 0
	for time.Now().Before(end) && ctx.Err() == nil {
		<-tick.C
		b := append([]byte(nil), body...)
		copy(b, fmt.Sprintf("%-20d", time.Now().UnixNano()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			if s.publish(ctx, latT, b) == nil {
				d := time.Since(t0)
				mu.Lock()
				pubLat = append(pubLat, d)
				mu.Unlock()
			}
		}()
		sent++
	}
	tick.Stop()
	wg.Wait()
	// Let the consumers catch up (bounded), then stop them.
	catch := time.Now().Add(10 * time.Second)
	poll := time.NewTicker(20 * time.Millisecond)
	for time.Now().Before(catch) {
		mu.Lock()
		n := len(lat)
		mu.Unlock()
		if n >= sent {
			break
		}
		<-poll.C
	}
	poll.Stop()
	lcancel()
	cw.Wait()
	row.Latency = summarize(lat)
	row.PublishLatency = summarize(pubLat)
	return row, nil
}

// publishEach is the publish phase of a system with one publish in flight
// per publisher: --concurrency publishers for --duration.
func publishEach(ctx context.Context, s benchSUT, topic string, body []byte, c jsBenchConfig) (ok, bad int64, elapsed time.Duration) {
	var okN, badN atomic.Int64
	pctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < c.concurrency; i++ {
		wg.Go(func() {
			for pctx.Err() == nil {
				if err := s.publish(pctx, topic, body); err != nil {
					if pctx.Err() == nil {
						badN.Add(1)
					}
					continue
				}
				okN.Add(1)
			}
		})
	}
	wg.Wait()
	return okN.Load(), badN.Load(), time.Since(start)
}

// publishPipelined is the publish phase of a pipelined system:
// --concurrency senders publish for --duration, as fast as the system's
// windows let them, each handing its confirms, in order, to a waiter of
// its own. The rate counts the confirms over the time until the last one
// is in (publishes still in flight at the end are waited for, not cut).
func publishPipelined(ctx context.Context, s pipelinedSUT, topic string, body []byte, c jsBenchConfig) (ok, bad int64, elapsed time.Duration) {
	var okN, badN atomic.Int64
	var lastMu sync.Mutex
	var last time.Time
	pctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < c.concurrency; i++ {
		waits := make(chan func(context.Context) error, 256)
		wg.Go(func() {
			for wait := range waits {
				if err := wait(ctx); err != nil {
					badN.Add(1)
					continue
				}
				okN.Add(1)
				now := time.Now()
				lastMu.Lock()
				last = now
				lastMu.Unlock()
			}
		})
		wg.Go(func() {
			defer close(waits)
			for pctx.Err() == nil {
				wait, err := s.publishAsync(pctx, topic, body)
				if err != nil {
					if pctx.Err() == nil {
						badN.Add(1)
					}
					continue
				}
				waits <- wait
			}
		})
	}
	wg.Wait()
	if last.IsZero() {
		last = time.Now()
	}
	return okN.Load(), badN.Load(), last.Sub(start)
}

func benchClient(conc int) *http.Client {
	return &http.Client{Timeout: 40 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * conc, MaxConnsPerHost: 0}}
}

// httpSUT drives the HTTP API (the gateways' proxy or the embedded one).
// An orderly one consumes through an ORDERLY group: per queue one message
// in flight, and on JetStream a claim written per hand-out
// (backend/jetstream/orderclaim.go); its receive+ack against the same
// system's CONCURRENTLY row is what ORDERLY costs.
type httpSUT struct {
	name    string
	base    string
	client  *http.Client
	orderly bool
}

func (h *httpSUT) label() string { return h.name }

func (h *httpSUT) do(ctx context.Context, method, path string, body, out any) (int, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, err
		}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, nil
}

func (h *httpSUT) setup(ctx context.Context, topic string) error {
	if _, err := h.do(ctx, "PUT", "/v1/topics/"+topic, map[string]any{"queues": 8}, nil); err != nil {
		return err
	}
	g := map[string]any{"subscriptions": []map[string]any{{"topic": topic}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}
	if h.orderly {
		g["consumeMode"] = "ORDERLY"
	}
	_, err := h.do(ctx, "PUT", "/v1/groups/"+topic+"-g", g, nil)
	return err
}

func (h *httpSUT) publish(ctx context.Context, topic string, body []byte) error {
	_, err := h.do(ctx, "POST", "/v1/topics/"+topic+"/messages", map[string]any{"body": string(body)}, nil)
	return err
}

func (h *httpSUT) receive(ctx context.Context, topic string, wait time.Duration) ([][]byte, error) {
	var r struct {
		Messages []struct {
			Body          string `json:"body"`
			ReceiptHandle string `json:"receiptHandle"`
		} `json:"messages"`
	}
	if _, err := h.do(ctx, "POST", "/v1/groups/"+topic+"-g/receive", map[string]any{"maxMessages": 32, "waitSeconds": int(wait / time.Second)}, &r); err != nil {
		return nil, err
	}
	if len(r.Messages) == 0 {
		return nil, nil
	}
	hs := make([]string, len(r.Messages))
	out := make([][]byte, len(r.Messages))
	for i, m := range r.Messages {
		hs[i], out[i] = m.ReceiptHandle, []byte(m.Body)
	}
	if _, err := h.do(ctx, "POST", "/v1/groups/"+topic+"-g/ack", map[string]any{"receiptHandles": hs}, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// streamSUT publishes over the gateways' publish streams
// (GET /v1/topics/{topic}/stream, the Go stream client with its default
// window: the server's 1,000 unconfirmed messages) and receives over
// REST, as httpSUT. Each topic gets jsPublishStreams streams, opened one
// after the other so the round-robin proxy puts one on each gateway.
type streamSUT struct {
	*httpSUT
	streams *stream.Client
	rr      atomic.Uint64
	mu      sync.Mutex
	pubs    map[string][]*stream.Publisher // by topic
}

const jsPublishStreams = 2

func newStreamSUT(name, base string, conc int) *streamSUT {
	return &streamSUT{httpSUT: &httpSUT{name: name, base: base, client: benchClient(conc)},
		streams: &stream.Client{BaseURL: base, HTTPClient: benchClient(jsPublishStreams)}, pubs: map[string][]*stream.Publisher{}}
}

// setup makes the topic and its group, closes the streams of the
// previous phases (whose publishes are all confirmed) and opens topic's.
func (s *streamSUT) setup(ctx context.Context, topic string) error {
	if err := s.httpSUT.setup(ctx, topic); err != nil {
		return err
	}
	s.close()
	pubs := make([]*stream.Publisher, 0, jsPublishStreams)
	for range jsPublishStreams {
		p, err := s.streams.PublishStream(ctx, topic, stream.PublishOptions{})
		if err != nil {
			for _, p := range pubs {
				p.Close()
			}
			return fmt.Errorf("open publish stream: %w", err)
		}
		pubs = append(pubs, p)
	}
	s.mu.Lock()
	s.pubs[topic] = pubs
	s.mu.Unlock()
	return nil
}

func (s *streamSUT) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, ps := range s.pubs {
		for _, p := range ps {
			p.Close()
		}
		delete(s.pubs, t)
	}
}

func (s *streamSUT) publishAsync(ctx context.Context, topic string, body []byte) (func(context.Context) error, error) {
	s.mu.Lock()
	ps := s.pubs[topic]
	s.mu.Unlock()
	if len(ps) == 0 {
		return nil, fmt.Errorf("no publish stream open on %s", topic)
	}
	b := string(body)
	conf, err := ps[s.rr.Add(1)%uint64(len(ps))].Publish(ctx, apiclient.PublishRequest{Body: &b})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		_, err := conf.Wait(ctx)
		return err
	}, nil
}

func (s *streamSUT) publish(ctx context.Context, topic string, body []byte) error {
	wait, err := s.publishAsync(ctx, topic, body)
	if err != nil {
		return err
	}
	return wait(ctx)
}

// directSUT is a plain JetStream client: publish with PubAck, pull
// consumer Fetch, synchronous ack (as the gateway's). With async, its
// publish phase pipelines (PublishAsync, nats.go's default window of
// 4,000 unacknowledged publishes).
type directSUT struct {
	nc    *nats.Conn
	js    jsapi.JetStream
	async bool
	mu    sync.Mutex
	cons  map[string]jsapi.Consumer
}

// directSyncLabel is the reference of every ratio, embeddedLabel of the
// vsEmbedded ones.
const (
	directSyncLabel = "direct JetStream client (R3)"
	embeddedLabel   = "embedded (bbolt)"
)

func newDirectSUT(ctx context.Context, cl *jstest.Cluster, async bool) (*directSUT, error) {
	nc, err := nats.Connect(cl.URLs())
	if err != nil {
		return nil, err
	}
	js, err := jsapi.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &directSUT{nc: nc, js: js, async: async, cons: map[string]jsapi.Consumer{}}, nil
}

func (d *directSUT) label() string {
	if d.async {
		return "direct client, async acks (R3)"
	}
	return directSyncLabel
}

func (d *directSUT) close() { d.nc.Close() }

// directAsyncSUT is a directSUT that is a pipelinedSUT.
type directAsyncSUT struct{ *directSUT }

func (d directAsyncSUT) publishAsync(ctx context.Context, topic string, body []byte) (func(context.Context) error, error) {
	f, err := d.js.PublishAsync(d.subject(topic), body)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		select {
		case <-f.Ok():
			return nil
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}, nil
}

func (d *directSUT) setup(ctx context.Context, topic string) error {
	name := "DIRECT_" + topic
	if _, err := d.js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{Name: name, Subjects: []string{"direct." + topic + ".>"},
		Replicas: 3, Storage: jsapi.FileStorage}); err != nil {
		return err
	}
	c, err := d.js.CreateOrUpdateConsumer(ctx, name, jsapi.ConsumerConfig{Durable: "g", AckPolicy: jsapi.AckExplicitPolicy,
		AckWait: time.Minute, MaxAckPending: 100000, Replicas: 3})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.cons[topic] = c
	d.mu.Unlock()
	return nil
}

var directRR atomic.Uint64

// subject spreads publishes over 8 subjects, as the gateways over 8 queues.
func (d *directSUT) subject(topic string) string {
	return fmt.Sprintf("direct.%s.%d", topic, directRR.Add(1)%8)
}

func (d *directSUT) publish(ctx context.Context, topic string, body []byte) error {
	_, err := d.js.Publish(ctx, d.subject(topic), body)
	return err
}

func (d *directSUT) receive(ctx context.Context, topic string, wait time.Duration) ([][]byte, error) {
	d.mu.Lock()
	c := d.cons[topic]
	d.mu.Unlock()
	// What is ready now, else wait for the first message (a Fetch of 32
	// would wait for all 32 or the whole wait).
	b, err := c.FetchNoWait(32)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for m := range b.Messages() {
		if err := m.DoubleAck(ctx); err == nil {
			out = append(out, m.Data())
		}
	}
	if len(out) > 0 || b.Error() != nil {
		return out, b.Error()
	}
	b, err = c.Fetch(1, jsapi.FetchMaxWait(wait))
	if err != nil {
		return nil, err
	}
	for m := range b.Messages() {
		if err := m.DoubleAck(ctx); err == nil {
			out = append(out, m.Data())
		}
	}
	return out, b.Error()
}

// startJSGateways starts two jetstream-backend gateways and a round-robin
// reverse proxy in front of them; it returns the proxy's URL and the first
// gateway's.
func startJSGateways(ctx context.Context, cl *jstest.Cluster) (lbURL, first string, stop func(), err error) {
	key := bytes.Repeat([]byte{5}, 32)
	urls := strings.Split(cl.URLs(), ",")
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	var targets []*url.URL
	for i := 0; i < 2; i++ {
		nc, err := nats.Connect(strings.Join(append([]string{urls[i]}, urls...), ","), nats.DontRandomize(), nats.MaxReconnects(-1))
		if err != nil {
			closeAll()
			return "", "", nil, err
		}
		b, err := jetstream.Open(ctx, jetstream.Options{Conn: nc, Key: key, Replicas: 3, InstanceID: fmt.Sprintf("gw%d", i),
			Timeline: true})
		if err != nil {
			nc.Close()
			closeAll()
			return "", "", nil, err
		}
		srv := httptest.NewServer(api.New(api.Options{Backend: b}))
		closers = append(closers, func() { srv.Close(); b.Close(context.Background()); nc.Close() })
		u, _ := url.Parse(srv.URL)
		targets = append(targets, u)
	}
	var n atomic.Uint64
	lb := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[n.Add(1)%uint64(len(targets))])
	}, Transport: &http.Transport{MaxIdleConnsPerHost: 256}, ErrorLog: log.New(io.Discard, "", 0)})
	closers = append(closers, lb.Close)
	return lb.URL, targets[0].String(), closeAll, nil
}

// startEmbeddedGateway is the default backend in-process (as cmd/mqgate
// wires it, without auth and webhooks).
func startEmbeddedGateway(dir string) (string, func(), error) {
	be, err := embedded.Open(embedded.Options{Engine: engine.Options{Dir: dir}})
	if err != nil {
		return "", nil, err
	}
	srv := httptest.NewServer(api.New(api.Options{Backend: be}))
	return srv.URL, func() {
		srv.Close()
		be.Close(context.Background())
	}, nil
}
