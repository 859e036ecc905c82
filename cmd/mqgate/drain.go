package main

import (
	"errors"
	"flag"
	"time"
)

// Draining for load balancers and Kubernetes. On SIGTERM a load balancer
// (or the Endpoints controller) still sends traffic for a while: it learns
// of the shutdown only from a failing /readyz or from an endpoint update
// that takes seconds to reach every node. --shutdown-delay covers that
// window: /readyz answers 503 at once while the listener keeps serving
// every request for the delay, and only then does the graceful shutdown
// (Close) start. Default 0 (the listener closes at once); the Helm chart
// sets it and sizes terminationGracePeriodSeconds to delay + timeout.

// drainFlags declares the draining flags over c (called by serveFlags).
func drainFlags(fs *flag.FlagSet, c *Config) {
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", c.ShutdownDelay,
		"on SIGTERM, answer /readyz 503 but keep serving this long before shutting down (load balancers and Kubernetes endpoints catch up); 0 shuts down at once")
}

// drainProblems checks the draining flags (part of Config.problems).
func (c Config) drainProblems() []error {
	if c.ShutdownDelay < 0 {
		return []error{errors.New("--shutdown-delay must not be negative")}
	}
	return nil
}

// shutdownDelay is the first step of a signalled shutdown: /readyz turns
// 503 and the server goes on serving for Config.ShutdownDelay, or until
// it stops on its own (a second signal meanwhile kills the process: serve
// has restored the default action). It returns at once when the delay is
// 0 or nothing is serving.
func (m *Main) shutdownDelay() {
	d := m.Config.ShutdownDelay
	if d <= 0 {
		return
	}
	switch {
	case m.api != nil && m.http != nil:
		m.api.SetShuttingDown()
	case m.js != nil && m.js.api != nil:
		m.js.api.SetShuttingDown()
	default:
		return
	}
	m.Logger.Info().Dur("delay", d).Msg("shutdown delay: /readyz answers 503, still serving")
	if m.logw != nil {
		m.logw.flush()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-m.served: // the listener failed: nothing to keep serving
	}
}
