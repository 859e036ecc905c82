package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

// fsCollector exposes the free and total space of the file system that
// holds the data directory, read at scrape time (one statfs): the store
// stops committing when it is full (/readyz 503, publishes 503), so "disk
// nearly full" is worth an alert before that (deploy/prometheus).
type fsCollector struct {
	dir         string
	avail, size *prometheus.Desc
}

func newFSCollector(dir string) *fsCollector {
	return &fsCollector{dir: dir,
		avail: prometheus.NewDesc("mqgate_data_fs_avail_bytes", "Bytes free for the server on the file system of the data directory (statfs f_bavail).", nil, nil),
		size:  prometheus.NewDesc("mqgate_data_fs_size_bytes", "Size of the file system of the data directory.", nil, nil),
	}
}

func (c *fsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.avail; ch <- c.size }

func (c *fsCollector) Collect(ch chan<- prometheus.Metric) {
	var st unix.Statfs_t
	if err := unix.Statfs(c.dir, &st); err != nil {
		ch <- prometheus.NewInvalidMetric(c.avail, err)
		return
	}
	bs := float64(st.Bsize)
	ch <- prometheus.MustNewConstMetric(c.avail, prometheus.GaugeValue, float64(st.Bavail)*bs)
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(st.Blocks)*bs)
}
