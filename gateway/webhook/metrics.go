package webhook

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Request outcomes, the "outcome" label of mqgate_webhook_requests_total
// and the Outcome of Status.LastOutcome.
const (
	OutcomeSuccess    = "success"    // 2xx: messages acked
	OutcomeStatus     = "status"     // any other status code
	OutcomeRedirect   = "redirect"   // 3xx, never followed
	OutcomeThrottled  = "throttled"  // 429/503 with Retry-After: group paused
	OutcomeTimeout    = "timeout"    // push.timeoutSeconds passed
	OutcomeConnection = "connection" // DNS, connect, TLS, reset...
	OutcomeBlocked    = "blocked"    // the network guard refused the address
	OutcomeCancelled  = "cancelled"  // the pusher was closed mid-request
)

// metrics are the collectors shared by all pushers of one Registerer.
type metrics struct {
	requests *prometheus.CounterVec
	messages *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mqgate_webhook_requests_total",
			Help: "Webhook POSTs by group and outcome (success, status, redirect, throttled, timeout, connection, blocked, cancelled).",
		}, []string{"group", "outcome"}),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mqgate_webhook_messages_total",
			Help: "Messages answered by webhook pushers: result acked (2xx) or nacked (retried later).",
		}, []string{"group", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mqgate_webhook_request_duration_seconds",
			Help:    "Time from sending a webhook POST to its answer (or failure), by group.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"group"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mqgate_webhook_in_flight_requests",
			Help: "Webhook POSTs currently waiting for an answer, by group.",
		}, []string{"group"}),
	}
	var err error
	m.requests = register(reg, m.requests, &err)
	m.messages = register(reg, m.messages, &err)
	m.latency = register(reg, m.latency, &err)
	m.inFlight = register(reg, m.inFlight, &err)
	return m, err
}

// register registers c, or adopts the collector already registered under
// the same name (the pusher of another group came first).
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	if *errp == nil {
		*errp = err
	}
	return c
}

// groupMetrics is one pusher's view; nil-safe so a pusher without a
// Registerer skips metrics.
type groupMetrics struct {
	m     *metrics
	group string
}

func (g *groupMetrics) request(outcome string, d time.Duration) {
	if g == nil {
		return
	}
	g.m.requests.WithLabelValues(g.group, outcome).Inc()
	g.m.latency.WithLabelValues(g.group).Observe(d.Seconds())
}

func (g *groupMetrics) answered(acked bool, n int) {
	if g == nil {
		return
	}
	result := "nacked"
	if acked {
		result = "acked"
	}
	g.m.messages.WithLabelValues(g.group, result).Add(float64(n))
}

func (g *groupMetrics) inFlight(delta int) {
	if g == nil {
		return
	}
	g.m.inFlight.WithLabelValues(g.group).Add(float64(delta))
}

// forget drops the group's series when its pusher closes (group deleted or
// no longer a push group), so /metrics does not keep dead groups.
func (g *groupMetrics) forget() {
	if g == nil {
		return
	}
	l := prometheus.Labels{"group": g.group}
	g.m.requests.DeletePartialMatch(l)
	g.m.messages.DeletePartialMatch(l)
	g.m.latency.DeletePartialMatch(l)
	g.m.inFlight.DeletePartialMatch(l)
}
