package webhook

import (
	"crypto/tls"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core/policy"
	"github.com/mqgate/mqgate/internal/tracing"
)

// Options are the gateway-wide settings of webhook pushers (the per-group
// settings come from core.PushConfig). The zero value is usable: no
// metrics, no logging, default network guard.
type Options struct {
	// Registerer receives the pushers' metrics (mqgate_webhook_*). Pushers
	// of several groups share one set of collectors, labelled by group.
	// Nil: no metrics.
	Registerer prometheus.Registerer

	// Logger logs delivery state changes (first failure, recovery,
	// Retry-After pauses), never one line per message. Default: none.
	Logger *zerolog.Logger

	// AllowLoopback lets webhooks reach 127.0.0.0/8 and ::1 (tests, local
	// development; flag --webhook-allow-loopback).
	AllowLoopback bool
	// AllowCIDRs are networks (or single addresses) a webhook may reach
	// even when a deny network holds them.
	AllowCIDRs []string
	// DenyCIDRs are networks refused in addition to the defaults
	// (loopback, "this host", link-local and metadata addresses,
	// multicast, broadcast).
	DenyCIDRs []string

	// DelayLevelFor picks the Nack delay level for a Retry-After of d: a
	// level whose delay is at least d, so the engine does not redeliver
	// sooner than the receiver asked. Nil: 0 (the engine's own ladder).
	// See LevelAtLeast.
	DelayLevelFor func(d time.Duration) int

	// MaxRetryAfter caps how long one Retry-After can pause a group.
	// Default 1h.
	MaxRetryAfter time.Duration

	// MaxResponseBytes is how much of a response body is read (and then
	// discarded) so the connection can be reused. Default 64 KiB.
	MaxResponseBytes int64

	// TLSConfig is used for https receivers (e.g. private CAs). Nil: the
	// system roots.
	TLSConfig *tls.Config

	// UserAgent is sent on every request. Default "mqgate-webhook/1".
	UserAgent string

	// Tracer, when set, records a span per push request (trace.go) and
	// sends its context as the traceparent header. Nil: tracing off; a
	// request of one message still carries that message's stored
	// traceparent.
	Tracer *tracing.Tracer
}

func (o Options) withDefaults() Options {
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = time.Hour
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 64 << 10
	}
	if o.UserAgent == "" {
		o.UserAgent = "mqgate-webhook/1"
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
	return o
}

// LevelAtLeast returns a DelayLevelFor over the engine's delay levels
// (levels[0] is level 1, RocketMQ messageDelayLevel): policy.LevelAtLeast,
// the lowest level whose delay is at least d, or the highest level when
// none is.
func LevelAtLeast(levels []time.Duration) func(d time.Duration) int {
	ls := append([]time.Duration(nil), levels...)
	return func(d time.Duration) int { return policy.LevelAtLeast(ls, d) }
}
