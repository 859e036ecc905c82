package api

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mqgate/mqgate/core"
)

// MaxLagSeries caps the (group, topic) pairs the lag gauges show per
// scrape: the pairs with the largest lag win, the rest are counted in
// mqgate_group_lag_series_dropped. The cap bounds both the series
// Prometheus stores and the reads a scrape does (one per lagging queue).
const MaxLagSeries = 500

// lagCollector exposes, at scrape time, each consumer group's lag and the
// age of its oldest unacknowledged message per subscribed topic (the
// group's retry topic included). BROADCASTING groups keep offsets per
// consumerId and are left out (their consumers' count is unbounded).
type lagCollector struct {
	engine core.TopicService
	groups core.GroupService
	now    func() time.Time

	lag, oldest, dropped *prometheus.Desc
}

func newLagCollector(eng core.TopicService, groups core.GroupService) *lagCollector {
	return &lagCollector{
		engine: eng, groups: groups, now: time.Now,
		lag: prometheus.NewDesc("mqgate_group_lag",
			"Messages of the topic the group has not finished (acked or dead-lettered), summed over queues.",
			[]string{"group", "topic"}, nil),
		oldest: prometheus.NewDesc("mqgate_group_oldest_unacked_age_seconds",
			"Age (since it was stored) of the group's oldest unfinished message of the topic; 0 without lag.",
			[]string{"group", "topic"}, nil),
		dropped: prometheus.NewDesc("mqgate_group_lag_series_dropped",
			"(group, topic) pairs left out of mqgate_group_lag this scrape by the cap of 500 (smallest lag first).",
			nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.oldest
	ch <- c.dropped
}

type lagRow struct {
	group, topic string
	lag          int64
	queues       []core.QueueOffset // the lagging ones
}

// Collect implements prometheus.Collector.
func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	if c.groups == nil || c.engine == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dlqScrapeTimeout)
	defer cancel()
	gs, err := c.groups.GroupList(ctx)
	if err != nil {
		return
	}
	var rows []lagRow
	for _, g := range gs {
		if g.MessageModel == core.Broadcasting {
			continue
		}
		offs, err := c.groups.Offsets(ctx, g.Name, "")
		if err != nil {
			continue
		}
		byTopic := map[string]*lagRow{}
		var order []string
		for _, o := range offs {
			r := byTopic[o.Queue.Topic]
			if r == nil {
				r = &lagRow{group: g.Name, topic: o.Queue.Topic}
				byTopic[o.Queue.Topic] = r
				order = append(order, o.Queue.Topic)
			}
			r.lag += o.Lag
			if o.Lag > 0 {
				r.queues = append(r.queues, o)
			}
		}
		for _, t := range order {
			rows = append(rows, *byTopic[t])
		}
	}
	dropped := 0
	if len(rows) > MaxLagSeries {
		slices.SortStableFunc(rows, func(a, b lagRow) int {
			switch {
			case a.lag > b.lag:
				return -1
			case a.lag < b.lag:
				return 1
			}
			return 0
		})
		dropped = len(rows) - MaxLagSeries
		rows = rows[:MaxLagSeries]
	}
	now := c.now()
	for _, r := range rows {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(r.lag), r.group, r.topic)
		age := 0.0
		for _, q := range r.queues {
			// The committed offset is the queue's first unfinished message.
			res, err := c.engine.GetMessages(q.Queue, q.Committed, 1, core.MatchAll)
			if err != nil || len(res.Messages) == 0 {
				continue
			}
			age = max(age, now.Sub(res.Messages[0].StoredAt).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age, r.group, r.topic)
	}
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.GaugeValue, float64(dropped))
}
