package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/tracing"
)

// startTracing builds the OpenTelemetry tracer when the OTEL_* variables
// ask for traces (tracing.Enabled: an OTLP endpoint set, or
// OTEL_TRACES_EXPORTER=otlp); m.tracer stays nil otherwise and nothing
// traces. The exporter connects lazily: an unreachable collector never
// fails the start, it only drops spans.
func (m *Main) startTracing() error {
	t, err := tracing.Start(context.Background(), Version())
	if err != nil {
		return fmt.Errorf("tracing (OTEL_*): %w", err)
	}
	m.tracer = t
	if t != nil {
		ep := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
		if ep == "" {
			ep = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		}
		if ep == "" {
			ep = "http://localhost:4318 (default)"
		}
		m.Logger.Info().Str("endpoint", ep).Msg("tracing on: OTLP/HTTP spans")
	}
	return nil
}

// deadLettered is the engine's DeadLettered hook: the dlq span when
// tracing is on, nothing (nil) otherwise.
func (m *Main) deadLettered() func(string, *core.Message) {
	if m.tracer == nil {
		return nil
	}
	return m.tracer.DeadLettered
}

// groupCommitted is the engine's GroupCommitted hook: one commit span
// per group commit when tracing is on, nothing (nil) otherwise.
func (m *Main) groupCommitted() func(time.Time, []context.Context, int, error) {
	if m.tracer == nil {
		return nil
	}
	return m.tracer.GroupCommitted
}
