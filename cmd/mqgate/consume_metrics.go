package main

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
)

// consumeMetrics are the embedded backend's consumption series, fed by
// every push-consumer client of the process (consumer.Observer): what is
// delivered, how it is settled, and how long a message takes from its
// publish to its ack. Labelled by group only (groups are made by
// operators, so the label is bounded; a deleted group's series stay until
// the restart). The webhook pushers' own series are gateway/webhook's.
type consumeMetrics struct {
	delivered *prometheus.CounterVec
	settled   *prometheus.CounterVec
	toAck     *prometheus.HistogramVec
	handling  *prometheus.HistogramVec

	groups sync.Map // group -> *groupSeries: no label hashing per message
}

type groupSeries struct {
	delivered              prometheus.Counter
	acked, nacked          prometheus.Counter
	toAck                  prometheus.Observer
	handledAck, handledNak prometheus.Observer
}

var _ consumer.Observer = (*consumeMetrics)(nil)

// publishToAckBuckets reach from a fast consumer's milliseconds to a
// backlog of an hour (a delayed message counts its delay too).
var publishToAckBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

func newConsumeMetrics(reg prometheus.Registerer) *consumeMetrics {
	m := &consumeMetrics{
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mqgate_delivered_messages_total",
			Help: "Messages handed out for consumption by group (to receives' buffers, streams and webhook pushers); a message delivered again counts again.",
		}, []string{"group"}),
		settled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mqgate_settled_messages_total",
			Help: "Delivered messages answered, by group and result: acked, or nacked (a nack, or a lease that ran out; the message is retried or dead-lettered).",
		}, []string{"group", "result"}),
		toAck: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mqgate_publish_to_ack_seconds",
			Help:    "Time from a message's first publish (bornAt) to its ack, by group: queueing, delays and retries included.",
			Buckets: publishToAckBuckets,
		}, []string{"group"}),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mqgate_delivery_to_settle_seconds",
			Help:    "Time from a message's delivery to its answer, by group and result (acked, nacked): the consumer's handling time plus any wait in the receive buffer.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900},
		}, []string{"group", "result"}),
	}
	reg.MustRegister(m.delivered, m.settled, m.toAck, m.handling)
	return m
}

func (m *consumeMetrics) series(group string) *groupSeries {
	if v, ok := m.groups.Load(group); ok {
		return v.(*groupSeries)
	}
	v, _ := m.groups.LoadOrStore(group, &groupSeries{
		delivered:  m.delivered.WithLabelValues(group),
		acked:      m.settled.WithLabelValues(group, "acked"),
		nacked:     m.settled.WithLabelValues(group, "nacked"),
		toAck:      m.toAck.WithLabelValues(group),
		handledAck: m.handling.WithLabelValues(group, "acked"),
		handledNak: m.handling.WithLabelValues(group, "nacked"),
	})
	return v.(*groupSeries)
}

func (m *consumeMetrics) Delivered(group string, n int) {
	m.series(group).delivered.Add(float64(n))
}

func (m *consumeMetrics) Answered(group string, msg *core.Message, ok bool, handed time.Time) {
	s := m.series(group)
	now := time.Now()
	if !ok {
		s.nacked.Inc()
		s.handledNak.Observe(now.Sub(handed).Seconds())
		return
	}
	s.acked.Inc()
	s.handledAck.Observe(now.Sub(handed).Seconds())
	if !msg.BornAt.IsZero() {
		s.toAck.Observe(max(now.Sub(msg.BornAt).Seconds(), 0))
	}
}
