package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mqgate/mqgate/core/engine"
)

// diskCollector exposes the store file's figures (docs/operations.md,
// "Disk use"), read once per scrape (a stat and bbolt's counters).
type diskCollector struct {
	eng                               *engine.Engine
	file, highWater, live, free, pend *prometheus.Desc
	segments, oldest                  *prometheus.Desc
}

func newDiskCollector(eng *engine.Engine) *diskCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &diskCollector{eng: eng,
		file:      d("mqgate_store_file_bytes", "Size of the store file on disk (bbolt grows it ahead of use and never shrinks it; mqgate compact does)."),
		highWater: d("mqgate_store_high_water_bytes", "Bytes of the store file below bbolt's high-water mark (pages in use or free)."),
		live:      d("mqgate_store_live_bytes", "Estimated data in the store file: pages below the high-water mark that are not free."),
		free:      d("mqgate_store_free_pages", "Free pages bbolt reuses before it grows the file (retention and topic deletion free them)."),
		pend:      d("mqgate_store_pending_pages", "Pages freed but still seen by an open read transaction (a long backup holds them)."),
		segments:  d("mqgate_store_segments", "Segments of the store's commit log; retention and topic deletion free disk a whole segment at a time."),
		oldest:    d("mqgate_store_oldest_segment_timestamp_seconds", "Store time of the oldest segment's first message (unix seconds; 0 without segments)."),
	}
}

func (c *diskCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.file, c.highWater, c.live, c.free, c.pend, c.segments, c.oldest} {
		ch <- d
	}
}

func (c *diskCollector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.eng.DiskStats()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.file, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(c.file, float64(st.FileBytes))
	gauge(c.highWater, float64(st.HighWaterBytes))
	gauge(c.live, float64(st.LiveBytes))
	gauge(c.free, float64(st.FreePages))
	gauge(c.pend, float64(st.PendingPages))
	gauge(c.segments, float64(st.Segments))
	gauge(c.oldest, float64(st.OldestSegmentMillis)/1000)
}
