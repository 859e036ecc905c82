package api

import (
	"context"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/prometheus/client_golang/prometheus"
)

// ScheduleCounters is what /metrics shows of the engine's schedule service
// and retry path: counts since the engine opened (so they restart at 0
// with the process, as Prometheus counters may). api does not import
// core/engine; the fields mirror engine.Counters one for one, so cmd/mqgate
// converts with api.ScheduleCounters(eng.Counters()).
type ScheduleCounters struct {
	// Delayed counts messages published with a delay level or a future
	// deliverAt / delaySeconds; Timers is the part of them kept in the
	// timer index (RocketMQ 5 timer messages).
	Delayed, Timers int64
	// Delivered counts delayed messages (retries included) moved to their
	// real topic when due; Dropped those whose real topic was gone.
	Delivered, Dropped int64
	// Skipped counts unreadable schedule entries passed over.
	Skipped int64
	// Retried counts sendMessageBack copies to %RETRY%<group>, DeadLettered
	// copies to %DLQ%<group>, Redriven dead letters sent back.
	Retried, DeadLettered, Redriven int64
}

// dlqScrapeTimeout bounds the group listing a scrape does for the DLQ
// depth gauges; a slow store must not hang /metrics.
const dlqScrapeTimeout = 5 * time.Second

// scheduleCollector reads the counters and every group's DLQ depth at
// scrape time (a prometheus.Collector), so nothing is pushed from the
// engine's hot paths and the figures are never stale.
type scheduleCollector struct {
	counters func() ScheduleCounters // nil: the counter series are absent
	engine   core.DeadLetterService
	groups   core.GroupService // nil: no DLQ depth series

	delayed, delivered, dropped, skipped, retried, deadLettered, redriven, dlqDepth *prometheus.Desc
}

func newScheduleCollector(counters func() ScheduleCounters, eng core.DeadLetterService, groups core.GroupService) *scheduleCollector {
	return &scheduleCollector{
		counters: counters, engine: eng, groups: groups,
		delayed: prometheus.NewDesc("mqgate_delayed_messages_total",
			"Messages published with a delay, by kind: level (delayLevel, SCHEDULE_TOPIC_XXXX) or timer (deliverAt / delaySeconds).",
			[]string{"kind"}, nil),
		delivered: prometheus.NewDesc("mqgate_delayed_delivered_total",
			"Delayed messages (retries included) moved to their real topic when due.", nil, nil),
		dropped: prometheus.NewDesc("mqgate_delayed_dropped_total",
			"Delayed messages dropped when due because their real topic was gone.", nil, nil),
		skipped: prometheus.NewDesc("mqgate_delayed_skipped_total",
			"Unreadable schedule entries passed over (logged).", nil, nil),
		retried: prometheus.NewDesc("mqgate_retried_messages_total",
			"Failed messages sent back to a group's retry topic (%RETRY%group).", nil, nil),
		deadLettered: prometheus.NewDesc("mqgate_dead_lettered_messages_total",
			"Messages moved to a group's dead-letter topic (%DLQ%group).", nil, nil),
		redriven: prometheus.NewDesc("mqgate_redriven_messages_total",
			"Dead letters redriven back to their group.", nil, nil),
		dlqDepth: prometheus.NewDesc("mqgate_dlq_depth",
			"Dead letters of a group waiting for inspection or redrive.", []string{"group"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *scheduleCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.delayed, c.delivered, c.dropped, c.skipped, c.retried, c.deadLettered, c.redriven, c.dlqDepth} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *scheduleCollector) Collect(ch chan<- prometheus.Metric) {
	if c.counters != nil {
		n := c.counters()
		counter := func(d *prometheus.Desc, v int64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
		}
		counter(c.delayed, n.Delayed-n.Timers, "level")
		counter(c.delayed, n.Timers, "timer")
		counter(c.delivered, n.Delivered)
		counter(c.dropped, n.Dropped)
		counter(c.skipped, n.Skipped)
		counter(c.retried, n.Retried)
		counter(c.deadLettered, n.DeadLettered)
		counter(c.redriven, n.Redriven)
	}
	if c.groups == nil || c.engine == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dlqScrapeTimeout)
	defer cancel()
	gs, err := c.groups.GroupList(ctx)
	if err != nil {
		return // the scrape shows the rest; /readyz reports a broken store
	}
	for _, g := range gs {
		if n, err := c.engine.DLQDepth(g.Name); err == nil {
			ch <- prometheus.MustNewConstMetric(c.dlqDepth, prometheus.GaugeValue, float64(n), g.Name)
		}
	}
}
