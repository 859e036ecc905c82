package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mqgate/mqgate/core/engine"
)

// corruptCollector exposes mqgate_store_corrupt_records{topic}: the stored
// messages set aside because they failed their checksum when read (one
// series per topic, 0 included; topic "" counts records too damaged to
// place). Read from the store at scrape time.
type corruptCollector struct {
	eng  *engine.Engine
	desc *prometheus.Desc
}

func newCorruptCollector(eng *engine.Engine) *corruptCollector {
	return &corruptCollector{eng: eng, desc: prometheus.NewDesc("mqgate_store_corrupt_records",
		"Stored messages set aside because they failed their checksum when read (never delivered; GET /v1/topics/{topic}/corrupt lists them).",
		[]string{"topic"}, nil)}
}

func (c *corruptCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *corruptCollector) Collect(ch chan<- prometheus.Metric) {
	counts, err := c.eng.CorruptCounts()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for topic, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), topic)
	}
}
