package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqgate/mqgate/core"
)

// publishConfig is one publish load: who to hit and how hard.
type publishConfig struct {
	URL         string
	Topic       string
	Queues      int
	Concurrency int
	Size        int
	Binary      bool
	Batch       int
	Count       int           // messages to publish after the warm-up (0: use Duration)
	Duration    time.Duration // measured time when Count is 0
	Warmup      time.Duration
	Timeout     time.Duration // per request
	Runs        int
	JSON        bool
	Client      string // "raw" or "std"
	// Delay makes every message a delayed one (issue 5's pending backlog).
	Delay delay

	// ServerPID, when set (compare's child processes), is the server
	// whose CPU use each run reports.
	ServerPID int
}

// addPublishFlags registers the flags publish and compare share.
func addPublishFlags(fs *flag.FlagSet, c *publishConfig, defaultRuns int) {
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "gateway base URL")
	fs.StringVar(&c.Topic, "topic", "mqbench", "topic to publish to (created with PUT)")
	fs.IntVar(&c.Queues, "queues", 8, "queues of the topic when it is created")
	fs.IntVar(&c.Concurrency, "concurrency", 64, "concurrent clients, each with one request in flight")
	fs.IntVar(&c.Size, "size", 1024, "message body bytes")
	fs.BoolVar(&c.Binary, "binary", false, "publish random bytes as bodyBase64 instead of text as body")
	fs.IntVar(&c.Batch, "batch", 1, "messages per request (1: POST .../messages, >1: POST .../messages/batch)")
	fs.IntVar(&c.Count, "count", 0, "messages to publish after the warm-up (0: run for --duration)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured time when --count is 0")
	fs.DurationVar(&c.Warmup, "warmup", 2*time.Second, "load before measuring (not counted)")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.IntVar(&c.Runs, "runs", defaultRuns, "runs; the report gives each and their medians")
	fs.BoolVar(&c.JSON, "json", false, "print JSON instead of a table")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "pid of the server on this machine, to report its CPU next to mqbench's (compare sets it for the servers it starts)")
	fs.StringVar(&c.Client, "client", "raw", "HTTP client of the publish loop: raw (lean HTTP/1.1, pre-built requests) or std (net/http)")
	fs.IntVar(&c.Delay.Level, "delay-level", 0, "publish delayed messages at this delay level (1..the server's level count; 0: none)")
	fs.IntVar(&c.Delay.Seconds, "delay-seconds", 0, "publish timer messages due this many seconds after the publish (0: none)")
}

func (c *publishConfig) validate() error {
	switch {
	case c.Concurrency < 1:
		return usagef("--concurrency must be at least 1")
	case c.Size < 0 || c.Size > core.MaxMessageSize:
		return usagef("--size must be 0..%d", core.MaxMessageSize)
	case c.Batch < 1 || c.Batch > core.MaxBatch:
		return usagef("--batch must be 1..%d", core.MaxBatch)
	case c.Count < 0:
		return usagef("--count must not be negative")
	case c.Count == 0 && c.Duration <= 0:
		return usagef("need --count or a positive --duration")
	case c.Runs < 1:
		return usagef("--runs must be at least 1")
	case c.Warmup < 0:
		return usagef("--warmup must not be negative")
	case c.Client != "raw" && c.Client != "std":
		return usagef("--client must be raw or std")
	case c.Delay.Level < 0 || c.Delay.Seconds < 0:
		return usagef("--delay-level and --delay-seconds must not be negative")
	case c.Delay.Level > 0 && c.Delay.Seconds > 0:
		return usagef("--delay-level and --delay-seconds exclude each other")
	}
	return nil
}

func publishMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg publishConfig
	addPublishFlags(fs, &cfg, 1)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	runs, err := repeatRuns(ctx, cfg.Runs, func(ctx context.Context) (PublishRun, error) {
		return runPublish(ctx, cfg, "gateway")
	})
	if err != nil {
		return err
	}
	rep := PublishReport{Config: cfg.describe(), Runs: runs, Median: medianRun(runs)}
	return rep.write(stdout, cfg.JSON)
}

// PublishRun is what one publish run measured.
type PublishRun struct {
	Target      string         `json:"target"`
	Messages    int64          `json:"messages"` // published with a 201, after the warm-up
	Requests    int64          `json:"requests"` // answered with a 201
	Failed      int64          `json:"failedRequests"`
	ElapsedSec  float64        `json:"elapsedSec"`
	MsgsPerSec  float64        `json:"msgsPerSec"`
	MBPerSec    float64        `json:"mbPerSec"`
	ReqsPerSec  float64        `json:"reqsPerSec"`
	Latency     LatencySummary `json:"latency"` // per request, 201s only
	Errors      statusCounts   `json:"errors,omitempty"`
	FirstError  string         `json:"firstError,omitempty"`
	WarmupTotal int64          `json:"warmupRequests"`
	// ClientCPU is the cores mqbench itself used during the measured
	// time (1.0 = one core busy).
	ClientCPU float64 `json:"clientCpuCores"`
	// ServerCPU is the cores the server used in the same time, when
	// mqbench started it (compare); 0 when unknown.
	ServerCPU float64 `json:"serverCpuCores,omitempty"`
}

// runPublish creates the topic, then runs cfg's load once against cfg.URL.
func runPublish(ctx context.Context, cfg publishConfig, target string) (PublishRun, error) {
	client := newClient(cfg.Concurrency, cfg.Timeout)
	defer closeClient(client)
	if err := ensureTopic(ctx, client, cfg.URL, cfg.Topic, cfg.Queues); err != nil {
		return PublishRun{}, fmt.Errorf("create topic: %w", err)
	}
	full, rem := 0, 0
	if cfg.Count > 0 {
		full, rem = cfg.Count/cfg.Batch, cfg.Count%cfg.Batch
	}
	p, err := encodePayloads(uint64(time.Now().UnixNano()), cfg.Size, cfg.Batch, rem, cfg.Binary, cfg.Delay)
	if err != nil {
		return PublishRun{}, err
	}
	url := topicURL(cfg.URL, cfg.Topic, "/messages")
	if cfg.Batch > 1 {
		url += "/batch"
	}
	l := &publishLoad{cfg: cfg, client: client, url: url, payloads: p, fullReqs: int64(full)}
	if cfg.Client == "raw" {
		if err := l.buildRaw(); err != nil {
			return PublishRun{}, err
		}
	}
	r := l.run(ctx)
	r.Target = target
	return r, nil
}

// publishLoad is one run's shared state. Workers touch only the atomics
// below and their own publishWorker; results are merged after they stop.
type publishLoad struct {
	cfg      publishConfig
	client   *http.Client
	url      string
	payloads payloads
	fullReqs int64 // requests of a full batch in count mode

	// measureFrom is the UnixNano end of the warm-up, 0 while warming up.
	measureFrom atomic.Int64
	// claimed counts requests taken in count mode.
	claimed atomic.Int64
	// stop asks workers not to start another request (duration mode).
	stop atomic.Bool

	// With --client raw: the payloads as whole HTTP requests, and the
	// address to dial.
	rawFull [][]byte
	rawLast []byte
	rawAddr string
}

// buildRaw turns the payloads into complete HTTP/1.1 requests.
func (l *publishLoad) buildRaw() error {
	for _, b := range l.payloads.full {
		req, addr, err := rawRequest(l.url, b)
		if err != nil {
			return err
		}
		l.rawFull, l.rawAddr = append(l.rawFull, req), addr
	}
	if l.payloads.lastN > 0 {
		req, _, err := rawRequest(l.url, l.payloads.last)
		if err != nil {
			return err
		}
		l.rawLast = req
	}
	return nil
}

type publishWorker struct {
	lat      []time.Duration
	msgs, ok int64
	failed   int64
	warm     int64
	errs     statusCounts
	firstErr string
	lastDone time.Time
	nextVar  int
}

func (l *publishLoad) run(ctx context.Context) PublishRun {
	if l.cfg.Warmup == 0 {
		// No warm-up: every request counts, the first ones included.
		l.measureFrom.Store(time.Now().UnixNano())
	}
	workers := make([]*publishWorker, l.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range workers {
		w := &publishWorker{errs: statusCounts{}, nextVar: i}
		workers[i] = w
		wg.Go(func() { l.work(ctx, w) })
	}

	// The pacing goroutine is this one: warm-up, then (duration mode) the
	// measured time, each one timer; count mode ends when the claims run out.
	start := time.Unix(0, l.measureFrom.Load())
	cpu0 := processCPU()
	srv0, srvOK := pidCPU(l.cfg.ServerPID)
	if l.cfg.Warmup > 0 {
		sleepCtx(ctx, l.cfg.Warmup)
		cpu0 = processCPU()
		srv0, srvOK = pidCPU(l.cfg.ServerPID)
		start = time.Now()
		l.measureFrom.Store(start.UnixNano())
	}
	if l.cfg.Count == 0 {
		sleepCtx(ctx, l.cfg.Duration)
		l.stop.Store(true)
	}
	wg.Wait()
	cpu, wall := processCPU()-cpu0, time.Since(start)
	srv1, srv1OK := pidCPU(l.cfg.ServerPID)

	res := PublishRun{Errors: statusCounts{}}
	var lat []time.Duration
	end := start
	for _, w := range workers {
		lat = append(lat, w.lat...)
		res.Messages += w.msgs
		res.Requests += w.ok
		res.Failed += w.failed
		res.WarmupTotal += w.warm
		res.Errors.merge(w.errs)
		if res.FirstError == "" {
			res.FirstError = w.firstErr
		}
		if w.lastDone.After(end) {
			end = w.lastDone
		}
	}
	if len(res.Errors) == 0 {
		res.Errors = nil
	}
	elapsed := end.Sub(start)
	res.ElapsedSec = elapsed.Seconds()
	res.MsgsPerSec = rate(float64(res.Messages), elapsed)
	res.MBPerSec = rate(float64(res.Messages)*float64(l.cfg.Size)/1e6, elapsed)
	res.ReqsPerSec = rate(float64(res.Requests), elapsed)
	res.Latency = summarize(lat)
	if wall > 0 {
		res.ClientCPU = cpu.Seconds() / wall.Seconds()
		if l.cfg.ServerPID > 0 && srvOK && srv1OK {
			res.ServerCPU = (srv1 - srv0).Seconds() / wall.Seconds()
		}
	}
	return res
}

// work is one client: one request in flight at a time, closed loop.
func (l *publishLoad) work(ctx context.Context, w *publishWorker) {
	var raw *rawConn
	if l.rawFull != nil {
		raw = &rawConn{addr: l.rawAddr, timeout: l.cfg.Timeout}
		defer raw.close()
	}
	for ctx.Err() == nil && !l.stop.Load() {
		v := w.nextVar % len(l.payloads.full)
		w.nextVar++
		last, n := false, l.cfg.Batch
		measured := l.measureFrom.Load() != 0
		if measured && l.cfg.Count > 0 {
			k := l.claimed.Add(1)
			switch {
			case k <= l.fullReqs:
			case k == l.fullReqs+1 && l.payloads.lastN > 0:
				last, n = true, l.payloads.lastN
			default:
				return
			}
		}
		t0 := time.Now()
		var status int
		var err error
		switch {
		case raw != nil && last:
			status, err = raw.do(ctx, l.rawLast)
		case raw != nil:
			status, err = raw.do(ctx, l.rawFull[v])
		case last:
			status, err = post(ctx, l.client, l.url, l.payloads.last)
		default:
			status, err = post(ctx, l.client, l.url, l.payloads.full[v])
		}
		done := time.Now()
		if !measured {
			w.warm++
			continue
		}
		if ctx.Err() != nil {
			return // interrupted: this answer is not the server's
		}
		w.lastDone = done
		if err == nil && status == http.StatusCreated {
			w.ok++
			w.msgs += int64(n)
			w.lat = append(w.lat, done.Sub(t0))
			continue
		}
		w.failed++
		w.errs.add(status, 1)
		if status == 0 {
			// Refused or reset: do not spin on a server that is gone.
			sleepCtx(ctx, errorBackoff)
		}
		if w.firstErr == "" {
			if err != nil {
				w.firstErr = err.Error()
			} else {
				w.firstErr = fmt.Sprintf("status %d", status) // a 2xx other than 201
			}
		}
	}
}

// sleepCtx waits d or until ctx ends, on one timer.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// medianRun is the per-field median of runs.
func medianRun(runs []PublishRun) PublishRun {
	if len(runs) == 0 {
		return PublishRun{}
	}
	f := func(get func(PublishRun) float64) float64 { return medianOf(runs, get) }
	n := func(get func(PublishRun) int64) int64 { return medianCount(runs, get) }
	return PublishRun{
		Target:     runs[0].Target,
		Messages:   n(func(r PublishRun) int64 { return r.Messages }),
		Requests:   n(func(r PublishRun) int64 { return r.Requests }),
		Failed:     n(func(r PublishRun) int64 { return r.Failed }),
		ElapsedSec: f(func(r PublishRun) float64 { return r.ElapsedSec }),
		MsgsPerSec: f(func(r PublishRun) float64 { return r.MsgsPerSec }),
		MBPerSec:   f(func(r PublishRun) float64 { return r.MBPerSec }),
		ReqsPerSec: f(func(r PublishRun) float64 { return r.ReqsPerSec }),
		Latency:    medianLatencyOf(runs, func(r PublishRun) LatencySummary { return r.Latency }),
		ClientCPU:  f(func(r PublishRun) float64 { return r.ClientCPU }),
		ServerCPU:  f(func(r PublishRun) float64 { return r.ServerCPU }),
	}
}

// describe is the configuration as printed in reports.
func (c publishConfig) describe() map[string]any {
	m := map[string]any{
		"url": c.URL, "topic": c.Topic, "concurrency": c.Concurrency,
		"size": c.Size, "binary": c.Binary, "batch": c.Batch,
		"warmupSec": c.Warmup.Seconds(), "runs": c.Runs, "client": c.Client,
	}
	if c.Delay.Level > 0 {
		m["delayLevel"] = c.Delay.Level
	}
	if c.Delay.Seconds > 0 {
		m["delaySeconds"] = c.Delay.Seconds
	}
	if c.Count > 0 {
		m["count"] = c.Count
	} else {
		m["durationSec"] = c.Duration.Seconds()
	}
	return m
}
