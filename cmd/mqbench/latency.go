package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
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
		"consumers": c.Consumers, "maxMessages": c.MaxMessages, "waitSeconds": c.WaitSeconds, "runs": c.Runs,
	}}
	for i := range c.Runs {
		r, err := runLatency(ctx, c)
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		rep.Runs = append(rep.Runs, r)
		if ctx.Err() != nil {
			break
		}
	}
	rep.Median = medianLatencyRun(rep.Runs)
	return rep.write(stdout, c.JSON)
}

// LatencyRun is what one latency run measured.
type LatencyRun struct {
	Topic string `json:"topic"`
	Group string `json:"group"`
	// Published counts 201s over the whole run, warm-up included;
	// Measured those sent after the warm-up.
	Published   int64          `json:"published"`
	Measured    int64          `json:"measured"`
	PublishRate float64        `json:"publishRate"` // achieved, msgs/s, after the warm-up
	Late        int64          `json:"late"`        // publishes that started >10ms after their slot
	Received    int64          `json:"received"`    // distinct messages received
	Duplicates  int64          `json:"duplicates"`
	Missing     int64          `json:"missing"`  // published, not received by the end of the drain
	EndToEnd    LatencySummary `json:"endToEnd"` // publish→receive, measured messages
	// AfterPublish is from the publish's 201 to the receive's answer: the
	// consume path alone, without the durable commit (0 when the receive
	// came first, which the long poll allows).
	AfterPublish   LatencySummary   `json:"afterPublish"`
	PublishLatency LatencySummary   `json:"publishLatency"` // per publish request
	AckStatus      map[string]int64 `json:"ackStatus"`
	Errors         statusCounts     `json:"errors,omitempty"`
	FirstError     string           `json:"firstError,omitempty"`
}

// latencyTracker records first deliveries; drained is closed once every
// message published so far has been received and publishing is over.
type latencyTracker struct {
	measureFrom atomic.Int64 // unix ns; messages sent before are warm-up

	mu   sync.Mutex
	seen map[string]struct{}
	dups int64
	e2e  []time.Duration
	// answeredAt and recvAt hold, per measured message id, whichever of
	// its publish answer and its first receive came first; afterPub gets
	// the difference when the other one arrives.
	answeredAt map[string]time.Time
	recvAt     map[string]time.Time
	afterPub   []time.Duration
	published  int64 // final count, valid once publishingDone
	pubDone    bool
	drained    chan struct{}
	closed     bool
}

func (t *latencyTracker) received(msgs []receivedMessage, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range msgs {
		if _, dup := t.seen[m.MessageID]; dup {
			t.dups++
			continue
		}
		t.seen[m.MessageID] = struct{}{}
		sent, err := strconv.ParseInt(m.Properties[propSentAt], 10, 64)
		if err == nil && m.Properties[propWarmup] == "" {
			t.e2e = append(t.e2e, at.Sub(time.Unix(0, sent)))
			if ans, ok := t.answeredAt[m.MessageID]; ok {
				t.afterPub = append(t.afterPub, max(at.Sub(ans), 0))
				delete(t.answeredAt, m.MessageID)
			} else {
				t.recvAt[m.MessageID] = at
			}
		}
	}
	t.checkDrained()
}

// answered is told of a measured message's publish answer.
func (t *latencyTracker) answered(id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if recv, ok := t.recvAt[id]; ok {
		t.afterPub = append(t.afterPub, max(recv.Sub(at), 0))
		delete(t.recvAt, id)
		return
	}
	t.answeredAt[id] = at
}

func newLatencyTracker() *latencyTracker {
	return &latencyTracker{seen: map[string]struct{}{}, drained: make(chan struct{}),
		answeredAt: map[string]time.Time{}, recvAt: map[string]time.Time{}}
}

func (t *latencyTracker) publishingDone(published int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.published, t.pubDone = published, true
	t.checkDrained()
}

func (t *latencyTracker) checkDrained() {
	if t.pubDone && !t.closed && int64(len(t.seen)) >= t.published {
		t.closed = true
		close(t.drained)
	}
}

func runLatency(ctx context.Context, c latencyConfig) (LatencyRun, error) {
	id := runID()
	topic, group := c.Topic, c.Group
	if topic == "" {
		topic = "mqbench-latency-" + id
	}
	if group == "" {
		group = "mqbench-" + id
	}
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
	var stop atomic.Bool
	recvs := make([]*receiver, c.Consumers)
	var recvWG sync.WaitGroup
	for i := range recvs {
		r := &receiver{client: client, base: c.URL, group: group, stop: &stop,
			request:   receiveRequest{MaxMessages: c.MaxMessages, WaitSeconds: c.WaitSeconds},
			onReceive: tr.received}
		recvs[i] = r
		recvWG.Go(func() { r.loop(recvCtx) })
	}

	paced := runPaced(ctx, pacedConfig{client: client, url: topicURL(c.URL, topic, "/messages"),
		size: c.Size, rate: c.Rate, warmup: c.Warmup, duration: c.Duration, conc: c.PubConc,
		measureFrom: &tr.measureFrom, onAnswered: tr.answered})
	published := paced.published
	tr.publishingDone(published)
	drain := time.NewTimer(c.Drain)
	select {
	case <-tr.drained:
	case <-drain.C:
	case <-ctx.Done():
	}
	drain.Stop()
	stop.Store(true)
	cancelRecv()
	recvWG.Wait()

	run.Errors = statusCounts{}
	run.Errors.merge(paced.errs)
	run.FirstError = paced.firstErr
	run.Measured, run.Late = paced.measured, paced.late
	run.PublishRate = paced.rate
	run.PublishLatency = summarize(paced.lat)
	var st receiverStats
	for _, r := range recvs {
		st.merge(&r.stats)
	}
	run.Errors.merge(st.errs)
	if len(run.Errors) == 0 {
		run.Errors = nil
	}
	if run.FirstError == "" {
		run.FirstError = st.firstErr
	}
	run.Published = published
	run.AckStatus = st.ackStatus
	tr.mu.Lock()
	run.Received = int64(len(tr.seen))
	run.Duplicates = tr.dups
	run.EndToEnd = summarize(tr.e2e)
	run.AfterPublish = summarize(tr.afterPub)
	tr.mu.Unlock()
	run.Missing = max(run.Published-run.Received, 0)
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
	if len(runs) == 0 {
		return LatencyRun{}
	}
	f := func(get func(LatencyRun) float64) float64 { return medianOf(runs, get) }
	e2e := make([]LatencySummary, len(runs))
	pub := make([]LatencySummary, len(runs))
	after := make([]LatencySummary, len(runs))
	for i, r := range runs {
		e2e[i], pub[i], after[i] = r.EndToEnd, r.PublishLatency, r.AfterPublish
	}
	return LatencyRun{
		AfterPublish:   medianLatency(after),
		Published:      int64(f(func(r LatencyRun) float64 { return float64(r.Published) })),
		Measured:       int64(f(func(r LatencyRun) float64 { return float64(r.Measured) })),
		PublishRate:    f(func(r LatencyRun) float64 { return r.PublishRate }),
		Late:           int64(f(func(r LatencyRun) float64 { return float64(r.Late) })),
		Received:       int64(f(func(r LatencyRun) float64 { return float64(r.Received) })),
		Duplicates:     int64(f(func(r LatencyRun) float64 { return float64(r.Duplicates) })),
		Missing:        int64(f(func(r LatencyRun) float64 { return float64(r.Missing) })),
		EndToEnd:       medianLatency(e2e),
		PublishLatency: medianLatency(pub),
	}
}

func (r LatencyReport) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	writeConfig(w, r.Config)
	tw := newTable(w)
	fmt.Fprintln(tw, "\tpub msgs/s\te2e p50\te2e p90\te2e p99\te2e max\tpub p50\tpub p99\tafter-pub p50\tafter-pub p99\tmeasured\tmissing\tdup\tlate\terrors\t")
	row := func(name string, l LatencyRun) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%s\t\n", name,
			l.PublishRate, l.EndToEnd.P50Ms, l.EndToEnd.P90Ms, l.EndToEnd.P99Ms, l.EndToEnd.MaxMs,
			l.PublishLatency.P50Ms, l.PublishLatency.P99Ms, l.AfterPublish.P50Ms, l.AfterPublish.P99Ms,
			l.EndToEnd.Count, l.Missing, l.Duplicates, l.Late, l.Errors)
	}
	for i, l := range r.Runs {
		row(fmt.Sprintf("run %d", i+1), l)
	}
	if len(r.Runs) > 1 {
		row("median", r.Median)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, l := range r.Runs {
		if l.FirstError != "" {
			fmt.Fprintf(w, "run %d first error: %s\n", i+1, l.FirstError)
		}
	}
	fmt.Fprintln(w, "(latencies in ms; e2e = publish request start to receive answer; pub = the publish request;")
	fmt.Fprintln(w, " after-pub = publish answered to receive answer, the consume path without the commit)")
	return nil
}
