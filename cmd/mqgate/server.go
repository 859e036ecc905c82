package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/backend/embedded"
	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/gateway"
	"github.com/mqgate/mqgate/gateway/webhook"
	"github.com/mqgate/mqgate/internal/auth"
	"github.com/mqgate/mqgate/internal/tracing"
	"github.com/mqgate/mqgate/openapi"
)

// Main is one run of `mqgate serve` (wtf style: NewMain, ParseFlags, Run,
// Close), usable from tests in-process.
type Main struct {
	Config Config
	Logger zerolog.Logger

	js      *jsRun            // --backend jetstream (jetstream.go); nil otherwise
	backend *embedded.Backend // the embedded backend; nil otherwise
	api     *api.Server
	ln      net.Listener
	http    *http.Server
	served  chan error      // Serve's result; closed when the serve goroutine ends
	pprof   *profiler       // --pprof-addr; nil when off
	keys    *keyReloader    // --api-keys' SIGHUP reloader; nil when off
	logw    *logWriter      // the buffered log output ParseFlags set up; closed last
	started bool            // Run succeeded: only then does Close log "stopped"
	tracer  *tracing.Tracer // OTEL_* asked for traces (tracing.Enabled); nil: off
}

// NewMain returns a Main with the default config and a logger to stderr.
func NewMain() *Main {
	c := DefaultConfig()
	return &Main{Config: c, Logger: newLogger(os.Stderr, c.LogLevel, c.LogFormat)}
}

// ParseFlags reads `mqgate serve` flags (over MQGATE_* variables) and
// sets up logging accordingly.
func (m *Main) ParseFlags(args []string, out io.Writer) error {
	c, err := parseServeFlags(args, out)
	if err != nil {
		return err
	}
	m.Config = c
	if m.logw != nil {
		m.logw.Close()
	}
	m.Logger, m.logw = newServerLogger(os.Stderr, c.LogLevel, c.LogFormat)
	return nil
}

// Run opens the engine, listens and starts serving in the background. The
// listener is bound before Run returns, so a bad address or a port in use
// is reported here, synchronously.
func (m *Main) Run() error {
	if err := refuseOpenListener(m.Config); err != nil {
		return err
	}
	if err := m.startTracing(); err != nil {
		return err
	}
	run := m.runEmbedded
	if m.Config.Backend == "jetstream" {
		run = m.runJetStream // jetstream.go
	}
	err := run()
	m.started = err == nil // Close says "stopped" only after a real start
	return err
}

// runEmbedded is Run over the embedded engine (bbolt in this process).
func (m *Main) runEmbedded() error {
	// The key file first: a bad one fails the start before the store opens.
	var keyring *auth.Keyring
	if m.Config.APIKeys != "" {
		kr, err := auth.OpenKeyring(m.Config.APIKeys)
		if err != nil {
			return fmt.Errorf("--api-keys: %w", err)
		}
		keyring = kr
	}
	tlsConfig, err := m.loadTLS()
	if err != nil {
		return err
	}
	// Listen before anything touches the data directory: a taken port
	// fails the start without creating or locking data files.
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	m.ln = ln
	if err := os.MkdirAll(m.Config.Data, 0o750); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	levels, err := engine.ParseDelayLevels(m.Config.DelayLevels)
	if err != nil {
		return fmt.Errorf("--delay-levels: %w", err)
	}
	if err := refuseLostStore(m.Config.Data, m.Config.Init); err != nil {
		return err
	}
	// One registry for /metrics: the API's series, the Go and process
	// collectors and the webhook pushers'.
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	consumed := newConsumeMetrics(metrics) // consume_metrics.go
	budget := consumer.NewCacheBudget(int64(m.Config.CacheBudgetMiB) << 20)
	key, previous, err := m.handleKeys()
	if err != nil {
		return err
	}
	be, err := embedded.Open(embedded.Options{
		Engine: engine.Options{
			Dir:          m.Config.Data,
			DelayLevels:  levels,
			MaxDelay:     m.Config.MaxDelay,
			DedupWindow:  m.Config.DedupWindow,
			SegmentBytes: m.Config.SegmentBytes,
			SegmentSpan:  m.Config.SegmentSpan,
			FullPreCheck: m.Config.FullCheck,
			DeadLettered: m.deadLettered(),

			GroupCommitted: m.groupCommitted(),

			RetentionCheckInterval: m.Config.RetentionCheckInterval,
			RetentionUnit:          m.Config.RetentionUnit,
		},
		Logger:         m.Logger,
		TimelineEvents: m.Config.TimelineEvents,
		Key:            key, // nil: the data dir's gateway.key
		PreviousKeys:   previous,
		Consumer: func(o *consumer.Options) {
			// One budget for every client of the process: memory stays
			// bounded however many groups and backlogged queues there are.
			o.CacheBudget = budget
			o.Observer = consumed
		},
		MaxWaitingPerGroup:   m.Config.MaxWaitingPerGroup,
		MaxWaiting:           m.Config.MaxWaiting,
		BroadcastIdleTimeout: m.Config.BroadcastIdleTimeout,
		Webhook:              m.webhookOptions(metrics, levels),
	})
	if err != nil {
		return err
	}
	m.backend = be
	eng := be.Engine
	metrics.MustRegister(storeCollectors(eng)...)
	metrics.MustRegister(newFSCollector(m.Config.Data)) // fs_metrics.go

	httpLog := m.component("http")
	m.api = api.New(api.Options{
		Backend:  be,
		Logger:   &httpLog,
		Version:  Version(),
		OpenAPI:  openapi.Document,
		Keys:     keyring,
		Backup:   eng,
		Registry: metrics,

		NoAccessLog:     !m.Config.AccessLog,
		BodyReadTimeout: m.Config.BodyReadTimeout,
		// /readyz is 503 while the store's group commit fails (disk full):
		// a load balancer stops sending writes that would fail anyway.
		Ready: func() error {
			if eng.WriterStats().Failing {
				return errors.New("the store cannot commit (disk full or I/O error); retry later")
			}
			return nil
		},
		// Long polls extend their write deadline by their wait.
		WriteTimeout: m.Config.WriteTimeout,
		Streams:      m.Config.streamOptions(),
		ScheduleCounters: func() api.ScheduleCounters {
			return api.ScheduleCounters(eng.Counters())
		},
		Tracer:           m.tracer,
		GroupCommitSpans: m.tracer != nil, // engine.Options.GroupCommitted
	})

	m.http = m.newHTTPServer(m.api, tlsConfig, httpLog)
	m.served = serveHTTP(m.http, ln)
	if err := m.startPprof(); err != nil {
		return err
	}
	if keyring != nil {
		m.keys = startKeyReloader(keyring, m.component("auth"))
		m.Logger.Info().Str("file", keyring.File()).Int("keys", keyring.Keys().Len()).
			Msg("API keys required on /v1; SIGHUP reloads the file")
	} else {
		m.Logger.Warn().Msg("no --api-keys: /v1 is open to anyone who can reach this address")
	}
	m.Logger.Info().Str("addr", ln.Addr().String()).Bool("tls", tlsConfig != nil).Bool("h2c", m.http.Protocols != nil).Str("data", m.Config.Data).
		Str("version", Version()).Msg("listening")
	if m.logw != nil {
		m.logw.flush() // scripts and tests wait for this line: no batching delay
	}
	return nil
}

// Addr is the bound listen address (useful with port 0).
func (m *Main) Addr() string {
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

// Done yields an error if the server stops serving on its own.
func (m *Main) Done() <-chan error { return m.served }

// Close shuts down gracefully: /readyz turns 503, the listener closes,
// in-flight requests finish (bounded by ShutdownTimeout), then the engine
// closes. It is safe after a partial Run.
func (m *Main) Close() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
	defer cancel()
	if m.keys != nil {
		m.keys.Close()
		m.keys = nil
	}
	if m.pprof != nil {
		if err := m.pprof.Close(); err != nil {
			errs = append(errs, fmt.Errorf("pprof close: %w", err))
		}
		m.pprof = nil
	}
	if m.js != nil {
		if err := m.closeJetStream(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if m.http != nil {
		m.api.SetShuttingDown()
		// Parked long polls answer now with what they have, so Shutdown
		// does not wait out their waitSeconds.
		m.backend.Drain()
		if err := m.http.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("http shutdown: %w", err))
			_ = m.http.Close()
		}
		<-m.served
		m.http = nil
	} else if m.ln != nil {
		_ = m.ln.Close()
	}
	// Push consumers persist their offsets and unlock their queues before
	// the registry and the bbolt file close under them (Backend.Close).
	if m.backend != nil {
		if err := m.backend.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		m.backend = nil
	}
	// Last: the spans of the shutdown itself (final pushes, settles) are
	// flushed too.
	if err := m.tracer.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("tracing shutdown: %w", err))
	}
	m.tracer = nil
	if len(errs) == 0 && m.started {
		m.Logger.Info().Msg("stopped")
	}
	m.started = false
	if m.logw != nil {
		m.logw.Close() // write what is pending; later lines go out unbuffered
	}
	return errors.Join(errs...)
}

// component is the logger of one part of the server.
func (m *Main) component(name string) zerolog.Logger {
	return m.Logger.With().Str("component", name).Logger()
}

// storeCollectors expose the store's group commit (RocketMQ
// GroupCommitService): requests/groups is the mean group size, the measure
// of how well one fsync is shared; the two durations split the writer's
// time between appending and committing (page writes and fsyncs). Read at
// scrape time, nothing on the publish path.
func storeCollectors(eng *engine.Engine) []prometheus.Collector {
	counter := func(name, help string, v func(store.WriterStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return v(eng.WriterStats()) })
	}
	return []prometheus.Collector{
		counter("mqgate_store_commit_groups_total", "Transactions the store's writer committed (each made durable by one fdatasync of the log-ahead).",
			func(s store.WriterStats) float64 { return float64(s.Groups) }),
		counter("mqgate_store_commit_requests_total", "Write requests (a publish, a batch, a schedule move) committed; divided by groups, the mean group size.",
			func(s store.WriterStats) float64 { return float64(s.Requests) }),
		counter("mqgate_store_apply_seconds_total", "Time the writer spent appending inside transactions.",
			func(s store.WriterStats) float64 { return s.Apply.Seconds() }),
		counter("mqgate_store_commit_seconds_total", "Time the writer spent committing transactions (writing the log-ahead record, bbolt's page writes); the fdatasync is the syncer's (mqgate_store_sync_seconds_total).",
			func(s store.WriterStats) float64 { return s.Commit.Seconds() }),
		counter("mqgate_store_syncs_total", "fdatasyncs of the log-ahead; each makes every group written before it durable.",
			func(s store.WriterStats) float64 { return float64(s.Syncs) }),
		counter("mqgate_store_sync_seconds_total", "Time spent in the log-ahead's fdatasyncs, overlapping the writer's next commit.",
			func(s store.WriterStats) float64 { return s.Sync.Seconds() }),
		counter("mqgate_store_checkpoint_seconds_total", "Time the writer stood still for checkpoints (publishers wait meanwhile): a rewind's sync of the store file, the start of a rolling checkpoint, whose sync runs beside the writer.",
			func(s store.WriterStats) float64 { return s.CheckpointTime.Seconds() }),
		counter("mqgate_store_checkpoints_total", "Checkpoints made: syncs of the store file that move its log-ahead's start (docs/operations.md).",
			func(s store.WriterStats) float64 { return float64(s.Checkpoints) }),
		counter("mqgate_store_checkpoint_freelists_total", "Checkpoints that wrote the store file's freelist (all but those with more than 32,768 free pages): a start after a crash that recovers from one reads neither every page nor the whole tree (docs/operations.md).",
			func(s store.WriterStats) float64 { return float64(s.CheckpointFreelists) }),
		counter("mqgate_store_update_transactions_total", "Write transactions outside group commit (topic changes, retention steps, segment drops, consumer group changes), each followed by a checkpoint; publishers wait for each.",
			func(s store.WriterStats) float64 { return float64(s.Updates) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "mqgate_retention_passes_total",
			Help: "Retention cleaner passes; a pass that finds nothing expired adds no store write transaction."},
			func() float64 { return float64(eng.RetentionStats().Passes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "mqgate_retention_pass_seconds_total",
			Help: "Time the retention cleaner spent in its passes."},
			func() float64 { return eng.RetentionStats().Time.Seconds() }),
		counter("mqgate_store_commit_page_writes_total", "Page runs the writer's group commits wrote (each a scattered write its fsync pays for); divided by groups, the dirty pages per commit.",
			func(s store.WriterStats) float64 { return float64(s.PageWrites) }),
		counter("mqgate_store_commit_failures_total", "Group commits that failed (disk full, I/O error); their publishes were answered 503.",
			func(s store.WriterStats) float64 { return float64(s.CommitFailures) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mqgate_store_commit_failing",
			Help: "1 while the store cannot commit (the last group commit failed; /readyz answers 503), else 0."},
			func() float64 {
				if eng.WriterStats().Failing {
					return 1
				}
				return 0
			}),
		newCorruptCollector(eng), // corrupt_metrics.go
		newDiskCollector(eng),    // disk_metrics.go
	}
}

// Both backends are one interface to the HTTP layer (core.Backend).
var (
	_ core.Backend = (*embedded.Backend)(nil)
	_ core.Backend = (*jetstream.Backend)(nil)
)

// handleKeys loads --handle-key-file (nil when unset) and every
// --handle-previous-key-file.
func (m *Main) handleKeys() (key []byte, previous [][]byte, err error) {
	if m.Config.HandleKeyFile != "" {
		if key, err = gateway.LoadKeyFile(m.Config.HandleKeyFile); err != nil {
			return nil, nil, fmt.Errorf("--handle-key-file: %w", err)
		}
	}
	for _, f := range m.Config.HandlePreviousKeyFiles {
		k, err := gateway.LoadKeyFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("--handle-previous-key-file: %w", err)
		}
		previous = append(previous, k)
	}
	return key, previous, nil
}

// webhookOptions are the webhook pushers' settings, the same on every
// backend: the network guard flags, metrics in reg, and a Retry-After of
// d nacking with the first of levels at least d (never redelivered
// sooner than the receiver asked).
func (m *Main) webhookOptions(reg prometheus.Registerer, levels []time.Duration) webhook.Options {
	log := m.Logger // each pusher adds component=webhook (and group) itself
	return webhook.Options{
		Registerer:    reg,
		Logger:        &log,
		AllowLoopback: m.Config.WebhookAllowLoopback,
		AllowCIDRs:    m.Config.WebhookAllowCIDRs,
		DenyCIDRs:     m.Config.WebhookDenyCIDRs,
		DelayLevelFor: webhook.LevelAtLeast(levels),
		Tracer:        m.tracer,
	}
}
