package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// webhook measures push delivery (issue 6): mqbench runs the webhook
// receiver itself, creates a push group pointing at it, publishes at a
// fixed rate and measures publish→webhook time per message. Every
// request's Standard Webhooks signature is checked against the secret the
// group was given; a bad one is answered 401 and counted.
//
// The gateway refuses loopback destinations by default (SSRF guard): start
// it with --webhook-allow-loopback, or pass --hook-host with an address of
// this machine that the gateway may reach.

type webhookConfig struct {
	URL         string
	Topic       string
	Group       string
	Queues      int
	Listen      string
	HookHost    string
	Rate        int
	Duration    time.Duration
	Warmup      time.Duration
	Drain       time.Duration
	Size        int
	MaxInFlight int
	PubConc     int
	Timeout     time.Duration
	Runs        int
	KeepGroup   bool
	JSON        bool
}

func webhookMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c webhookConfig
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "gateway base URL")
	fs.StringVar(&c.Topic, "topic", "", "topic (default: mqbench-webhook-<random>, new each run)")
	fs.StringVar(&c.Group, "group", "", "push group (default: mqbench-push-<random>, new each run)")
	fs.IntVar(&c.Queues, "queues", 8, "queues of the topic")
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:0", "address of mqbench's webhook receiver")
	fs.StringVar(&c.HookHost, "hook-host", "", "host:port the gateway should call (default: the receiver's listen address)")
	fs.IntVar(&c.Rate, "rate", 1000, "messages per second, spread evenly")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured publishing time")
	fs.DurationVar(&c.Warmup, "warmup", 2*time.Second, "publishing before measuring (delivered, not counted)")
	fs.DurationVar(&c.Drain, "drain", 10*time.Second, "how long to wait after the last publish for the last deliveries")
	fs.IntVar(&c.Size, "size", 1024, "message body bytes")
	fs.IntVar(&c.MaxInFlight, "max-in-flight", 16, "push.maxInFlight of the group")
	fs.IntVar(&c.PubConc, "publish-concurrency", 128, "publish requests that may be in flight at once")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.IntVar(&c.Runs, "runs", 1, "runs (each on a fresh topic and group); the report gives their medians")
	fs.BoolVar(&c.KeepGroup, "keep-group", false, "do not delete the group after the run")
	fs.BoolVar(&c.JSON, "json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.Rate < 1:
		return usagef("--rate must be at least 1")
	case c.Duration <= 0:
		return usagef("--duration must be positive")
	case c.PubConc < 1 || c.MaxInFlight < 1:
		return usagef("--publish-concurrency and --max-in-flight must be at least 1")
	case c.Runs < 1:
		return usagef("--runs must be at least 1")
	}
	rep := WebhookReport{Mode: "webhook", Config: map[string]any{
		"url": c.URL, "rate": c.Rate, "durationSec": c.Duration.Seconds(), "size": c.Size,
		"maxInFlight": c.MaxInFlight, "runs": c.Runs,
	}}
	runs, err := repeatRuns(ctx, c.Runs, func(ctx context.Context) (WebhookRun, error) { return runWebhook(ctx, c) })
	if err != nil {
		return err
	}
	rep.Runs, rep.Median = runs, medianWebhookRun(runs)
	return rep.write(stdout, c.JSON)
}

// WebhookRun is what one webhook run measured.
type WebhookRun struct {
	Topic string `json:"topic"`
	Group string `json:"group"`
	PacedStats
	Delivered     int64        `json:"delivered"` // distinct messages
	Requests      int64        `json:"requests"`  // webhook requests received
	BadSignatures int64        `json:"badSignatures"`
	Errors        statusCounts `json:"errors,omitempty"`
	FirstError    string       `json:"firstError,omitempty"`
}

// hookReceiver is the webhook endpoint: it checks each request's
// signature and hands the messages to the tracker.
type hookReceiver struct {
	secret  []byte
	tracker *latencyTracker

	requests, badSig atomic.Int64
	mu               sync.Mutex
	firstBad         string
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<20))
	at := time.Now()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.requests.Add(1)
	if err := verifyWebhook(h.secret, r.Header, body); err != nil {
		h.badSig.Add(1)
		h.mu.Lock()
		if h.firstBad == "" {
			h.firstBad = err.Error()
		}
		h.mu.Unlock()
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var in receiveAnswer
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.tracker.received(in.Messages, at)
	w.WriteHeader(http.StatusNoContent)
}

// verifyWebhook checks a Standard Webhooks signature: one of the
// space-separated "v1,<base64>" entries of webhook-signature must be the
// HMAC-SHA256, keyed with the secret, of id "." timestamp "." body.
func verifyWebhook(key []byte, h http.Header, body []byte) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		v, ok := strings.CutPrefix(s, "v1,")
		if !ok {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(v)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no webhook-signature matches")
}

// newWebhookSecret is a Standard Webhooks secret: "whsec_" and the base64
// of 24 random bytes, which are the HMAC key.
func newWebhookSecret() (string, []byte) {
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	return "whsec_" + base64.StdEncoding.EncodeToString(key), key
}

func runWebhook(ctx context.Context, c webhookConfig) (run WebhookRun, err error) {
	run.Topic, run.Group = runNames(c.Topic, c.Group, "mqbench-webhook-", "mqbench-push-")
	secret, key := newWebhookSecret()
	tr := newLatencyTracker()
	hook := &hookReceiver{secret: key, tracker: tr}

	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return run, err
	}
	srv := &http.Server{Handler: hook, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, srv.Shutdown(shut))
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}()
	hookHost := c.HookHost
	if hookHost == "" {
		hookHost = ln.Addr().String()
	}

	client := newClient(c.PubConc, c.Timeout)
	defer closeClient(client)
	if err := ensureTopic(ctx, client, c.URL, run.Topic, c.Queues); err != nil {
		return run, fmt.Errorf("create topic: %w", err)
	}
	push := &pushSpec{URL: "http://" + hookHost + "/hook", MaxInFlight: c.MaxInFlight, Secret: secret}
	if err := putGroup(ctx, client, c.URL, run.Group, run.Topic, push); err != nil {
		return run, err
	}
	if !c.KeepGroup {
		// Deleted before the receiver closes (defers run last-in first-out),
		// so the gateway stops pushing to a live endpoint.
		defer deleteGroup(client, c.URL, run.Group)
	}

	paced := publishAndDrain(ctx, func() poster { return stdPoster{client} }, pacedLoad{url: c.URL, topic: run.Topic, size: c.Size, rate: c.Rate,
		warmup: c.Warmup, duration: c.Duration, conc: c.PubConc, drain: c.Drain}, tr)

	run.PacedStats, run.Delivered = newPacedStats(paced, tr.summary())
	run.Errors = paced.errs
	run.FirstError = paced.firstErr
	run.Requests, run.BadSignatures = hook.requests.Load(), hook.badSig.Load()
	hook.mu.Lock()
	if run.FirstError == "" && hook.firstBad != "" {
		run.FirstError = "webhook: " + hook.firstBad
	}
	hook.mu.Unlock()
	return run, nil
}

// WebhookReport is the output of webhook.
type WebhookReport struct {
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config"`
	Runs   []WebhookRun   `json:"runs"`
	Median WebhookRun     `json:"median"`
}

func medianWebhookRun(runs []WebhookRun) WebhookRun {
	n := func(get func(WebhookRun) int64) int64 { return medianCount(runs, get) }
	return WebhookRun{
		PacedStats:    medianPaced(runs, func(r WebhookRun) PacedStats { return r.PacedStats }),
		Delivered:     n(func(r WebhookRun) int64 { return r.Delivered }),
		Requests:      n(func(r WebhookRun) int64 { return r.Requests }),
		BadSignatures: n(func(r WebhookRun) int64 { return r.BadSignatures }),
	}
}

func (r WebhookReport) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	writeConfig(w, r.Config)
	tw := newTable(w)
	fmt.Fprintln(tw, "\tpub msgs/s\te2e p50\te2e p90\te2e p99\te2e max\tpub p99\tafter-pub p50\tafter-pub p99\tmeasured\tmissing\tdup\thook reqs\tbad sig\tlate\terrors\t")
	err := writeRunRows(tw, r.Runs, r.Median, func(name string, l WebhookRun) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name,
			l.PublishRate, l.EndToEnd.P50Ms, l.EndToEnd.P90Ms, l.EndToEnd.P99Ms, l.EndToEnd.MaxMs,
			l.PublishLatency.P99Ms, l.AfterPublish.P50Ms, l.AfterPublish.P99Ms, l.EndToEnd.Count, l.Missing, l.Duplicates, l.Requests, l.BadSignatures, l.Late, l.Errors)
	})
	if err != nil {
		return err
	}
	writeRunErrors(w, r.Runs, func(l WebhookRun) string { return l.FirstError })
	fmt.Fprintln(w, "(latencies in ms; e2e = publish request start to webhook arrival;")
	fmt.Fprintln(w, " after-pub = publish answered to webhook arrival, the push path without the commit)")
	return nil
}
