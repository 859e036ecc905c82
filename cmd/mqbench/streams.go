package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"
)

// streams measures the WebSocket streams (docs/streaming.md, issue 22)
// beside the REST calls they replace, in one run so the ratios are from
// the same machine state, in the shape of ../shared/peers: 32 producers
// publish --count × 1 KiB with one confirm per message, 4 consumers drain
// them with one ack per message (at most --max-outstanding unsettled on
// each stream, peers' prefetch 64), then publish→delivery at --rate
// msgs/s. Every case also reports the server's CPU per message
// (/proc/<pid>/stat of --server-pid, or of the gateway it started).
//
// Cases, each on its own group (the consume cases read the topic the
// stream publish filled):
//
//	publish stream     --producers publish streams, PublishWait per message
//	publish rest       --producers clients, POST .../messages per message
//	consume stream     --consumers consume streams, an ack per message (the
//	                   Go client gathers the acks given while its writer is
//	                   busy into one frame)
//	consume stream frame/ack  the same with an ack frame per message
//	                   (--frame-per-ack)
//	consume rest-ack1  --consumers receive 32 + POST ack per message
//	consume rest-batch --consumers receive 32 + one ack of the 32
//	consume rest-ack1 std  rest-ack1 on net/http over HTTP/1.1 (--h2c)
//	consume rest-ack1 h2c  rest-ack1 on net/http over one h2c connection (--h2c)
//	latency stream     paced stream publishes, stream consumers
//	latency rest       the latency mode (REST publish, long-poll receive)
//
// Rounds alternate which side goes first, as compare does.

type streamsConfig struct {
	URL            string
	GatewayBin     string
	GatewayArgs    string
	KeepData       bool
	ServerPID      int
	Key            string
	Queues         int
	Producers      int
	Window         int
	Count          int
	Size           int
	Consumers      int
	MaxOutstanding int
	Rate           int
	LatencyD       time.Duration
	Warmup         time.Duration
	Drain          time.Duration
	Timeout        time.Duration
	RunTimeout     time.Duration
	Runs           int
	Cases          string
	Peers          string
	JSON           bool
	CPUProfile     string
	H2C            bool
	NoREST         bool
	FramePerAck    bool
}

func streamsMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("streams", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c streamsConfig
	fs.StringVar(&c.URL, "url", "", "base URL of a running gateway (or --gateway-bin to start one)")
	fs.StringVar(&c.GatewayBin, "gateway-bin", "", "mqgate binary to start on a free port with a temp --data dir (go build ./cmd/mqgate)")
	fs.StringVar(&c.GatewayArgs, "gateway-args", "", "extra flags for the started gateway, space separated")
	fs.BoolVar(&c.KeepData, "keep-data", false, "keep the started gateway's data dir")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "pid of the --url gateway on this machine, for its CPU per message")
	fs.StringVar(&c.Key, "key", os.Getenv("MQGATE_KEY"), "API key of a --url gateway with keys (env MQGATE_KEY); streams only")
	fs.IntVar(&c.Queues, "queues", 8, "queues of each topic")
	fs.IntVar(&c.Producers, "producers", 32, "concurrent producers, each on its own publish stream (REST: its own client)")
	fs.IntVar(&c.Window, "window", 0, "publish stream: messages each producer has in flight, each with its own confirm (as AMQP publisher confirms); 0 leaves it to the Go client, which keeps the limit the stream states at open (maxUnconfirmedMessages, the server's default 1000); REST has one")
	fs.IntVar(&c.Count, "count", 30000, "messages each publish case stores (the consume cases drain the stream publish's)")
	fs.IntVar(&c.Size, "size", 1024, "message body bytes")
	fs.IntVar(&c.Consumers, "consumers", 4, "concurrent consumers")
	fs.IntVar(&c.MaxOutstanding, "max-outstanding", 64, "maxOutstandingMessages of each consume stream (peers' prefetch)")
	fs.IntVar(&c.Rate, "rate", 1000, "publishes per second of the latency cases")
	fs.DurationVar(&c.LatencyD, "latency-duration", 10*time.Second, "measured time of each latency case")
	fs.DurationVar(&c.Warmup, "latency-warmup", 2*time.Second, "warm-up of each latency case (not counted)")
	fs.DurationVar(&c.Drain, "drain", 10*time.Second, "latency: how long to wait after the last publish for the last deliveries")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.DurationVar(&c.RunTimeout, "run-timeout", 2*time.Minute, "give up on a case that has not finished by then")
	fs.IntVar(&c.Runs, "runs", 3, "rounds; the report gives each and their medians")
	fs.StringVar(&c.Cases, "cases", "publish,consume,latency", "which kinds of case to run (publish is needed for consume)")
	fs.StringVar(&c.Peers, "peers", "", "../shared/peers results (JSON lines) of the same session: report the issue's ratios to them")
	fs.BoolVar(&c.JSON, "json", false, "print JSON instead of a table")
	fs.BoolVar(&c.H2C, "h2c", false, "also run consume rest-ack1 over cleartext HTTP/2 (one connection, the requests multiplexed; the started gateway gets --h2c, a --url one must have it)")
	fs.BoolVar(&c.FramePerAck, "frame-per-ack", false, "also run the consume stream with the Go client's OneFramePerAck (every ack in a frame of its own, not gathered)")
	fs.BoolVar(&c.NoREST, "no-rest", false, "run only the stream cases (a profile of the streams alone; no ratios to REST)")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of this client process (the load generator) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.Producers < 1 || c.Consumers < 1:
		return usagef("--producers and --consumers must be at least 1")
	case c.Count < 1 || c.Runs < 1 || c.Rate < 1:
		return usagef("--count, --runs and --rate must be at least 1")
	case c.Window < 0 || c.Window > 10000:
		return usagef("--window must be 1..10000, or 0 for the stream's own limit")
	case c.MaxOutstanding < 1 || c.MaxOutstanding > 10000:
		return usagef("--max-outstanding must be 1..10000")
	case c.GatewayBin != "" && c.URL != "":
		return usagef("give --url of a running gateway or --gateway-bin to start one, not both")
	case c.GatewayBin == "" && c.URL == "":
		return usagef("need --url of a running gateway or --gateway-bin to start one")
	case c.has("consume") && !c.has("publish"):
		return usagef("--cases consume needs publish (it drains what the stream publish stored)")
	}
	var peers map[string]PeerMedian
	if c.Peers != "" {
		var err error
		if peers, err = readPeers(c.Peers); err != nil {
			return usagef("--peers: %v", err)
		}
	}
	if c.CPUProfile != "" {
		f, err := os.Create(c.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := runStreams(ctx, c, stderr)
	if err != nil && len(rep.Runs) == 0 {
		return err
	}
	if peers != nil {
		rep.Peers, rep.Targets = peers, peerTargets(rep.Median, peers)
	}
	if werr := rep.write(stdout, c.JSON); werr != nil {
		return werr
	}
	return err
}

func (c streamsConfig) has(kind string) bool {
	return strings.Contains(","+c.Cases+",", ","+kind+",")
}

// StreamCase is one case of one round.
type StreamCase struct {
	Case       string  `json:"case"`
	Messages   int64   `json:"messages"` // stored, acked or received, as the case counts
	MsgsPerSec float64 `json:"msgsPerSec"`
	// Latency is per publish (its confirm or 201), per ack, or
	// publish→delivery for the latency cases.
	Latency LatencySummary `json:"latency"`
	// The latency cases' two legs of publish→delivery: PublishLeg from
	// the publish to its confirm or 201 (the message durable),
	// AfterPublish from that answer to the delivery (the consume path
	// alone; 0 when the delivery came first).
	PublishLeg   *LatencySummary `json:"publishLeg,omitempty"`
	AfterPublish *LatencySummary `json:"afterPublish,omitempty"`
	// Missing and Duplicates: consume and latency cases.
	Missing    int64 `json:"missing"`
	Duplicates int64 `json:"duplicates"`
	Errors     int64 `json:"errors"`
	// ServerCPU is the cores the server used during the case;
	// ServerCPUPerMsgUs its CPU per message in microseconds.
	ServerCPU         float64 `json:"serverCpuCores,omitempty"`
	ServerCPUPerMsgUs float64 `json:"serverCpuPerMsgUs,omitempty"`
	ClientCPU         float64 `json:"clientCpuCores"`
	ElapsedSec        float64 `json:"elapsedSec"`
	FirstError        string  `json:"firstError,omitempty"`
	// FramesIn and FramesOut are the stream frames the server read and
	// wrote per message (mqgate_stream_frames_total of the case's kind);
	// stream cases only.
	FramesIn  float64 `json:"framesInPerMsg,omitempty"`
	FramesOut float64 `json:"framesOutPerMsg,omitempty"`
}

// StreamsRun is one round: every case once.
type StreamsRun struct {
	Topic string       `json:"topic"`
	Cases []StreamCase `json:"cases"`
}

// StreamsReport is the output of streams.
type StreamsReport struct {
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config"`
	Runs   []StreamsRun   `json:"runs"`
	Median []StreamCase   `json:"median"`
	// Ratios are stream over REST medians (msgs/s; for latency, p99 REST
	// over p99 stream, so above 1 is the stream being better everywhere;
	// for CPU, µs/msg REST over stream).
	Ratios map[string]float64 `json:"ratios"`
	// Peers and Targets: with --peers, the other systems' medians and
	// the ratios to them.
	Peers   map[string]PeerMedian `json:"peers,omitempty"`
	Targets []PeerTarget          `json:"targets,omitempty"`
}

// caseOrder is the report's row order.
var caseOrder = []string{"publish stream", "publish rest", "consume stream", "consume stream frame/ack", "consume rest-ack1", "consume rest-ack1 std", "consume rest-ack1 h2c", "consume rest-batch", "latency stream", "latency rest"}

func runStreams(ctx context.Context, c streamsConfig, logw io.Writer) (rep StreamsReport, err error) {
	rep.Config = map[string]any{"producers": c.Producers, "window": c.Window, "count": c.Count, "size": c.Size, "consumers": c.Consumers,
		"maxOutstanding": c.MaxOutstanding, "rate": c.Rate, "latencySec": c.LatencyD.Seconds(), "runs": c.Runs, "queues": c.Queues, "h2c": c.H2C}
	if c.URL == "" {
		dir, err := os.MkdirTemp("", "mqbench-gateway-")
		if err != nil {
			return rep, err
		}
		if !c.KeepData {
			defer os.RemoveAll(dir)
		} else {
			fmt.Fprintf(logw, "gateway data dir: %s\n", dir)
		}
		args := strings.Fields(c.GatewayArgs)
		if c.H2C {
			args = append(args, "--h2c")
		}
		gw, err := startGatewayChild(ctx, c.GatewayBin, dir, args, withoutOTEL(os.Environ())) // untraced, as compare without --trace
		if err != nil {
			return rep, err
		}
		defer func() { err = errors.Join(err, gw.stop()) }()
		c.URL, c.ServerPID = gw.url, gw.cmd.Process.Pid
	}
	rep.Config["url"] = c.URL
	for round := range c.Runs {
		r, err := streamsRound(ctx, c, round, logw)
		rep.Runs = append(rep.Runs, r)
		if err != nil {
			return rep, fmt.Errorf("round %d: %w", round+1, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	rep.Median = medianCases(rep.Runs)
	rep.Ratios = streamRatios(rep.Median)
	return rep, nil
}

// streamsRound runs every case once; odd rounds put REST first.
func streamsRound(ctx context.Context, c streamsConfig, round int, logw io.Writer) (StreamsRun, error) {
	id := runID()
	run := StreamsRun{Topic: "mqbench-streams-" + id}
	restFirst := round%2 == 1
	step := func(name string, f func(context.Context) (StreamCase, error)) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(logw, "round %d/%d: %s ...\n", round+1, c.Runs, name)
		cctx, cancel := context.WithTimeout(ctx, c.RunTimeout)
		defer cancel()
		// The frame counts are read outside the CPU and time measured.
		kind, streamCase := streamKindOf(name)
		var frames0 [2][2]float64
		if streamCase {
			frames0, streamCase = streamFrames(ctx, c.URL, c.Key)
		}
		cpu0 := processCPU()
		srv0, ok0 := pidCPU(c.ServerPID)
		start := time.Now()
		var sc StreamCase
		var err error
		// The case's goroutines (its streams' readers and writers too)
		// carry its name: `go tool pprof -tagfocus case=...` splits a
		// --cpuprofile by case.
		pprof.Do(cctx, pprof.Labels("case", name), func(cctx context.Context) { sc, err = f(cctx) })
		wall := time.Since(start)
		srv1, ok1 := pidCPU(c.ServerPID)
		sc.ClientCPU = (processCPU() - cpu0).Seconds() / wall.Seconds()
		if streamCase && sc.Messages > 0 {
			if frames1, ok := streamFrames(ctx, c.URL, c.Key); ok {
				sc.FramesIn = (frames1[kind][0] - frames0[kind][0]) / float64(sc.Messages)
				sc.FramesOut = (frames1[kind][1] - frames0[kind][1]) / float64(sc.Messages)
			}
		}
		sc.Case = name
		if c.ServerPID > 0 && ok0 && ok1 {
			used := srv1 - srv0
			sc.ServerCPU = used.Seconds() / wall.Seconds()
			if sc.Messages > 0 {
				sc.ServerCPUPerMsgUs = float64(used.Microseconds()) / float64(sc.Messages)
			}
		}
		run.Cases = append(run.Cases, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	// restCases is the REST cases given, none with --no-rest.
	restCases := func(fs ...func() error) []func() error {
		if c.NoREST {
			return nil
		}
		return fs
	}
	// pair runs a stream case and the cases it is compared with, in the
	// round's order.
	pair := func(streamName string, s func(context.Context) (StreamCase, error), others ...func() error) error {
		if !restFirst || len(others) == 0 {
			if err := step(streamName, s); err != nil {
				return err
			}
		}
		for _, rc := range others {
			if err := rc(); err != nil {
				return err
			}
		}
		if restFirst && len(others) > 0 {
			return step(streamName, s)
		}
		return nil
	}
	if c.has("publish") {
		restTopic := run.Topic + "-rest"
		err := pair("publish stream", func(ctx context.Context) (StreamCase, error) { return streamPublishCase(ctx, c, run.Topic) },
			restCases(func() error {
				return step("publish rest", func(ctx context.Context) (StreamCase, error) { return restPublishCase(ctx, c, restTopic) })
			})...)
		if err != nil {
			return run, err
		}
	}
	if c.has("consume") {
		rest := []func() error{func() error {
			return step("consume rest-ack1", func(ctx context.Context) (StreamCase, error) {
				return restConsumeCase(ctx, c, run.Topic, "mqbench-ack1-"+id, 1, "raw")
			})
		}}
		if c.H2C {
			// net/http over HTTP/1.1 too: h2c goes through net/http, so
			// this is the like-for-like HTTP/1.1 figure beside it.
			rest = append(rest, func() error {
				return step("consume rest-ack1 std", func(ctx context.Context) (StreamCase, error) {
					return restConsumeCase(ctx, c, run.Topic, "mqbench-ack1std-"+id, 1, "std")
				})
			}, func() error {
				return step("consume rest-ack1 h2c", func(ctx context.Context) (StreamCase, error) {
					return restConsumeCase(ctx, c, run.Topic, "mqbench-ack1h2c-"+id, 1, "h2c")
				})
			})
		}
		rest = append(rest, func() error {
			return step("consume rest-batch", func(ctx context.Context) (StreamCase, error) {
				return restConsumeCase(ctx, c, run.Topic, "mqbench-batch-"+id, 0, "raw")
			})
		})
		rest = restCases(rest...)
		if c.FramePerAck {
			// A stream case, run with --no-rest too: the gathered acks'
			// own A/B, the first of the other side's cases.
			rest = append([]func() error{func() error {
				return step("consume stream frame/ack", func(ctx context.Context) (StreamCase, error) {
					return streamConsumeCase(ctx, c, run.Topic, "mqbench-stream1f-"+id, true)
				})
			}}, rest...)
		}
		err := pair("consume stream", func(ctx context.Context) (StreamCase, error) {
			return streamConsumeCase(ctx, c, run.Topic, "mqbench-stream-"+id, false)
		}, rest...)
		if err != nil {
			return run, err
		}
	}
	if c.has("latency") {
		err := pair("latency stream", func(ctx context.Context) (StreamCase, error) {
			return streamLatencyCase(ctx, c, "mqbench-slat-"+id)
		}, restCases(func() error {
			return step("latency rest", func(ctx context.Context) (StreamCase, error) { return restLatencyCase(ctx, c, "mqbench-rlat-"+id) })
		})...)
		if err != nil {
			return run, err
		}
	}
	return run, nil
}

// restPublishCase is the publish mode's load with the peers' shape.
func restPublishCase(ctx context.Context, c streamsConfig, topic string) (StreamCase, error) {
	r, err := runPublish(ctx, publishConfig{URL: c.URL, Topic: topic, Queues: c.Queues, Concurrency: c.Producers,
		Size: c.Size, Batch: 1, Count: c.Count, Timeout: c.Timeout, Client: "raw"}, "gateway")
	sc := StreamCase{Messages: r.Messages, MsgsPerSec: r.MsgsPerSec, Latency: r.Latency, Errors: r.Failed,
		ElapsedSec: r.ElapsedSec, FirstError: r.FirstError}
	return sc, err
}

// restConsumeCase is the consume mode's receive+ack loop on a new group
// of topic: ackBatch 1 acks each message on its own, 0 each receive's;
// client is the consume mode's --client (raw HTTP/1.1, or h2c).
func restConsumeCase(ctx context.Context, c streamsConfig, topic, group string, ackBatch int, client string) (StreamCase, error) {
	r, err := consumeGroup(ctx, consumeConfig{URL: c.URL, Count: c.Count, Consumers: c.Consumers, MaxMessages: 32,
		WaitSeconds: 1, Timeout: c.Timeout, RunTimeout: c.RunTimeout, AckBatch: ackBatch, Client: client},
		ConsumeRun{Topic: topic, Group: group})
	var errs int64
	for _, n := range r.Errors {
		errs += n
	}
	sc := StreamCase{Messages: r.Acked, MsgsPerSec: r.AckedPerSec, Latency: r.AckLatency, Missing: r.Missing,
		Duplicates: r.Duplicates, Errors: errs, ElapsedSec: r.ElapsedSec, FirstError: r.FirstError}
	if err == nil && r.TimedOut {
		err = fmt.Errorf("timed out with %d of %d unacked", r.Missing, c.Count)
	}
	return sc, err
}

// restLatencyCase is the latency mode with its defaults.
func restLatencyCase(ctx context.Context, c streamsConfig, topic string) (StreamCase, error) {
	r, err := runLatency(ctx, latencyConfig{URL: c.URL, Topic: topic, Group: topic, Queues: c.Queues, Rate: c.Rate,
		Duration: c.LatencyD, Warmup: c.Warmup, Drain: c.Drain, Size: c.Size, Consumers: c.Consumers, MaxMessages: 32,
		WaitSeconds: 5, PubConc: 128, Client: "raw", Timeout: c.Timeout})
	var errs int64
	for _, n := range r.Errors {
		errs += n
	}
	return StreamCase{Messages: r.Received, MsgsPerSec: r.PublishRate, Latency: r.EndToEnd, Missing: r.Missing,
		PublishLeg: &r.PublishLatency, AfterPublish: &r.AfterPublish,
		Duplicates: r.Duplicates, Errors: errs, FirstError: r.FirstError}, err
}

// medianCases is, per case, the field-by-field median over the rounds.
func medianCases(runs []StreamsRun) []StreamCase {
	var out []StreamCase
	for _, name := range caseOrder {
		var cs []StreamCase
		for _, r := range runs {
			for _, c := range r.Cases {
				if c.Case == name {
					cs = append(cs, c)
				}
			}
		}
		if len(cs) == 0 {
			continue
		}
		f := func(get func(StreamCase) float64) float64 { return medianOf(cs, get) }
		n := func(get func(StreamCase) int64) int64 { return medianCount(cs, get) }
		leg := func(get func(StreamCase) *LatencySummary) *LatencySummary {
			if get(cs[0]) == nil {
				return nil
			}
			m := medianLatencyOf(cs, func(c StreamCase) LatencySummary { return *get(c) })
			return &m
		}
		out = append(out, StreamCase{
			Case:              name,
			Messages:          n(func(c StreamCase) int64 { return c.Messages }),
			MsgsPerSec:        f(func(c StreamCase) float64 { return c.MsgsPerSec }),
			Latency:           medianLatencyOf(cs, func(c StreamCase) LatencySummary { return c.Latency }),
			PublishLeg:        leg(func(c StreamCase) *LatencySummary { return c.PublishLeg }),
			AfterPublish:      leg(func(c StreamCase) *LatencySummary { return c.AfterPublish }),
			Missing:           n(func(c StreamCase) int64 { return c.Missing }),
			Duplicates:        n(func(c StreamCase) int64 { return c.Duplicates }),
			Errors:            n(func(c StreamCase) int64 { return c.Errors }),
			ServerCPU:         f(func(c StreamCase) float64 { return c.ServerCPU }),
			ServerCPUPerMsgUs: f(func(c StreamCase) float64 { return c.ServerCPUPerMsgUs }),
			ClientCPU:         f(func(c StreamCase) float64 { return c.ClientCPU }),
			ElapsedSec:        f(func(c StreamCase) float64 { return c.ElapsedSec }),
			FramesIn:          f(func(c StreamCase) float64 { return c.FramesIn }),
			FramesOut:         f(func(c StreamCase) float64 { return c.FramesOut }),
		})
	}
	return out
}

func streamRatios(med []StreamCase) map[string]float64 {
	by := map[string]StreamCase{}
	for _, c := range med {
		by[c.Case] = c
	}
	out := map[string]float64{}
	div := func(key string, a, b float64) {
		if a > 0 && b > 0 {
			out[key] = a / b
		}
	}
	div("publish msgs/s stream/rest", by["publish stream"].MsgsPerSec, by["publish rest"].MsgsPerSec)
	div("consume msgs/s stream/rest-ack1", by["consume stream"].MsgsPerSec, by["consume rest-ack1"].MsgsPerSec)
	div("consume msgs/s rest-ack1 h2c/std http1.1", by["consume rest-ack1 h2c"].MsgsPerSec, by["consume rest-ack1 std"].MsgsPerSec)
	div("consume msgs/s rest-ack1 h2c/raw http1.1", by["consume rest-ack1 h2c"].MsgsPerSec, by["consume rest-ack1"].MsgsPerSec)
	div("consume cpu/msg rest-ack1 std http1.1/h2c", by["consume rest-ack1 std"].ServerCPUPerMsgUs, by["consume rest-ack1 h2c"].ServerCPUPerMsgUs)
	div("consume msgs/s stream/frame-per-ack", by["consume stream"].MsgsPerSec, by["consume stream frame/ack"].MsgsPerSec)
	div("consume cpu/msg frame-per-ack/stream", by["consume stream frame/ack"].ServerCPUPerMsgUs, by["consume stream"].ServerCPUPerMsgUs)
	div("consume msgs/s stream/rest-batch", by["consume stream"].MsgsPerSec, by["consume rest-batch"].MsgsPerSec)
	div("latency p99 rest/stream", by["latency rest"].Latency.P99Ms, by["latency stream"].Latency.P99Ms)
	div("publish cpu/msg rest/stream", by["publish rest"].ServerCPUPerMsgUs, by["publish stream"].ServerCPUPerMsgUs)
	div("consume cpu/msg rest-ack1/stream", by["consume rest-ack1"].ServerCPUPerMsgUs, by["consume stream"].ServerCPUPerMsgUs)
	div("consume cpu/msg rest-batch/stream", by["consume rest-batch"].ServerCPUPerMsgUs, by["consume stream"].ServerCPUPerMsgUs)
	return out
}

// eachCase calls f on every run's cases, named "run N", then, with more
// than one run, on the medians, named "median": the order of the table.
func (r StreamsReport) eachCase(f func(name string, c StreamCase)) {
	for i, run := range r.Runs {
		for _, c := range run.Cases {
			f(fmt.Sprintf("run %d", i+1), c)
		}
	}
	if len(r.Runs) > 1 {
		for _, c := range r.Median {
			f("median", c)
		}
	}
}

func (r StreamsReport) write(w io.Writer, asJSON bool) error {
	r.Mode = "streams"
	if asJSON {
		return writeJSON(w, r)
	}
	writeConfig(w, r.Config)
	tw := newTable(w)
	fmt.Fprintln(tw, "\tcase\tmsgs\tmsgs/s\tp50 ms\tp99 ms\tmissing\tdup\terrors\tserver cpu\tcpu/msg µs\tmqbench cpu\t")
	row := func(name string, c StreamCase) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.2f\t%.2f\t%d\t%d\t%d\t%s\t%s\t%.2f\t\n", name, c.Case, c.Messages, c.MsgsPerSec,
			c.Latency.P50Ms, c.Latency.P99Ms, c.Missing, c.Duplicates, c.Errors, cores(c.ServerCPU), perMsg(c.ServerCPUPerMsgUs), c.ClientCPU)
	}
	r.eachCase(row)
	if err := tw.Flush(); err != nil {
		return err
	}
	legs := func(name string, c StreamCase) {
		if c.PublishLeg != nil && c.AfterPublish != nil {
			fmt.Fprintf(w, "%-8s %-15s publish→answer p50 %.2f p99 %.2f ms, answer→delivery p50 %.2f p99 %.2f ms\n", name, c.Case,
				c.PublishLeg.P50Ms, c.PublishLeg.P99Ms, c.AfterPublish.P50Ms, c.AfterPublish.P99Ms)
		}
	}
	r.eachCase(legs)
	frames := func(name string, c StreamCase) {
		if c.FramesIn > 0 || c.FramesOut > 0 {
			fmt.Fprintf(w, "%-8s %-24s frames per message: %.3f read, %.3f written by the server\n", name, c.Case, c.FramesIn, c.FramesOut)
		}
	}
	r.eachCase(frames)
	for i, run := range r.Runs {
		for _, c := range run.Cases {
			if c.FirstError != "" {
				fmt.Fprintf(w, "run %d %s first error: %s\n", i+1, c.Case, c.FirstError)
			}
		}
	}
	keys := []string{"publish msgs/s stream/rest", "consume msgs/s stream/rest-ack1", "consume msgs/s stream/rest-batch",
		"consume msgs/s stream/frame-per-ack", "consume cpu/msg frame-per-ack/stream",
		"latency p99 rest/stream", "publish cpu/msg rest/stream", "consume cpu/msg rest-ack1/stream", "consume cpu/msg rest-batch/stream",
		"consume msgs/s rest-ack1 h2c/std http1.1", "consume msgs/s rest-ack1 h2c/raw http1.1", "consume cpu/msg rest-ack1 std http1.1/h2c"}
	for _, k := range keys {
		if v, ok := r.Ratios[k]; ok {
			fmt.Fprintf(w, "%-40s %.2f×\n", k, v)
		}
	}
	fmt.Fprintln(w, "(latency: publish per confirm/201, consume per ack answer, latency cases publish→delivery; medians per field)")
	writePeers(w, r.Peers, r.Targets)
	return nil
}
