package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"
)

// latency measures publish→receive time (issue 4): receivers long-poll a
// fresh group while messages are published at a fixed rate, each carrying
// its send time in a property; a message's latency is from just before
// its publish request to the answer of the receive that returned it. Both
// clocks are this process's, so no clock skew enters.

type latencyConfig struct {
	URL         string
	Topic       string
	Group       string
	Queues      int
	Rate        int
	Duration    time.Duration
	Warmup      time.Duration
	Drain       time.Duration
	Size        int
	Consumers   int
	MaxMessages int
	WaitSeconds int
	PubConc     int
	Client      string
	Timeout     time.Duration
	Runs        int
	KeepGroup   bool
	JSON        bool
}

func latencyMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("latency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c latencyConfig
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "gateway base URL")
	fs.StringVar(&c.Topic, "topic", "", "topic (default: mqbench-latency-<random>, new each run)")
	fs.StringVar(&c.Group, "group", "", "group (default: mqbench-<random>, new each run)")
	fs.IntVar(&c.Queues, "queues", 8, "queues of the topic")
	fs.IntVar(&c.Rate, "rate", 1000, "messages per second, spread evenly")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured publishing time")
	fs.DurationVar(&c.Warmup, "warmup", 2*time.Second, "publishing before measuring (consumed, not counted)")
	fs.DurationVar(&c.Drain, "drain", 10*time.Second, "how long to wait after the last publish for the last receives")
	fs.IntVar(&c.Size, "size", 1024, "message body bytes")
	fs.IntVar(&c.Consumers, "consumers", 4, "concurrent receive+ack loops")
	fs.IntVar(&c.MaxMessages, "max-messages", 32, "maxMessages per receive (1..32)")
	fs.IntVar(&c.WaitSeconds, "wait", 5, "waitSeconds per receive (long poll)")
	fs.StringVar(&c.Client, "client", "raw", "HTTP client of the publishers and consumers: raw (one lean HTTP/1.1 connection each) or std (net/http)")
	fs.IntVar(&c.PubConc, "publish-concurrency", 128, "publish requests that may be in flight at once (enough to ride out a stall without falling behind)")
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
	case c.Consumers < 1 || c.PubConc < 1:
		return usagef("--consumers and --publish-concurrency must be at least 1")
	case c.MaxMessages < 1 || c.MaxMessages > 32:
		return usagef("--max-messages must be 1..32")
	case c.WaitSeconds < 0 || c.WaitSeconds > 30:
		return usagef("--wait must be 0..30")
	case c.Runs < 1:
		return usagef("--runs must be at least 1")
	}
	rep := LatencyReport{Mode: "latency", Config: map[string]any{
		"url": c.URL, "rate": c.Rate, "durationSec": c.Duration.Seconds(), "size": c.Size,
		"consumers": c.Consumers, "maxMessages": c.MaxMessages, "waitSeconds": c.WaitSeconds, "runs": c.Runs, "client": c.Client,
	}}
	runs, err := repeatRuns(ctx, c.Runs, func(ctx context.Context) (LatencyRun, error) { return runLatency(ctx, c) })
	if err != nil {
		return err
	}
	rep.Runs, rep.Median = runs, medianLatencyRun(runs)
	return rep.write(stdout, c.JSON)
}

// LatencyRun is what one latency run measured.
type LatencyRun struct {
	Topic string `json:"topic"`
	Group string `json:"group"`
	PacedStats
	Received   int64            `json:"received"` // distinct messages received
	AckStatus  map[string]int64 `json:"ackStatus"`
	Errors     statusCounts     `json:"errors,omitempty"`
	FirstError string           `json:"firstError,omitempty"`
}

func runLatency(ctx context.Context, c latencyConfig) (LatencyRun, error) {
	topic, group := runNames(c.Topic, c.Group, "mqbench-latency-", "mqbench-")
	run := LatencyRun{Topic: topic, Group: group}
	client := newClient(c.Consumers+c.PubConc, pollTimeout(c.Timeout, c.WaitSeconds))
	defer closeClient(client)
	if err := ensureTopic(ctx, client, c.URL, topic, c.Queues); err != nil {
		return run, fmt.Errorf("create topic: %w", err)
	}
	if err := ensureGroup(ctx, client, c.URL, group, topic); err != nil {
		return run, err
	}
	if !c.KeepGroup {
		defer deleteGroup(client, c.URL, group)
	}

	// Receivers first, so they are parked in a long poll when the first
	// message lands; they are cancelled (not stopped gracefully) at the
	// end, because by then every message has been received.
	tr := newLatencyTracker()
	recvCtx, cancelRecv := context.WithCancel(ctx)
	defer cancelRecv()
	posters, err := newPosters(c.Client, c.URL, client, pollTimeout(c.Timeout, c.WaitSeconds))
	if err != nil {
		return run, err
	}
	recvs := startReceivers(recvCtx, c.Consumers, posters, c.URL, group,
		receiveRequest{MaxMessages: c.MaxMessages, WaitSeconds: c.WaitSeconds}, 0, tr.received, nil)

	paced := publishAndDrain(ctx, posters, pacedLoad{url: c.URL, topic: topic, size: c.Size, rate: c.Rate,
		warmup: c.Warmup, duration: c.Duration, conc: c.PubConc, drain: c.Drain}, tr)
	st := recvs.stopAndMerge(cancelRecv)

	run.Errors = statusCounts{}
	run.Errors.merge(paced.errs)
	run.FirstError = paced.firstErr
	run.Errors.merge(st.errs)
	if len(run.Errors) == 0 {
		run.Errors = nil
	}
	if run.FirstError == "" {
		run.FirstError = st.firstErr
	}
	run.AckStatus = st.ackStatus
	run.PacedStats, run.Received = newPacedStats(paced, tr.summary())
	return run, nil
}

// LatencyReport is the output of latency.
type LatencyReport struct {
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config"`
	Runs   []LatencyRun   `json:"runs"`
	Median LatencyRun     `json:"median"`
}

func medianLatencyRun(runs []LatencyRun) LatencyRun {
	return LatencyRun{
		PacedStats: medianPaced(runs, func(r LatencyRun) PacedStats { return r.PacedStats }),
		Received:   medianCount(runs, func(r LatencyRun) int64 { return r.Received }),
	}
}

func (r LatencyReport) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	writeConfig(w, r.Config)
	tw := newTable(w)
	fmt.Fprintln(tw, "\tpub msgs/s\te2e p50\te2e p90\te2e p99\te2e max\tpub p50\tpub p99\tafter-pub p50\tafter-pub p99\tmeasured\tmissing\tdup\tlate\terrors\t")
	err := writeRunRows(tw, r.Runs, r.Median, func(name string, l LatencyRun) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%s\t\n", name,
			l.PublishRate, l.EndToEnd.P50Ms, l.EndToEnd.P90Ms, l.EndToEnd.P99Ms, l.EndToEnd.MaxMs,
			l.PublishLatency.P50Ms, l.PublishLatency.P99Ms, l.AfterPublish.P50Ms, l.AfterPublish.P99Ms,
			l.EndToEnd.Count, l.Missing, l.Duplicates, l.Late, l.Errors)
	})
	if err != nil {
		return err
	}
	writeRunErrors(w, r.Runs, func(l LatencyRun) string { return l.FirstError })
	fmt.Fprintln(w, "(latencies in ms; e2e = publish request start to receive answer; pub = the publish request;")
	fmt.Fprintln(w, " after-pub = publish answered to receive answer, the consume path without the commit)")
	return nil
}
