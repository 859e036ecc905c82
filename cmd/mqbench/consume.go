package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"
)

// consume measures receive+ack throughput (issue 4): it pre-publishes
// --count messages, creates a CLUSTERING group from FIRST_OFFSET, and times
// N consumers draining it, each receive followed by one ack of its handles.

type consumeConfig struct {
	URL         string
	Topic       string
	Group       string
	Queues      int
	Count       int
	Size        int
	Binary      bool
	Consumers   int
	MaxMessages int
	WaitSeconds int
	PubConc     int
	PubBatch    int
	Timeout     time.Duration
	RunTimeout  time.Duration
	AckBatch    int
	Client      string
	Runs        int
	KeepGroup   bool
	JSON        bool
	// ServerPID, when set, is the server on this machine whose CPU the
	// consume phase (not the pre-publish) is charged with.
	ServerPID int
}

func consumeMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("consume", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c consumeConfig
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "gateway base URL")
	fs.StringVar(&c.Topic, "topic", "", "topic (default: mqbench-consume-<random>, new each run)")
	fs.StringVar(&c.Group, "group", "", "group (default: mqbench-<random>, new each run)")
	fs.IntVar(&c.Queues, "queues", 8, "queues of the topic")
	fs.IntVar(&c.Count, "count", 20000, "messages to pre-publish and consume")
	fs.IntVar(&c.Size, "size", 1024, "message body bytes")
	fs.BoolVar(&c.Binary, "binary", false, "publish bytes (bodyBase64) instead of text")
	fs.IntVar(&c.Consumers, "consumers", 8, "concurrent receive+ack loops")
	fs.IntVar(&c.MaxMessages, "max-messages", 32, "maxMessages per receive (1..32)")
	fs.IntVar(&c.AckBatch, "ack-batch", 0, "handles per ack request: 0 acks each receive's handles in one request, 1 sends one ack per message")
	fs.StringVar(&c.Client, "client", "raw", "HTTP client of the consumers: raw (one lean HTTP/1.1 connection each), std (net/http) or h2c (one cleartext HTTP/2 connection all share; the gateway needs --h2c)")
	fs.IntVar(&c.WaitSeconds, "wait", 1, "waitSeconds per receive (long poll)")
	fs.IntVar(&c.PubConc, "publish-concurrency", 16, "clients for the pre-publish")
	fs.IntVar(&c.PubBatch, "publish-batch", 100, "batch size of the pre-publish")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.DurationVar(&c.RunTimeout, "run-timeout", 2*time.Minute, "give up on a run that has not acked every message by then")
	fs.IntVar(&c.Runs, "runs", 1, "runs (each on a fresh topic and group); the report gives their medians")
	fs.BoolVar(&c.KeepGroup, "keep-group", false, "do not delete the group after the run")
	fs.BoolVar(&c.JSON, "json", false, "print JSON instead of a table")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "pid of the server on this machine, to report the CPU it spent per acked message during the consume phase")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.Count < 1:
		return usagef("--count must be at least 1")
	case c.Consumers < 1:
		return usagef("--consumers must be at least 1")
	case c.MaxMessages < 1 || c.MaxMessages > 32:
		return usagef("--max-messages must be 1..32")
	case c.AckBatch < 0 || c.AckBatch > 100:
		return usagef("--ack-batch must be 0..100")
	case c.WaitSeconds < 0 || c.WaitSeconds > 30:
		return usagef("--wait must be 0..30")
	case c.Runs < 1:
		return usagef("--runs must be at least 1")
	}
	rep := ConsumeReport{Mode: "consume", Config: map[string]any{
		"url": c.URL, "count": c.Count, "size": c.Size, "consumers": c.Consumers,
		"maxMessages": c.MaxMessages, "ackBatch": c.AckBatch, "waitSeconds": c.WaitSeconds, "runs": c.Runs, "client": c.Client,
	}}
	runs, err := repeatRuns(ctx, c.Runs, func(ctx context.Context) (ConsumeRun, error) { return runConsume(ctx, c) })
	if err != nil {
		return err
	}
	rep.Runs, rep.Median = runs, medianConsume(runs)
	return rep.write(stdout, c.JSON)
}

// ConsumeRun is what one consume run measured.
type ConsumeRun struct {
	Topic             string  `json:"topic"`
	Group             string  `json:"group"`
	PublishMsgsPerSec float64 `json:"publishMsgsPerSec"` // the pre-publish, for scale
	// Deliveries counts every message a receive returned, Unique the
	// distinct message ids among them; Duplicates is the difference.
	Deliveries     int64            `json:"deliveries"`
	Unique         int64            `json:"unique"`
	Duplicates     int64            `json:"duplicates"`
	Acked          int64            `json:"acked"`   // distinct ids acked "ok"
	Missing        int64            `json:"missing"` // published but never acked
	ElapsedSec     float64          `json:"elapsedSec"`
	AckedPerSec    float64          `json:"ackedPerSec"`
	ReceivedPerSec float64          `json:"receivedPerSec"`
	Receives       int64            `json:"receives"`
	EmptyReceives  int64            `json:"emptyReceives"`
	ReceiveLatency LatencySummary   `json:"receiveLatency"` // per receive request
	AckLatency     LatencySummary   `json:"ackLatency"`     // per ack request
	AckStatus      map[string]int64 `json:"ackStatus"`
	Errors         statusCounts     `json:"errors,omitempty"`
	FirstError     string           `json:"firstError,omitempty"`
	TimedOut       bool             `json:"timedOut,omitempty"`
	// ServerCPU is the cores the server (--server-pid) used during the
	// consume phase; ServerCPUPerMsgUs is its CPU per acked message in
	// microseconds, the figure that survives a noisy host better than
	// msgs/s.
	ServerCPU         float64 `json:"serverCpuCores,omitempty"`
	ServerCPUPerMsgUs float64 `json:"serverCpuPerMsgUs,omitempty"`
}

// consumeTracker follows which messages were delivered and acked; done is
// closed when every one of want has been acked.
type consumeTracker struct {
	mu     sync.Mutex
	want   int
	seen   map[string]*trackEntry // message id → what happened to it
	acked  int                    // distinct messages acked
	done   chan struct{}
	doneAt time.Time
}

// trackEntry is one message's record. A stream consumer keeps the entry
// its delivery returned and hands it back with the ack's answer, so the
// ack costs no second look-up by id: with a few hundred thousand ids the
// two map look-ups per message were a fifth of the benchmark client's CPU.
type trackEntry struct {
	deliveries int32
	acked      bool
}

func newConsumeTracker(want int) *consumeTracker {
	return &consumeTracker{want: want, seen: make(map[string]*trackEntry, want), done: make(chan struct{})}
}

func (t *consumeTracker) entryLocked(id string) *trackEntry {
	e := t.seen[id]
	if e == nil {
		e = &trackEntry{}
		t.seen[id] = e
	}
	return e
}

func (t *consumeTracker) received(msgs []receivedMessage, _ time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range msgs {
		t.entryLocked(m.MessageID).deliveries++
	}
}

// delivered records one delivery of id and returns its entry for ackedEntry.
func (t *consumeTracker) delivered(id string) *trackEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entryLocked(id)
	e.deliveries++
	return e
}

func (t *consumeTracker) ackedOK(m receivedMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ackLocked(t.entryLocked(m.MessageID))
}

// ackedEntry records the ok answer to an ack of the message delivered
// returned e for.
func (t *consumeTracker) ackedEntry(e *trackEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ackLocked(e)
}

func (t *consumeTracker) ackLocked(e *trackEntry) {
	if e.acked {
		return
	}
	e.acked = true
	t.acked++
	if t.acked == t.want {
		t.doneAt = time.Now()
		close(t.done)
	}
}

func runConsume(ctx context.Context, c consumeConfig) (ConsumeRun, error) {
	topic, group := runNames(c.Topic, c.Group, "mqbench-consume-", "mqbench-")
	run := ConsumeRun{Topic: topic, Group: group}

	pub, err := runPublish(ctx, publishConfig{URL: c.URL, Topic: topic, Queues: c.Queues,
		Concurrency: c.PubConc, Size: c.Size, Binary: c.Binary, Batch: c.PubBatch,
		Count: c.Count, Timeout: c.Timeout}, "gateway")
	if err != nil {
		return run, fmt.Errorf("pre-publish: %w", err)
	}
	if pub.Messages != int64(c.Count) {
		return run, fmt.Errorf("pre-publish: %d of %d messages published (%s; %s)", pub.Messages, c.Count, pub.Errors, pub.FirstError)
	}
	run.PublishMsgsPerSec = pub.MsgsPerSec
	return consumeGroup(ctx, c, run)
}

// consumeGroup creates run.Group on run.Topic (which holds c.Count
// messages) and times c.Consumers draining it; streams runs it on a topic
// it filled itself.
func consumeGroup(ctx context.Context, c consumeConfig, run ConsumeRun) (ConsumeRun, error) {
	group, topic := run.Group, run.Topic
	client := newClient(c.Consumers, pollTimeout(c.Timeout, c.WaitSeconds))
	defer closeClient(client)
	if err := ensureGroup(ctx, client, c.URL, group, topic); err != nil {
		return run, err
	}
	if !c.KeepGroup {
		defer deleteGroup(client, c.URL, group)
	}

	tr := newConsumeTracker(c.Count)
	srv0, srvOK := pidCPU(c.ServerPID)
	start := time.Now()
	posters, err := newPosters(c.Client, c.URL, client, pollTimeout(c.Timeout, c.WaitSeconds))
	if err != nil {
		return run, err
	}
	recvs := startReceivers(ctx, c.Consumers, posters, c.URL, group,
		receiveRequest{MaxMessages: c.MaxMessages, WaitSeconds: c.WaitSeconds}, c.AckBatch, tr.received, tr.ackedOK)
	deadline := time.NewTimer(c.RunTimeout)
	select {
	case <-tr.done:
	case <-deadline.C:
		run.TimedOut = true
	case <-ctx.Done():
	}
	deadline.Stop()
	// The server's CPU is read before the receivers' last long polls end,
	// so idle waiting after the last ack is not charged to the run.
	srv1, srv1OK := pidCPU(c.ServerPID)
	srvWall := time.Since(start)
	// Graceful: each receiver ends after its current long poll.
	st := recvs.stopAndMerge(nil)
	tr.mu.Lock()
	end := tr.doneAt
	if end.IsZero() {
		end = time.Now()
	}
	run.Unique = int64(len(tr.seen))
	run.Acked = int64(tr.acked)
	tr.mu.Unlock()
	elapsed := end.Sub(start)
	run.Deliveries = st.deliveries
	run.Duplicates = run.Deliveries - run.Unique
	run.Missing = int64(c.Count) - run.Acked
	run.ElapsedSec = elapsed.Seconds()
	run.AckedPerSec = rate(float64(run.Acked), elapsed)
	run.ReceivedPerSec = rate(float64(run.Deliveries), elapsed)
	run.Receives, run.EmptyReceives = st.receives, st.emptyReceives
	run.ReceiveLatency = summarize(st.receiveLat)
	run.AckLatency = summarize(st.ackLat)
	run.AckStatus = st.ackStatus
	if len(st.errs) > 0 {
		run.Errors = st.errs
	}
	run.FirstError = st.firstErr
	if c.ServerPID > 0 && srvOK && srv1OK {
		used := srv1 - srv0
		run.ServerCPU = used.Seconds() / srvWall.Seconds()
		if run.Acked > 0 {
			run.ServerCPUPerMsgUs = float64(used.Microseconds()) / float64(run.Acked)
		}
	}
	return run, nil
}

// ConsumeReport is the output of consume.
type ConsumeReport struct {
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config"`
	Runs   []ConsumeRun   `json:"runs"`
	Median ConsumeRun     `json:"median"`
}

func medianConsume(runs []ConsumeRun) ConsumeRun {
	if len(runs) == 0 {
		return ConsumeRun{}
	}
	f := func(get func(ConsumeRun) float64) float64 { return medianOf(runs, get) }
	n := func(get func(ConsumeRun) int64) int64 { return medianCount(runs, get) }
	return ConsumeRun{
		PublishMsgsPerSec: f(func(r ConsumeRun) float64 { return r.PublishMsgsPerSec }),
		Deliveries:        n(func(r ConsumeRun) int64 { return r.Deliveries }),
		Unique:            n(func(r ConsumeRun) int64 { return r.Unique }),
		Duplicates:        n(func(r ConsumeRun) int64 { return r.Duplicates }),
		Acked:             n(func(r ConsumeRun) int64 { return r.Acked }),
		Missing:           n(func(r ConsumeRun) int64 { return r.Missing }),
		ElapsedSec:        f(func(r ConsumeRun) float64 { return r.ElapsedSec }),
		AckedPerSec:       f(func(r ConsumeRun) float64 { return r.AckedPerSec }),
		ReceivedPerSec:    f(func(r ConsumeRun) float64 { return r.ReceivedPerSec }),
		Receives:          n(func(r ConsumeRun) int64 { return r.Receives }),
		EmptyReceives:     n(func(r ConsumeRun) int64 { return r.EmptyReceives }),
		ReceiveLatency:    medianLatencyOf(runs, func(r ConsumeRun) LatencySummary { return r.ReceiveLatency }),
		AckLatency:        medianLatencyOf(runs, func(r ConsumeRun) LatencySummary { return r.AckLatency }),
		ServerCPU:         f(func(r ConsumeRun) float64 { return r.ServerCPU }),
		ServerCPUPerMsgUs: f(func(r ConsumeRun) float64 { return r.ServerCPUPerMsgUs }),
	}
}

func (r ConsumeReport) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	writeConfig(w, r.Config)
	tw := newTable(w)
	fmt.Fprintln(tw, "\tacked/s\treceived/s\tdup\tmissing\trecv p50\trecv p99\tack p50\tack p99\tempty recv\tpub msgs/s\tserver cpu\tcpu/msg µs\terrors\t")
	err := writeRunRows(tw, r.Runs, r.Median, func(name string, c ConsumeRun) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%.0f\t%s\t%s\t%s\t\n", name,
			c.AckedPerSec, c.ReceivedPerSec, c.Duplicates, c.Missing,
			c.ReceiveLatency.P50Ms, c.ReceiveLatency.P99Ms, c.AckLatency.P50Ms, c.AckLatency.P99Ms,
			c.EmptyReceives, c.PublishMsgsPerSec, cores(c.ServerCPU), perMsg(c.ServerCPUPerMsgUs), c.Errors)
	})
	if err != nil {
		return err
	}
	for i, c := range r.Runs {
		if c.TimedOut {
			fmt.Fprintf(w, "run %d timed out with %d messages unacked\n", i+1, c.Missing)
		}
		if c.FirstError != "" {
			fmt.Fprintf(w, "run %d first error: %s\n", i+1, c.FirstError)
		}
	}
	fmt.Fprintln(w, "(latencies in ms, per request)")
	return nil
}
