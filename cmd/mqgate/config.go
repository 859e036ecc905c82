package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/gateway"
)

// Config is everything `mqgate serve` can be told. Each field has a flag
// and an MQGATE_* variable; a flag given on the command line wins.
type Config struct {
	// Addr is the TCP address to listen on (host:port; port 0 picks one).
	Addr string
	// Data is the data directory; the store is Data/mqgate.db.
	Data string
	// LogLevel is trace, debug, info, warn or error.
	LogLevel string
	// LogFormat is json, console or auto (console when stderr is a
	// terminal, else json).
	LogFormat string
	// ShutdownTimeout bounds how long in-flight requests may take to
	// finish after SIGTERM before connections are closed.
	ShutdownTimeout time.Duration
	// ShutdownDelay is how long, on SIGTERM, /readyz answers 503 while
	// the listener keeps serving, before the shutdown starts (drain.go).
	ShutdownDelay time.Duration
	// WriteTimeout bounds writing a response (from the end of reading the
	// request); a client that does not read its answer is cut after it, so
	// it cannot pin the response's memory. Long-poll receives extend it
	// by their wait.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for this
	// long.
	IdleTimeout time.Duration
	// StreamOrigins is the comma-separated allow-list of browser origins
	// that may open WebSocket streams besides the server's own ("*": any).
	StreamOrigins string
	// MaxStreamsPerKey caps the concurrent streams of one API key;
	// MaxStreams those of the server.
	MaxStreamsPerKey int
	MaxStreams       int
	// StreamPing is how often a stream is pinged; no pong within it
	// closes the stream 4008.
	StreamPing time.Duration
	// DelayLevels are the durations of delay levels 1..N, space or comma
	// separated (RocketMQ messageDelayLevel).
	DelayLevels string
	// MaxDelay bounds delaySeconds and deliverAt of timer messages.
	MaxDelay time.Duration
	// DedupWindow is how long an Idempotency-Key (or a batch entry's
	// deduplicationId) is remembered per topic; the records live in the
	// data file, so a restart keeps them.
	DedupWindow time.Duration
	// SegmentBytes and SegmentSpan bound a store segment (the commit log
	// and consume queues are cut into segments; retention and topic
	// deletion free disk a whole segment at a time): a new one starts when
	// the newest holds SegmentBytes of messages or began SegmentSpan ago.
	SegmentBytes int64
	SegmentSpan  time.Duration
	// FullCheck reads every page of the store at start even when its meta
	// page names a freelist a clean stop or a checkpoint wrote (otherwise
	// every page is read anyway).
	FullCheck bool
	// TimelineEvents is how many events each group's message timeline
	// keeps in memory (gateway.TimelineRingSize by default); 0 turns
	// timelines off (the timeline endpoint then shows PUBLISHED only), so
	// their cost can be measured against a run without them
	// (cmd/mqbench/timeline-ab.sh).
	TimelineEvents int
	// RetentionCheckInterval is how often the retention cleaner looks for
	// expired messages. A pass that finds nothing expired only reads (one
	// read transaction over every queue's head); it writes only what
	// expired.
	RetentionCheckInterval time.Duration
	// RetentionUnit is the length of one hour of a topic's retentionHours.
	// Leave it at 1h: only tests and benchmarks shorten it, to expire a
	// store filled with long retention without waiting for it.
	RetentionUnit time.Duration
	// CacheBudgetMiB caps the message bytes prefetched by all consumer
	// groups together (SPEC §5), shared fairly among them.
	CacheBudgetMiB int
	// WebhookAllowLoopback lets push groups' webhooks reach 127.0.0.0/8
	// and ::1 (tests, local development); denied by default.
	WebhookAllowLoopback bool
	// WebhookAllowCIDRs are networks or addresses webhooks may reach even
	// inside a denied range; WebhookDenyCIDRs are denied on top of the
	// defaults (loopback, link-local, metadata, multicast).
	WebhookAllowCIDRs, WebhookDenyCIDRs []string
	// MaxWaitingPerGroup and MaxWaiting bound the long-poll receives
	// parked on one group and in all; more answer 429.
	MaxWaitingPerGroup, MaxWaiting int
	// BroadcastIdleTimeout: a BROADCASTING consumerId with no receive for
	// this long has its client stopped (its offsets are kept).
	BroadcastIdleTimeout time.Duration
	// PprofAddr, when set, serves net/http/pprof on this address, on a
	// listener of its own (never the API's). Off by default: profiles
	// expose internals, so bind it to loopback or an admin network.
	PprofAddr string
	// BodyReadTimeout bounds reading one request body; a body that has
	// not arrived by then answers 408 (a slow client, or a Content-Length
	// larger than what is sent).
	BodyReadTimeout time.Duration
	// AccessLog logs one info line per request (method, path, status,
	// bytes, duration, request id). On by default; off, only 5xx answers
	// are logged (at warn).
	AccessLog bool
	// TLSCert and TLSKey, when set, serve HTTPS (and HTTP/2) on Addr with
	// this PEM certificate (chain) and key. Empty: plain HTTP, for a TLS
	// proxy in front (docs/operations.md).
	TLSCert, TLSKey string
	// H2C serves cleartext HTTP/2 (prior knowledge, RFC 9113 §3.3)
	// besides HTTP/1.1 on Addr: for a proxy or client that speaks h2 to
	// the gateway without TLS. Not with TLS (which negotiates h2 itself).
	H2C bool
	// APIKeys is a JSON key file (docs/security.md); when set, every /v1
	// call needs Authorization: Bearer <key> with the right grant, and
	// SIGHUP reloads the file. Empty: /v1 is open (a warning is logged).
	APIKeys string
	// InsecureOpen allows a non-loopback Addr without APIKeys: an open
	// /v1 on purpose (listener.go). Without it that start is refused.
	InsecureOpen bool
	// Init allows starting an empty store where the data directory shows
	// one existed (gateway.key present, mqgate.db missing or 0 bytes);
	// without it that start is refused (initcheck.go).
	Init bool
	// Backend is embedded (bbolt, the default) or jetstream (backend/jetstream).
	Backend string
	// NATSURL (comma-separated) and NATSCreds (a .creds file) reach the
	// JetStream cluster; NATSReplicas is the replica count of everything
	// the backend creates (3; less only with a loud warning).
	NATSURL, NATSCreds string
	NATSReplicas       int
	// NATSMaxBatch is the servers' jetstream.limits.batch.max_msgs.
	NATSMaxBatch int
	// HandleKeyFile is the receipt-handle key shared by every gateway in
	// front of one cluster (required with --backend jetstream; on
	// embedded it replaces the data dir's gateway.key).
	HandleKeyFile string
	// HandlePreviousKeyFiles hold keys that still verify handles during a
	// key rotation but sign none.
	HandlePreviousKeyFiles []string
}

// listFlag is a repeatable, comma-separated string flag; the first use on
// the command line replaces what the environment gave, later uses add to it.
type listFlag struct {
	dst *[]string
	set bool
}

func (f *listFlag) String() string {
	if f.dst == nil {
		return ""
	}
	return strings.Join(*f.dst, ",")
}

func (f *listFlag) Set(v string) error {
	if !f.set {
		*f.dst, f.set = nil, true
	}
	*f.dst = append(*f.dst, splitList(v)...)
	return nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// defaultDelayLevels is RocketMQ's messageDelayLevel.
// maxTimelineEvents bounds --timeline-events: about 400 bytes an event
// at most (a 256-character reason), 400 MiB a group.
const maxTimelineEvents = 1 << 20

const defaultDelayLevels = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

// DefaultConfig returns the built-in defaults (no environment).
func DefaultConfig() Config {
	return Config{
		Addr:                 "127.0.0.1:8080",
		Data:                 "./data",
		LogLevel:             "info",
		LogFormat:            "auto",
		ShutdownTimeout:      30 * time.Second,
		WriteTimeout:         30 * time.Second,
		IdleTimeout:          120 * time.Second,
		MaxStreamsPerKey:     64,
		MaxStreams:           10000,
		StreamPing:           30 * time.Second,
		DelayLevels:          defaultDelayLevels,
		MaxDelay:             core.MaxDelay,
		DedupWindow:          engine.DefaultDedupWindow,
		SegmentBytes:         store.DefaultSegmentBytes,
		SegmentSpan:          store.DefaultSegmentSpan,
		CacheBudgetMiB:       256,
		TimelineEvents:       gateway.TimelineRingSize,
		MaxWaitingPerGroup:   256,
		MaxWaiting:           4096,
		BroadcastIdleTimeout: 5 * time.Minute,
		AccessLog:            true,
		BodyReadTimeout:      api.DefaultBodyReadTimeout,
		Backend:              "embedded",
		NATSURL:              "nats://127.0.0.1:4222",
		NATSReplicas:         3,
		NATSMaxBatch:         1000,

		RetentionCheckInterval: time.Minute,
		RetentionUnit:          time.Hour,
	}
}

// envName is the variable that sets a flag: MQGATE_ and the flag's name in
// upper case with '-' as '_'. Repeatable list flags take a plural,
// comma-separated variable.
func envName(flagName string) string {
	name := "MQGATE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
	if strings.HasSuffix(flagName, "-cidr") {
		name += "S"
	}
	return name
}

// serveFlags declares `mqgate serve`'s flags over c.
func serveFlags(c *Config, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mqgate serve", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address, host:port; beyond loopback (e.g. :8080) needs --api-keys or --insecure-open")
	fs.StringVar(&c.Data, "data", c.Data, "data directory")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "trace|debug|info|warn|error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "json|console|auto")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "time in-flight requests get to finish on shutdown")
	drainFlags(fs, c) // drain.go
	fs.DurationVar(&c.WriteTimeout, "write-timeout", c.WriteTimeout, "time to write a response; a client not reading it is cut (a long-poll receive adds its wait)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "close keep-alive connections idle this long")
	fs.StringVar(&c.StreamOrigins, "stream-origins", c.StreamOrigins, "comma-separated browser origins (https://app.example.com, *.example.com, or *) allowed to open WebSocket streams besides the server's own")
	fs.IntVar(&c.MaxStreamsPerKey, "max-streams-per-key", c.MaxStreamsPerKey, "concurrent WebSocket streams one API key may hold (429 beyond)")
	fs.IntVar(&c.MaxStreams, "max-streams", c.MaxStreams, "concurrent WebSocket streams the server holds (429 beyond)")
	fs.DurationVar(&c.StreamPing, "stream-ping", c.StreamPing, "how often each stream is pinged; no pong within it closes the stream (4008)")
	fs.StringVar(&c.DelayLevels, "delay-levels", c.DelayLevels, "durations of delay levels 1..N, e.g. \"100ms 200ms 1s\"")
	fs.DurationVar(&c.MaxDelay, "max-delay", c.MaxDelay, "longest delaySeconds / deliverAt accepted")
	fs.DurationVar(&c.DedupWindow, "dedup-window", c.DedupWindow, "how long an Idempotency-Key / deduplicationId is remembered per topic")
	fs.Int64Var(&c.SegmentBytes, "segment-bytes", c.SegmentBytes, "bytes of messages after which the store starts a new segment (retention and topic deletion free whole segments)")
	fs.BoolVar(&c.FullCheck, "full-check", c.FullCheck, "read every page of the store before opening it, even when its meta page names a freelist a clean stop or a checkpoint wrote (otherwise every page is read anyway)")
	fs.DurationVar(&c.SegmentSpan, "segment-span", c.SegmentSpan, "age after which the store starts a new segment: a message may hold disk up to about this long past its retention")
	fs.IntVar(&c.TimelineEvents, "timeline-events", c.TimelineEvents, "events each group's message timeline keeps in memory; 0 turns timelines off")
	fs.DurationVar(&c.RetentionCheckInterval, "retention-check-interval", c.RetentionCheckInterval, "how often the retention cleaner runs (a pass with nothing expired only reads)")
	fs.DurationVar(&c.RetentionUnit, "retention-unit", c.RetentionUnit, "length of one hour of retentionHours; shorter only for tests and benchmarks (expires long-retention data now)")
	fs.IntVar(&c.CacheBudgetMiB, "cache-budget-mib", c.CacheBudgetMiB, "MiB of messages all consumer groups may prefetch together")
	fs.IntVar(&c.MaxWaitingPerGroup, "max-waiting-per-group", c.MaxWaitingPerGroup, "long-poll receives parked on one group before 429")
	fs.IntVar(&c.MaxWaiting, "max-waiting", c.MaxWaiting, "long-poll receives parked in all before 429")
	fs.DurationVar(&c.BroadcastIdleTimeout, "broadcast-idle-timeout", c.BroadcastIdleTimeout, "stop a BROADCASTING consumerId's client after this long without a receive")
	fs.BoolVar(&c.WebhookAllowLoopback, "webhook-allow-loopback", c.WebhookAllowLoopback, "let webhooks reach loopback addresses")
	fs.Var(&listFlag{dst: &c.WebhookAllowCIDRs}, "webhook-allow-cidr", "network or address webhooks may reach even if denied; repeatable")
	fs.Var(&listFlag{dst: &c.WebhookDenyCIDRs}, "webhook-deny-cidr", "network or address webhooks may not reach, besides the defaults; repeatable")
	fs.StringVar(&c.PprofAddr, "pprof-addr", c.PprofAddr, "serve net/http/pprof on this separate address, e.g. 127.0.0.1:6060; off when empty")
	fs.DurationVar(&c.BodyReadTimeout, "body-read-timeout", c.BodyReadTimeout, "time a request body may take to arrive before 408")
	fs.BoolVar(&c.AccessLog, "access-log", c.AccessLog, "log one line per request at info level; false logs only 5xx answers")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "PEM certificate (chain) file: serve HTTPS and HTTP/2; with --tls-key")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "PEM private key file of --tls-cert")
	fs.BoolVar(&c.H2C, "h2c", c.H2C, "also serve cleartext HTTP/2 (prior knowledge) on --addr; not with --tls-cert, which negotiates HTTP/2 itself")
	fs.StringVar(&c.APIKeys, "api-keys", c.APIKeys, "JSON file of API keys guarding /v1 (docs/security.md); SIGHUP reloads it; /v1 is open when empty")
	fs.BoolVar(&c.InsecureOpen, "insecure-open", c.InsecureOpen, "allow a non-loopback --addr without --api-keys: /v1 open to anyone who reaches it")
	fs.BoolVar(&c.Init, "init", c.Init, "start an empty store even though the data dir held one before (gateway.key present, mqgate.db missing or empty)")
	fs.StringVar(&c.Backend, "backend", c.Backend, "embedded|jetstream")
	fs.StringVar(&c.NATSURL, "nats-url", c.NATSURL, "NATS server URLs, comma-separated (--backend jetstream)")
	fs.StringVar(&c.NATSCreds, "nats-creds", c.NATSCreds, "NATS .creds file (--backend jetstream)")
	fs.IntVar(&c.NATSReplicas, "nats-replicas", c.NATSReplicas, "replicas of the streams, consumers and buckets mqgate creates (--backend jetstream)")
	fs.IntVar(&c.NATSMaxBatch, "nats-max-batch", c.NATSMaxBatch, "the servers' jetstream.limits.batch.max_msgs (a publish is one atomic batch of its messages and their index entries)")
	fs.StringVar(&c.HandleKeyFile, "handle-key-file", c.HandleKeyFile, "receipt-handle key shared by all gateway instances (32+ bytes raw or 64+ hex digits); required with --backend jetstream, replaces <data>/gateway.key on embedded")
	fs.Var(&listFlag{dst: &c.HandlePreviousKeyFiles}, "handle-previous-key-file", "a key that still verifies receipt handles but signs none (a key rotation in progress, docs/operations.md); repeatable")
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " (env " + envName(f.Name) + ")" })
	return fs
}

// parseServeFlags reads `mqgate serve`'s configuration: the defaults, then
// MQGATE_* variables, then the command line (a flag given wins). Variables
// go through the same parsers as flags, so a bad value is an error, never
// silently ignored.
func parseServeFlags(args []string, out io.Writer) (Config, error) {
	c := DefaultConfig()
	fs := serveFlags(&c, out)
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		v, ok := os.LookupEnv(env)
		if !ok || v == "" {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q (--%s): %s", env, v, f.Name, wantValue(f, err)))
		}
		if l, ok := f.Value.(*listFlag); ok {
			l.set = false // the command line's first use replaces the env list
		}
	})
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

// wantValue says what a good value of flag f looks like, for an
// environment variable that failed to parse (flag's own errors say only
// "parse error").
func wantValue(f *flag.Flag, err error) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration with a unit, such as 30s, 1m30s or 500ms"
	case int:
		return "want a whole number, such as " + f.DefValue
	case bool:
		return "want true or false"
	}
	return err.Error()
}

// flagRef matches a flag named in an error message.
var flagRef = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// validate checks the values; each error names the flag and its
// environment variable, since the value may have come from either.
func (c Config) validate() error {
	var out []error
	for _, err := range c.problems() {
		msg := flagRef.ReplaceAllStringFunc(err.Error(), func(f string) string {
			return f + " (" + envName(f[2:]) + ")"
		})
		out = append(out, errors.New(msg))
	}
	return errors.Join(out...)
}

func (c Config) problems() []error {
	var errs []error
	if _, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		errs = append(errs, fmt.Errorf("--log-level %q: want trace, debug, info, warn or error", c.LogLevel))
	}
	switch c.LogFormat {
	case "json", "console", "auto":
	default:
		errs = append(errs, fmt.Errorf("--log-format %q: want json, console or auto", c.LogFormat))
	}
	if c.Data == "" {
		errs = append(errs, errors.New("--data must not be empty"))
	}
	if _, err := engine.ParseDelayLevels(c.DelayLevels); err != nil {
		errs = append(errs, fmt.Errorf("--delay-levels: %w", err))
	}
	if c.TimelineEvents < 0 || c.TimelineEvents > maxTimelineEvents {
		errs = append(errs, fmt.Errorf("--timeline-events must be between 0 (off) and %d", maxTimelineEvents))
	}
	if c.CacheBudgetMiB < 1 {
		errs = append(errs, errors.New("--cache-budget-mib must be at least 1"))
	}
	if c.MaxWaitingPerGroup < 1 || c.MaxWaiting < 1 {
		errs = append(errs, errors.New("--max-waiting-per-group and --max-waiting must be at least 1"))
	}
	if c.BroadcastIdleTimeout <= 0 {
		errs = append(errs, errors.New("--broadcast-idle-timeout must be positive"))
	}
	if c.DedupWindow <= 0 {
		errs = append(errs, errors.New("--dedup-window must be positive"))
	}
	if c.RetentionCheckInterval <= 0 {
		errs = append(errs, errors.New("--retention-check-interval must be positive"))
	}
	if c.RetentionUnit <= 0 {
		errs = append(errs, errors.New("--retention-unit must be positive"))
	}
	if c.SegmentBytes <= 0 || c.SegmentSpan <= 0 {
		errs = append(errs, errors.New("--segment-bytes and --segment-span must be positive"))
	}
	if c.MaxDelay <= 0 {
		errs = append(errs, errors.New("--max-delay must be positive"))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key go together: give both or neither"))
	}
	if c.H2C && c.TLSCert != "" {
		errs = append(errs, errors.New("--h2c is cleartext HTTP/2; with --tls-cert HTTP/2 is negotiated over TLS already: drop --h2c"))
	}
	if c.BodyReadTimeout <= 0 {
		errs = append(errs, errors.New("--body-read-timeout must be positive"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("--shutdown-timeout must be positive"))
	}
	errs = append(errs, c.drainProblems()...) // drain.go
	if c.WriteTimeout <= 0 || c.IdleTimeout <= 0 {
		errs = append(errs, errors.New("--write-timeout and --idle-timeout must be positive"))
	}
	for _, l := range []struct {
		flag  string
		cidrs []string
	}{{"--webhook-allow-cidr", c.WebhookAllowCIDRs}, {"--webhook-deny-cidr", c.WebhookDenyCIDRs}} {
		for _, s := range l.cidrs {
			if !validCIDR(s) {
				errs = append(errs, fmt.Errorf("%s %q: want a CIDR (10.0.0.0/8) or an IP address", l.flag, s))
			}
		}
	}
	switch c.Backend {
	case "embedded":
	case "jetstream":
		if c.HandleKeyFile == "" {
			errs = append(errs, errors.New("--backend jetstream needs --handle-key-file (the key every gateway instance shares)"))
		}
		if c.NATSReplicas < 1 || c.NATSReplicas > 5 {
			errs = append(errs, errors.New("--nats-replicas must be between 1 and 5"))
		}
	default:
		errs = append(errs, fmt.Errorf("--backend %q: want embedded or jetstream", c.Backend))
	}
	return errs
}

func validCIDR(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// streamOptions are the WebSocket stream settings of api.Options.
func (c *Config) streamOptions() api.StreamOptions {
	var origins []string
	for _, o := range strings.Split(c.StreamOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	return api.StreamOptions{Origins: origins, MaxPerKey: c.MaxStreamsPerKey, Max: c.MaxStreams, Ping: c.StreamPing}
}
