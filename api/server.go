package api

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-playground/validator/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
	"golang.org/x/sync/semaphore"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/auth"
	"github.com/mqgate/mqgate/internal/quota"
	"github.com/mqgate/mqgate/internal/tracing"
)

// Options configures the HTTP API.
type Options struct {
	// Backend serves everything below HTTP (core.Backend, the seam):
	// backend/embedded or backend/jetstream. Required; without it only
	// /healthz, /readyz and request validation work, and consumption
	// routes answer 503.
	Backend core.Backend
	// Logger receives request logs and internal errors; default zerolog.Nop().
	Logger *zerolog.Logger
	// Version is reported by /healthz.
	Version string
	// Registry collects the metrics served at /metrics. Default: a new
	// registry with the Go runtime and process collectors.
	Registry *prometheus.Registry
	// ScheduleCounters, when set, is read at each /metrics scrape for the
	// delayed / retried / dead-lettered / redriven counters (cmd/mqgate:
	// func() api.ScheduleCounters { return api.ScheduleCounters(eng.Counters()) }).
	ScheduleCounters func() ScheduleCounters
	// OpenAPI is the OpenAPI 3 document served at /openapi.json and read
	// by /docs. Default: none (404).
	OpenAPI []byte
	// Ready, when set, is asked by /readyz: an error turns it 503 (e.g.
	// the store cannot commit). Default: ready until shutdown.
	Ready func() error
	// BodyReadTimeout bounds how long reading a request body may take
	// from the moment the handler starts reading it; a body that has not
	// fully arrived by then (a slow client, a Content-Length larger than
	// what is sent) answers 408. Default 30 s.
	BodyReadTimeout time.Duration
	// NoAccessLog turns off the per-request log line (info level; a 5xx
	// is still logged, at warn). Default: every request is logged.
	NoAccessLog bool
	// Keys, when set, guards every /v1 route with API keys (auth.go):
	// 401 without a known bearer key, 403 without the route's grant.
	// Default: none, /v1 is open to anyone who can reach it.
	Keys *auth.Keyring
	// LimitScope says what the keys' limits (internal/quota) count, as
	// GET /v1/admin/limits reports it: "server" when this process is the
	// only gateway (embedded), "instance" when each of several gateways
	// counts on its own (jetstream). Default "server".
	LimitScope string
	// Backup serves GET /v1/admin/backup (the engine). Without it the
	// route answers 503.
	Backup Backuper
	// WriteTimeout is the server's http.Server.WriteTimeout: a long-poll
	// receive moves its own write deadline to its wait plus this, so the
	// wait is never cut and a client that does not read the answer still
	// is. Default 30s.
	WriteTimeout time.Duration
	// Streams configures the WebSocket streams (stream.go): the Origin
	// allow-list, the caps and the ping interval.
	Streams StreamOptions
	// Tracer, when set, records the publish, commit, receive and
	// settlement spans (api/trace.go). Nil: tracing off, and no tracing
	// work at all on any request.
	Tracer *tracing.Tracer
	// GroupCommitSpans says the engine records the durable commit as one
	// span per group commit (engine.Options.GroupCommitted, the embedded
	// store); otherwise a traced publish records its own commit span
	// (JetStream: the wait for the publish acks).
	GroupCommitSpans bool
}

// DefaultBodyReadTimeout is Options.BodyReadTimeout's default.
const DefaultBodyReadTimeout = 30 * time.Second

// Server is the HTTP API as an http.Handler.
type Server struct {
	backend  core.Backend
	log      zerolog.Logger
	version  string
	openapi  []byte
	registry *prometheus.Registry
	metrics  *metrics
	validate *validator.Validate
	handler  http.Handler
	mux      *chi.Mux      // handler, for the routing context ServeHTTP sets up
	keys     *auth.Keyring // nil: /v1 is open
	quotas   *quota.Quotas // the keys' limits; nil without keys
	scope    string        // Options.LimitScope
	noAccess bool          // Options.NoAccessLog
	ready    func() error  // Options.Ready; nil: always ready

	bodyTimeout time.Duration   // Options.BodyReadTimeout
	backup      Backuper        // nil: no backups
	writeTTL    time.Duration   // WriteTimeout, added to a receive's wait
	tracer      *tracing.Tracer // Options.Tracer; nil: tracing off
	groupSpans  bool            // Options.GroupCommitSpans

	streamOpts StreamOptions  // Options.Streams, with defaults
	streams    streamRegistry // the live WebSocket streams
	// publishAhead holds StreamOptions.PublishAhead bytes; each publish
	// frame read takes its share until the store has answered it.
	publishAhead *semaphore.Weighted

	// shuttingDown turns /readyz to 503 so load balancers stop sending
	// new work while in-flight requests finish.
	shuttingDown atomic.Bool
}

// New builds the API. It starts no goroutines.
func New(opts Options) *Server {
	s := &Server{
		backend:  opts.Backend,
		log:      zerolog.Nop(),
		version:  opts.Version,
		openapi:  opts.OpenAPI,
		registry: opts.Registry,
		validate: newValidator(),
		keys:     opts.Keys,
		noAccess: opts.NoAccessLog,
		ready:    opts.Ready,

		backup: opts.Backup,

		bodyTimeout: opts.BodyReadTimeout,
		writeTTL:    opts.WriteTimeout,
		streamOpts:  opts.Streams,
		tracer:      opts.Tracer,
		groupSpans:  opts.GroupCommitSpans,
	}
	s.streamOpts.defaults()
	s.publishAhead = semaphore.NewWeighted(s.streamOpts.PublishAhead)
	if s.bodyTimeout <= 0 {
		s.bodyTimeout = DefaultBodyReadTimeout
	}
	if s.writeTTL <= 0 {
		s.writeTTL = 30 * time.Second
	}
	if opts.Logger != nil {
		s.log = *opts.Logger
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
		s.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s.metrics = newMetrics(s.registry)
	s.streams.registerMetrics(s.registry)
	if s.keys != nil {
		s.quotas = quota.New(s.keys, quota.NewMetrics(s.registry))
	}
	s.scope = opts.LimitScope
	if s.scope == "" {
		s.scope = LimitScopeServer
	}
	s.registry.MustRegister(newScheduleCollector(opts.ScheduleCounters, s.backend, s.backend))
	s.registry.MustRegister(newLagCollector(s.backend, s.backend))
	s.mux = s.routes()
	s.handler = s.mux
	return s
}

// ServeHTTP serves one request. It gives the request its requestState,
// which also carries chi's routing context (taken from a pool and put back,
// as chi's own ServeHTTP does): the request is copied once for both, where
// chi and instrument each copied it and chi added a context of its own.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := s.newRequestState(w, r)
	st.route = routeContexts.Get().(*chi.Context)
	st.route.Reset()
	st.route.Routes = s.mux
	s.handler.ServeHTTP(w, r.WithContext(st))
	routeContexts.Put(st.route)
}

// routeContexts are chi routing contexts, reused across requests.
var routeContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// SetShuttingDown makes /readyz answer 503 from now on; call it when
// graceful shutdown begins, before the listener closes.
//
// It also closes every WebSocket stream with 1001 "server shutting down"
// (their unsettled leases run out, as REST leases do) and waits, up to
// streamShutdownWait, for them to end: http.Server.Shutdown does not see
// hijacked connections.
func (s *Server) SetShuttingDown() {
	s.shuttingDown.Store(true)
	s.streams.closeAll(streamShutdownWait)
}

// streamShutdownWait bounds how long SetShuttingDown waits for the
// streams' close handshakes.
const streamShutdownWait = 5 * time.Second
