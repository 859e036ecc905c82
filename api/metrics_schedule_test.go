package api

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// gathered returns every sample of reg as "name{label=value}" → value.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// The schedule counters are read at scrape time: a later scrape sees
// later values, and level messages are Delayed minus Timers.
func TestScheduleCollectorReadsAtScrape(t *testing.T) {
	n := ScheduleCounters{Delayed: 10, Timers: 4, Delivered: 7, Dropped: 1, Skipped: 2, Retried: 3, DeadLettered: 2, Redriven: 1}
	reg := prometheus.NewRegistry()
	reg.MustRegister(newScheduleCollector(func() ScheduleCounters { return n }, nil, nil))
	check := func(want map[string]float64) {
		t.Helper()
		got := gathered(t, reg)
		if len(got) != len(want) {
			t.Fatalf("gathered %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s = %v, want %v (all: %v)", k, got[k], v, got)
			}
		}
	}
	check(map[string]float64{
		"mqgate_delayed_messages_total{kind=level}": 6, "mqgate_delayed_messages_total{kind=timer}": 4,
		"mqgate_delayed_delivered_total": 7, "mqgate_delayed_dropped_total": 1, "mqgate_delayed_skipped_total": 2,
		"mqgate_retried_messages_total": 3, "mqgate_dead_lettered_messages_total": 2, "mqgate_redriven_messages_total": 1,
	})
	n.DeadLettered, n.Redriven, n.Retried = 5, 4, 9
	check(map[string]float64{
		"mqgate_delayed_messages_total{kind=level}": 6, "mqgate_delayed_messages_total{kind=timer}": 4,
		"mqgate_delayed_delivered_total": 7, "mqgate_delayed_dropped_total": 1, "mqgate_delayed_skipped_total": 2,
		"mqgate_retried_messages_total": 9, "mqgate_dead_lettered_messages_total": 5, "mqgate_redriven_messages_total": 4,
	})
}

// Without a counters source (a server built without the engine's
// counters) the series are simply absent and the scrape still works.
func TestScheduleCollectorWithoutSources(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newScheduleCollector(nil, nil, nil))
	if got := gathered(t, reg); len(got) != 0 {
		t.Fatalf("gathered %v; want nothing", got)
	}
}
