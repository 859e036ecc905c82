package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/internal/auth"
	"github.com/mqgate/mqgate/openapi"
)

// jsRun is what `mqgate serve --backend jetstream` runs: the HTTP API over
// backend/jetstream, no local store. Any number of these serve one
// cluster; they share only the handle key.
type jsRun struct {
	b      *jetstream.Backend
	api    *api.Server
	ln     net.Listener
	http   *http.Server
	served chan error
}

func (m *Main) runJetStream() error {
	var keyring *auth.Keyring
	if m.Config.APIKeys != "" {
		kr, err := auth.OpenKeyring(m.Config.APIKeys)
		if err != nil {
			return fmt.Errorf("--api-keys: %w", err)
		}
		keyring = kr
	}
	key, previous, err := m.handleKeys()
	if err != nil {
		return err
	}
	tlsConfig, err := m.loadTLS()
	if err != nil {
		return err
	}
	levels, err := engine.ParseDelayLevels(m.Config.DelayLevels)
	if err != nil {
		return fmt.Errorf("--delay-levels: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := jetstream.Open(ctx, jetstream.Options{
		URL: m.Config.NATSURL, Creds: m.Config.NATSCreds, Key: key, PreviousKeys: previous, Replicas: m.Config.NATSReplicas,
		DelayLevels: levels, MaxDelay: m.Config.MaxDelay, Logger: m.component("jetstream"),
		MaxWaitingPerGroup: m.Config.MaxWaitingPerGroup, MaxWaiting: m.Config.MaxWaiting,
		MaxAtomicBatch: m.Config.NATSMaxBatch, DedupWindow: m.Config.DedupWindow,
		Timeline: m.Config.TimelineEvents > 0,
	})
	if err != nil {
		return err
	}
	r := &jsRun{b: b}
	m.js = r
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Push (webhook) groups run on every instance over the shared
	// consumers (each message is delivered once overall), with the
	// embedded gateway's pusher: the same flags, guard and metrics.
	if err := b.StartPush(jetstream.PushOptions{Webhook: m.webhookOptions(metrics, levels)}); err != nil {
		return fmt.Errorf("start webhook pushers: %w", err)
	}
	httpLog := m.component("http")
	r.api = api.New(api.Options{Backend: b, Logger: &httpLog, Version: Version(),
		OpenAPI: openapi.Document, Registry: metrics, Keys: keyring,
		NoAccessLog: !m.Config.AccessLog, BodyReadTimeout: m.Config.BodyReadTimeout,
		WriteTimeout: m.Config.WriteTimeout, Streams: m.Config.streamOptions(), Tracer: m.tracer,
		// Each gateway in front of the stream counts the keys' limits on
		// its own (docs/quotas.md).
		LimitScope: api.LimitScopeInstance})
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	m.ln, r.ln = ln, ln
	// The same server set-up as embedded (httpserver.go): TLS, HTTP/2,
	// timeouts, pprof.
	r.http = m.newHTTPServer(readyzNATS(r.api, b), tlsConfig, httpLog)
	r.served = serveHTTP(r.http, ln)
	m.served = r.served
	if err := m.startPprof(); err != nil {
		return err
	}
	m.Logger.Info().Str("addr", ln.Addr().String()).Str("backend", "jetstream").
		Bool("tls", tlsConfig != nil).Bool("h2c", r.http.Protocols != nil).
		Str("nats", m.Config.NATSURL).Str("version", Version()).Msg("listening")
	if keyring != nil {
		m.keys = startKeyReloader(keyring, m.component("auth"))
	} else {
		m.Logger.Warn().Msg("no --api-keys: /v1 is open to anyone who can reach this address")
	}
	if m.logw != nil {
		m.logw.flush()
	}
	return nil
}

// readyzNATS answers /readyz 503 while the NATS connection or JetStream is
// down, so a load balancer takes this instance out; everything else goes
// to the API (which answers /readyz itself when NATS is fine).
func readyzNATS(next http.Handler, b *jetstream.Backend) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			if err := b.Ready(r.Context()); err != nil {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":%q}`, "NATS: "+err.Error())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (m *Main) closeJetStream(ctx context.Context) error {
	r := m.js
	m.js = nil
	var errs []error
	if r.http != nil {
		r.api.SetShuttingDown()
		r.b.Drain()
		if err := r.http.Shutdown(ctx); err != nil {
			errs = append(errs, err)
			_ = r.http.Close()
		}
		<-r.served
	}
	m.ln = nil
	errs = append(errs, r.b.Close(ctx))
	return errors.Join(errs...)
}
