package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// profiler serves net/http/pprof on a listener of its own (--pprof-addr),
// never on the API's: profiles expose internals and cost CPU, so they are
// opt-in and meant for a loopback or admin-only address.
type profiler struct {
	ln     net.Listener
	srv    *http.Server
	served chan struct{} // closed when Serve returns
}

// startProfiler binds addr and serves the pprof handlers in the
// background. The bind happens here so a bad address fails Run.
func startProfiler(addr string) (*profiler, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	p := &profiler{ln: ln, served: make(chan struct{}),
		// No WriteTimeout: /debug/pprof/profile?seconds=30 streams for as
		// long as asked.
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // ErrServerClosed on Close; nothing else to report
	}()
	return p, nil
}

// Addr is the bound address (useful with port 0).
func (p *profiler) Addr() string { return p.ln.Addr().String() }

// Close stops the listener and any profile in progress, and waits for the
// serve goroutine.
func (p *profiler) Close() error {
	err := p.srv.Close()
	<-p.served
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
