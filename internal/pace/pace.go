// Package pace spaces a background job's work to a rate: a token bucket
// of one chunk, refilled at the rate, waited on with one timer (no
// polling). The embedded engine's and the JetStream backend's filter jobs
// (redrive and purge by filter) move their messages through it.
package pace

import "time"

// Pacer paces one job; not safe for concurrent use.
type Pacer struct {
	rate  int
	chunk int
	start time.Time
	done  int64
	timer *time.Timer
}

// New paces rate moves a second (0: unbounded) in chunks of at most
// maxChunk: a tenth of a second's worth when the rate bounds it.
func New(rate, maxChunk int) *Pacer {
	c := maxChunk
	if rate > 0 {
		c = min(max(rate/10, 1), maxChunk)
	}
	return &Pacer{rate: rate, chunk: c, start: time.Now()}
}

// Chunk is how many moves one step may take.
func (p *Pacer) Chunk() int { return p.chunk }

// Wait blocks until n more moves fit the rate; false when stop is closed.
func (p *Pacer) Wait(n int, stop <-chan struct{}) bool {
	select {
	case <-stop:
		return false
	default:
	}
	if p.rate <= 0 {
		return true
	}
	need := p.done + int64(n) - int64(p.chunk)
	if need <= 0 {
		return true
	}
	d := time.Until(p.start.Add(time.Duration(float64(need) / float64(p.rate) * float64(time.Second))))
	if d <= 0 {
		return true
	}
	if p.timer == nil {
		p.timer = time.NewTimer(d)
	} else {
		p.timer.Reset(d)
	}
	select {
	case <-p.timer.C:
		return true
	case <-stop:
		return false
	}
}

// Took records n moves made.
func (p *Pacer) Took(n int) { p.done += int64(n) }

// Stop releases the timer.
func (p *Pacer) Stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}
