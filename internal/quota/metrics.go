package quota

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// MaxKeySeries caps the keys that get series of their own; the keys past
// it (in key-file order) share the key label "_other". Key names come
// from the operator's file, so the label is bounded anyway; the cap keeps
// a file of thousands of keys from making thousands of series.
const MaxKeySeries = 100

// OtherKey is the key label of the keys past MaxKeySeries.
const OtherKey = "_other"

const (
	outcomeAllowed  = "allowed"
	outcomeDelayed  = "delayed"
	outcomeRejected = "rejected"
)

// Metrics are the quota series: mqgate_quota_requests_total{key, op,
// outcome}, op publish, receive or stream, outcome allowed, delayed or rejected.
type Metrics struct {
	requests *prometheus.CounterVec

	mu    sync.Mutex
	known map[string]*keySeries // key label -> series
}

// NewMetrics registers the quota series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mqgate_quota_requests_total",
			Help: "Requests checked against API-key limits, by key (at most 100 keys, the rest as _other), op (publish, receive, stream) and outcome (allowed, delayed, rejected).",
		}, []string{"key", "op", "outcome"}),
		known: map[string]*keySeries{},
	}
	reg.MustRegister(m.requests)
	return m
}

// keySeries are one key label's counters, resolved once.
type keySeries struct {
	c map[[2]string]prometheus.Counter // {op, outcome}
}

func (s *keySeries) count(op, outcome string) {
	if s != nil {
		s.c[[2]string{op, outcome}].Inc()
	}
}

// forKeys gives each key name its series (the first MaxKeySeries their
// own, the rest _other's) and deletes the series of labels no longer used.
func (m *Metrics) forKeys(names []string) map[string]*keySeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*keySeries, len(names))
	used := map[string]bool{}
	for i, n := range names {
		label := n
		if i >= MaxKeySeries {
			label = OtherKey
		}
		s := m.known[label]
		if s == nil {
			s = &keySeries{c: map[[2]string]prometheus.Counter{}}
			for _, op := range []string{"publish", "receive", "stream"} {
				for _, o := range []string{outcomeAllowed, outcomeDelayed, outcomeRejected} {
					s.c[[2]string{op, o}] = m.requests.WithLabelValues(label, op, o)
				}
			}
			m.known[label] = s
		}
		used[label] = true
		out[n] = s
	}
	for label := range m.known {
		if !used[label] {
			m.requests.DeletePartialMatch(prometheus.Labels{"key": label})
			delete(m.known, label)
		}
	}
	return out
}
