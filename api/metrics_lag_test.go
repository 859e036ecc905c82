package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mqgate/mqgate/core"
)

// manyGroups has n CLUSTERING groups, group i lagging i messages on one
// queue of topic t, stored a minute ago.
type manyGroups struct {
	core.GroupService
	n int
}

func (m manyGroups) GroupList(context.Context) ([]core.Group, error) {
	out := make([]core.Group, m.n)
	for i := range out {
		out[i].Name = fmt.Sprintf("g%04d", i)
		out[i].MessageModel = core.Clustering
	}
	return out, nil
}

func (m manyGroups) Offsets(_ context.Context, group, _ string) ([]core.QueueOffset, error) {
	var i int
	fmt.Sscanf(group, "g%d", &i)
	return []core.QueueOffset{{Queue: core.MessageQueue{Topic: "t"}, Committed: 0, Max: int64(i), Lag: int64(i)}}, nil
}

type minuteOldEngine struct{ core.TopicService }

func (minuteOldEngine) GetMessages(core.MessageQueue, int64, int, core.Filter) (core.GetResult, error) {
	return core.GetResult{Messages: []*core.Message{{StoredAt: time.Unix(1000, 0)}}}, nil
}

// TestLagSeriesCapped: past MaxLagSeries pairs, the largest lags are kept
// and the rest counted.
func TestLagSeriesCapped(t *testing.T) {
	c := newLagCollector(minuteOldEngine{}, manyGroups{n: MaxLagSeries + 100})
	c.now = func() time.Time { return time.Unix(1060, 0) }
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "mqgate_group_lag_series_dropped":
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 100 {
				t.Fatalf("dropped %v, want 100", v)
			}
		case "mqgate_group_lag":
			if len(mf.GetMetric()) != MaxLagSeries {
				t.Fatalf("%d lag series, want the cap %d", len(mf.GetMetric()), MaxLagSeries)
			}
			for _, m := range mf.GetMetric() {
				if m.GetGauge().GetValue() < 100 {
					t.Fatalf("a small lag (%v) kept over a larger one", m.GetGauge().GetValue())
				}
			}
		case "mqgate_group_oldest_unacked_age_seconds":
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 60 {
				t.Fatalf("oldest age %v, want 60", v)
			}
		}
	}
}
