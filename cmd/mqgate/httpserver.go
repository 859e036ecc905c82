package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// The one HTTP set-up of both backends (embedded and jetstream): TLS,
// HTTP/2 (over TLS by ALPN, or cleartext with --h2c), the timeouts, the
// error log and the pprof listener. Each backend builds its handler; this
// file serves it.

// loadTLS reads --tls-cert / --tls-key (nil, nil when neither is set).
func (m *Main) loadTLS() (*tls.Config, error) {
	if m.Config.TLSCert == "" && m.Config.TLSKey == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(m.Config.TLSCert, m.Config.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert / --tls-key: %w", err)
	}
	// HTTP/2 is offered over TLS (net/http's ALPN); TLS 1.2 at least.
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// newHTTPServer is the API's http.Server around handler.
func (m *Main) newHTTPServer(handler http.Handler, tlsConfig *tls.Config, httpLog zerolog.Logger) *http.Server {
	srv := &http.Server{
		Handler: handler,
		// Slow clients cannot hold a connection forever sending headers
		// or a body, nor receiving an answer: a client that does not read
		// its response is cut after WriteTimeout, which frees the
		// response's memory. Long-poll receives wait up to 30 s and move
		// their own deadline to wait + WriteTimeout
		// (http.ResponseController, api/consume.go).
		ReadHeaderTimeout: 10 * time.Second,
		// A backstop only: the handler bounds the body itself
		// (--body-read-timeout, answered 408 as problem+json).
		ReadTimeout:    10*time.Second + 2*m.Config.BodyReadTimeout,
		WriteTimeout:   m.Config.WriteTimeout,
		IdleTimeout:    m.Config.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       newStdLogger(httpLog),
		TLSConfig:      tlsConfig,
	}
	if m.Config.H2C && tlsConfig == nil {
		// The standard library's own h2c (Go 1.24+): HTTP/2 with prior
		// knowledge beside HTTP/1.1 on one cleartext port.
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Protocols = &p
	}
	return srv
}

// serveHTTP serves srv on ln in the background (TLS when srv has a TLS
// config); the channel yields Serve's error, if any, and is closed when
// the serve goroutine ends (after Shutdown or Close).
func serveHTTP(srv *http.Server, ln net.Listener) chan error {
	served := make(chan error, 1)
	go func() {
		defer close(served)
		serve := srv.Serve
		if srv.TLSConfig != nil {
			serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
		}
		if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			served <- err
		}
	}()
	return served
}

// startPprof starts --pprof-addr's profiler, if set.
func (m *Main) startPprof() error {
	if m.Config.PprofAddr == "" {
		return nil
	}
	p, err := startProfiler(m.Config.PprofAddr)
	if err != nil {
		return err
	}
	m.pprof = p
	m.Logger.Info().Str("addr", p.Addr()).Msg("pprof listening")
	return nil
}
