package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Publishing at a fixed rate (open loop), for the modes that measure how
// long a message takes to come out the other side (latency, webhook).
// Each message carries its send time in the propSentAt property.

// Properties of a paced message: propSentAt is the publish time in unix
// nanoseconds, for the latency; propWarmup marks the warm-up's messages,
// decided by their slot rather than their send time so that a late
// warm-up publish does not count as measured.
const (
	propSentAt = "mqbenchSentAt"
	propWarmup = "mqbenchWarmup"
)

type pacedConfig struct {
	// posters gives each publisher its client (newPosters: a lean
	// connection of its own, or net/http's shared client).
	posters  func() poster
	url      string // POST .../messages
	size     int
	rate     int
	warmup   time.Duration
	duration time.Duration
	conc     int // publish requests in flight at most
	// measureFrom is set to the first slot after the warm-up; messages
	// sent before it are warm-up. The receiving side reads it too.
	measureFrom *atomic.Int64
	// onAnswered, if set, is told when a measured message's publish was
	// answered 201, with its message id.
	onAnswered func(id string, at time.Time)
}

type pacedResult struct {
	published int64 // 201s, warm-up included
	measured  int64 // 201s sent after the warm-up
	late      int64
	rate      float64 // achieved after the warm-up, msgs/s
	lat       []time.Duration
	errs      statusCounts
	firstErr  string
}

// lateSlack is how far behind its slot a publish may start before it
// counts as late (the load generator falling behind its rate).
const lateSlack = 10 * time.Millisecond

// runPaced publishes one message per slot, slot i at start + i/rate, until
// warm-up plus duration have passed, and returns when every publish has
// been answered. One timer is re-armed to the next slot; when a slot is
// already due the loop hands it out without waiting, so the rate holds on
// average even after a stall. Publishes go to conc goroutines; if all are
// busy the schedule waits, and the publishes that start late are counted.
func runPaced(ctx context.Context, c pacedConfig) pacedResult {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	body := *randomMessage(r, c.size, false).Body
	jobs := make(chan time.Time, c.conc)
	pubs := make([]*pacedPublisher, c.conc)
	var wg sync.WaitGroup
	for i := range pubs {
		p := &pacedPublisher{post: c.posters(), url: c.url, body: body, jobs: jobs, from: c.measureFrom, onAnswered: c.onAnswered}
		pubs[i] = p
		wg.Go(func() { p.loop(ctx) })
	}

	interval := time.Second / time.Duration(c.rate)
	start := time.Now()
	measureFrom := start.Add(c.warmup)
	end := measureFrom.Add(c.duration)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
schedule:
	for i := 0; ; i++ {
		slot := start.Add(time.Duration(i) * interval)
		if !slot.Before(end) {
			break
		}
		if c.measureFrom.Load() == 0 && !slot.Before(measureFrom) {
			c.measureFrom.Store(slot.UnixNano())
		}
		if d := time.Until(slot); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break schedule
			}
		}
		select {
		case jobs <- slot:
		case <-ctx.Done():
			break schedule
		}
	}
	timer.Stop()
	close(jobs)
	wg.Wait()
	pubEnd := time.Now()
	for _, p := range pubs {
		p.post.close()
	}

	res := pacedResult{errs: statusCounts{}}
	for _, p := range pubs {
		res.published += p.ok
		res.measured += p.measured
		res.late += p.late
		res.lat = append(res.lat, p.lat...)
		res.errs.merge(p.errs)
		if res.firstErr == "" {
			res.firstErr = p.firstErr
		}
	}
	if len(res.errs) == 0 {
		res.errs = nil
	}
	if from := c.measureFrom.Load(); from != 0 {
		res.rate = rate(float64(res.measured), pubEnd.Sub(time.Unix(0, from)))
	}
	return res
}

// pacedPublisher is one publish goroutine; it keeps its own figures,
// merged after it stops.
type pacedPublisher struct {
	post poster
	url  string
	body string
	jobs chan time.Time // the scheduled slot of each message
	from *atomic.Int64

	onAnswered func(id string, at time.Time)

	lat      []time.Duration
	ok, late int64
	measured int64
	errs     statusCounts
	firstErr string
}

func (p *pacedPublisher) loop(ctx context.Context) {
	p.errs = statusCounts{}
	for slot := range p.jobs {
		sent := time.Now()
		if sent.Sub(slot) > lateSlack {
			p.late++
		}
		from := p.from.Load()
		measured := from != 0 && slot.UnixNano() >= from
		props := map[string]string{propSentAt: strconv.FormatInt(sent.UnixNano(), 10)}
		if !measured {
			props[propWarmup] = "1"
		}
		// The poster encodes the message: REST as its request body, a
		// stream poster as its frame (no JSON in between to decode again).
		var ans publishAnswer
		status, err := p.post.postJSON(ctx, p.url, &wireMessage{Body: &p.body, Properties: props}, &ans)
		answered := time.Now()
		if ctx.Err() != nil {
			continue // drain jobs; the run is over
		}
		if err != nil || status != http.StatusCreated {
			p.errs.add(status, 1)
			if p.firstErr == "" {
				p.firstErr = fmt.Sprintf("publish: status %d: %v", status, err)
			}
			continue
		}
		p.ok++
		if measured {
			p.measured++
			p.lat = append(p.lat, answered.Sub(sent))
			if p.onAnswered != nil {
				p.onAnswered(ans.MessageID, answered)
			}
		}
	}
}
