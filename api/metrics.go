package api

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the HTTP layer's Prometheus series. Routes are chi
// patterns (/v1/topics/{topic}), never raw paths, so cardinality stays
// bounded whatever clients send.
type metrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	published     prometheus.Counter
	publishedSize prometheus.Counter
	publishCalls  *prometheus.CounterVec

	// series caches each (method, route, status)'s counter and histogram:
	// WithLabelValues hashes the labels and takes the vector's lock on
	// every call, on every request's path. Routes are patterns, so the
	// cache is as bounded as the series themselves.
	series sync.Map // requestSeriesKey -> *requestSeries, publishSeriesKey -> Counter
}

type requestSeriesKey struct {
	method, route string
	status        int
}

type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mqgate_http_requests_total",
			Help: "HTTP requests by method, route pattern and status code.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mqgate_http_request_duration_seconds",
			Help:    "HTTP request latency by method and route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route"}),
		published: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mqgate_published_messages_total",
			Help: "Messages accepted by publish calls (single and batch).",
		}),
		publishedSize: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mqgate_published_bytes_total",
			Help: "Body bytes of messages accepted by publish calls.",
		}),
		publishCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mqgate_publish_requests_total",
			Help: "Publish calls by kind (single, batch) and outcome (ok, error).",
		}, []string{"kind", "outcome"}),
	}
	reg.MustRegister(m.requests, m.duration, m.published, m.publishedSize, m.publishCalls)
	return m
}

func (m *metrics) observeRequest(method, route string, status int, d time.Duration) {
	key := requestSeriesKey{method, route, status}
	v, ok := m.series.Load(key)
	if !ok {
		v, _ = m.series.LoadOrStore(key, &requestSeries{
			count:    m.requests.WithLabelValues(method, route, strconv.Itoa(status)),
			duration: m.duration.WithLabelValues(method, route),
		})
	}
	rs := v.(*requestSeries)
	rs.count.Inc()
	rs.duration.Observe(d.Seconds())
}

func (m *metrics) observePublish(kind string, msgs, bytes int, err error) {
	if err != nil {
		m.publishCall(kind, "error").Inc()
		return
	}
	m.publishCall(kind, "ok").Inc()
	m.published.Add(float64(msgs))
	m.publishedSize.Add(float64(bytes))
}

type publishSeriesKey struct{ kind, outcome string }

// publishCall is publishCalls' series for kind and outcome, cached in
// series like observeRequest's (created on first use, as before).
func (m *metrics) publishCall(kind, outcome string) prometheus.Counter {
	key := publishSeriesKey{kind, outcome}
	if v, ok := m.series.Load(key); ok {
		return v.(prometheus.Counter)
	}
	v, _ := m.series.LoadOrStore(key, m.publishCalls.WithLabelValues(kind, outcome))
	return v.(prometheus.Counter)
}
