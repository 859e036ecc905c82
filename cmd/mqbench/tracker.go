package main

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// What latency and webhook share: messages are published at a fixed rate
// (runPaced), something receives them (receivers long-polling, or the
// webhook endpoint), and the latencyTracker pairs each first receipt with
// its send time and its publish answer.

// latencyTracker records first deliveries; drained is closed once every
// message published so far has been received and publishing is over.
type latencyTracker struct {
	measureFrom atomic.Int64 // unix ns; messages sent before are warm-up

	mu   sync.Mutex
	seen map[string]struct{}
	dups int64
	e2e  []time.Duration
	// answeredAt and recvAt hold, per measured message id, whichever of
	// its publish answer and its first receive came first; afterPub gets
	// the difference when the other one arrives.
	answeredAt map[string]time.Time
	recvAt     map[string]time.Time
	afterPub   []time.Duration
	published  int64 // final count, valid once publishingDone
	pubDone    bool
	drained    chan struct{}
	closed     bool
}

func (t *latencyTracker) received(msgs []receivedMessage, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range msgs {
		if _, dup := t.seen[m.MessageID]; dup {
			t.dups++
			continue
		}
		t.seen[m.MessageID] = struct{}{}
		sent, err := strconv.ParseInt(m.Properties[propSentAt], 10, 64)
		if err == nil && m.Properties[propWarmup] == "" {
			t.e2e = append(t.e2e, at.Sub(time.Unix(0, sent)))
			if ans, ok := t.answeredAt[m.MessageID]; ok {
				t.afterPub = append(t.afterPub, max(at.Sub(ans), 0))
				delete(t.answeredAt, m.MessageID)
			} else {
				t.recvAt[m.MessageID] = at
			}
		}
	}
	t.checkDrained()
}

// answered is told of a measured message's publish answer.
func (t *latencyTracker) answered(id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if recv, ok := t.recvAt[id]; ok {
		t.afterPub = append(t.afterPub, max(recv.Sub(at), 0))
		delete(t.recvAt, id)
		return
	}
	t.answeredAt[id] = at
}

func newLatencyTracker() *latencyTracker {
	return &latencyTracker{seen: map[string]struct{}{}, drained: make(chan struct{}),
		answeredAt: map[string]time.Time{}, recvAt: map[string]time.Time{}}
}

func (t *latencyTracker) publishingDone(published int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.published, t.pubDone = published, true
	t.checkDrained()
}

func (t *latencyTracker) checkDrained() {
	if t.pubDone && !t.closed && int64(len(t.seen)) >= t.published {
		t.closed = true
		close(t.drained)
	}
}

// trackerSummary is what a latencyTracker saw, read once the run is over.
type trackerSummary struct {
	received     int64 // distinct messages
	duplicates   int64
	endToEnd     LatencySummary
	afterPublish LatencySummary
}

func (t *latencyTracker) summary() trackerSummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return trackerSummary{received: int64(len(t.seen)), duplicates: t.dups,
		endToEnd: summarize(t.e2e), afterPublish: summarize(t.afterPub)}
}

// pacedLoad is the publishing side of a latency or webhook run.
type pacedLoad struct {
	url      string // the gateway's base URL
	topic    string
	size     int
	rate     int
	warmup   time.Duration
	duration time.Duration
	conc     int
	// drain is how long to wait after the last publish for the receiving
	// side to see every published message.
	drain time.Duration
}

// publishAndDrain publishes l at its rate into tr, then waits until tr has
// seen every published message, the drain time has passed or ctx ends.
func publishAndDrain(ctx context.Context, posters func() poster, l pacedLoad, tr *latencyTracker) pacedResult {
	paced := runPaced(ctx, pacedConfig{posters: posters, url: topicURL(l.url, l.topic, "/messages"),
		size: l.size, rate: l.rate, warmup: l.warmup, duration: l.duration, conc: l.conc,
		measureFrom: &tr.measureFrom, onAnswered: tr.answered})
	tr.publishingDone(paced.published)
	drain := time.NewTimer(l.drain)
	defer drain.Stop()
	select {
	case <-tr.drained:
	case <-drain.C:
	case <-ctx.Done():
	}
	return paced
}

// PacedStats is what a latency and a webhook run share: the paced
// publisher's side and the publish→arrival latencies of the tracker.
type PacedStats struct {
	// Published counts 201s over the whole run, warm-up included;
	// Measured those sent after the warm-up.
	Published   int64   `json:"published"`
	Measured    int64   `json:"measured"`
	PublishRate float64 `json:"publishRate"` // achieved, msgs/s, after the warm-up
	Late        int64   `json:"late"`        // publishes that started >10ms after their slot
	Duplicates  int64   `json:"duplicates"`
	Missing     int64   `json:"missing"` // published, not arrived by the end of the drain
	// EndToEnd is publish→arrival of measured messages; AfterPublish is
	// from the publish's 201 to the arrival: the consume or push path
	// alone, without the durable commit (0 when the arrival came first,
	// which a long poll allows).
	EndToEnd       LatencySummary `json:"endToEnd"`
	AfterPublish   LatencySummary `json:"afterPublish"`
	PublishLatency LatencySummary `json:"publishLatency"` // per publish request
}

// newPacedStats combines the publisher's result and the tracker's summary;
// it also returns the distinct messages that arrived.
func newPacedStats(paced pacedResult, sum trackerSummary) (PacedStats, int64) {
	return PacedStats{
		Published: paced.published, Measured: paced.measured, PublishRate: paced.rate, Late: paced.late,
		Duplicates: sum.duplicates, Missing: max(paced.published-sum.received, 0),
		EndToEnd: sum.endToEnd, AfterPublish: sum.afterPublish, PublishLatency: summarize(paced.lat),
	}, sum.received
}

// medianPaced is the field-by-field median of runs' PacedStats.
func medianPaced[R any](runs []R, get func(R) PacedStats) PacedStats {
	if len(runs) == 0 {
		return PacedStats{}
	}
	n := func(f func(PacedStats) int64) int64 { return medianCount(runs, func(r R) int64 { return f(get(r)) }) }
	l := func(f func(PacedStats) LatencySummary) LatencySummary {
		return medianLatencyOf(runs, func(r R) LatencySummary { return f(get(r)) })
	}
	return PacedStats{
		Published:      n(func(p PacedStats) int64 { return p.Published }),
		Measured:       n(func(p PacedStats) int64 { return p.Measured }),
		PublishRate:    medianOf(runs, func(r R) float64 { return get(r).PublishRate }),
		Late:           n(func(p PacedStats) int64 { return p.Late }),
		Duplicates:     n(func(p PacedStats) int64 { return p.Duplicates }),
		Missing:        n(func(p PacedStats) int64 { return p.Missing }),
		EndToEnd:       l(func(p PacedStats) LatencySummary { return p.EndToEnd }),
		AfterPublish:   l(func(p PacedStats) LatencySummary { return p.AfterPublish }),
		PublishLatency: l(func(p PacedStats) LatencySummary { return p.PublishLatency }),
	}
}
