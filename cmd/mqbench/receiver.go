package main

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// receiver is one HTTP consumer: it long-polls POST .../receive and acks
// what it got with one POST .../ack, then polls again. Both consume and
// latency run several of them; each owns its receiverStats, merged after
// they stop.
type receiver struct {
	post    poster
	base    string
	group   string
	request receiveRequest
	// ackBatch is how many handles one ack request carries: 0 acks all of
	// a receive's handles at once, 1 sends one ack request per message
	// (the way many HTTP clients consume).
	ackBatch int
	// stop ends the loop after the current receive (graceful: no lease is
	// left dangling by an aborted poll); cancelling ctx ends it at once.
	stop *atomic.Bool
	// onReceive is told about each non-empty receive before its ack.
	onReceive func(msgs []receivedMessage, at time.Time)
	// onAcked is told about each message whose ack answered "ok".
	onAcked func(m receivedMessage)
	stats   receiverStats
}

type receiverStats struct {
	receives, emptyReceives int64
	deliveries              int64
	receiveLat, ackLat      []time.Duration
	ackStatus               map[string]int64
	errs                    statusCounts
	firstErr                string
}

func (s *receiverStats) merge(o *receiverStats) {
	s.receives += o.receives
	s.emptyReceives += o.emptyReceives
	s.deliveries += o.deliveries
	s.receiveLat = append(s.receiveLat, o.receiveLat...)
	s.ackLat = append(s.ackLat, o.ackLat...)
	if s.ackStatus == nil {
		s.ackStatus = map[string]int64{}
	}
	for k, v := range o.ackStatus {
		s.ackStatus[k] += v
	}
	if s.errs == nil {
		s.errs = statusCounts{}
	}
	s.errs.merge(o.errs)
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
}

// receiverSet is the consumers of one run: n receivers on one group, each
// its own goroutine, stopped together and their stats merged.
type receiverSet struct {
	stop  atomic.Bool
	recvs []*receiver
	wg    sync.WaitGroup
}

// startReceivers starts n receive+ack loops on group; they run until
// stopAndMerge (or ctx's end).
func startReceivers(ctx context.Context, n int, posters func() poster, base, group string, req receiveRequest, ackBatch int,
	onReceive func([]receivedMessage, time.Time), onAcked func(receivedMessage)) *receiverSet {
	s := &receiverSet{recvs: make([]*receiver, n)}
	for i := range s.recvs {
		r := &receiver{post: posters(), base: base, group: group, stop: &s.stop,
			request: req, ackBatch: ackBatch, onReceive: onReceive, onAcked: onAcked}
		s.recvs[i] = r
		s.wg.Go(func() { r.loop(ctx) })
	}
	return s
}

// stopAndMerge asks every receiver to end after its current receive,
// calls abort (if set, e.g. a context cancel that cuts the long polls
// short), waits for them all and returns their merged stats.
func (s *receiverSet) stopAndMerge(abort func()) receiverStats {
	s.stop.Store(true)
	if abort != nil {
		abort()
	}
	s.wg.Wait()
	var st receiverStats
	for _, r := range s.recvs {
		st.merge(&r.stats)
		r.post.close()
	}
	return st
}

// errorBackoff spaces out retries after a failed call (429, 503, refused)
// so a struggling server is not hammered by a tight loop.
const errorBackoff = 50 * time.Millisecond

func (r *receiver) loop(ctx context.Context) {
	r.stats.ackStatus = map[string]int64{}
	r.stats.errs = statusCounts{}
	recvURL := groupURL(r.base, r.group, "/receive")
	ackURL := groupURL(r.base, r.group, "/ack")
	for ctx.Err() == nil && !r.stop.Load() {
		var ans receiveAnswer
		t0 := time.Now()
		status, err := r.post.postJSON(ctx, recvURL, r.request, &ans)
		at := time.Now()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.fail(ctx, status, err)
			continue
		}
		r.stats.receives++
		r.stats.receiveLat = append(r.stats.receiveLat, at.Sub(t0))
		if len(ans.Messages) == 0 {
			r.stats.emptyReceives++
			continue
		}
		r.stats.deliveries += int64(len(ans.Messages))
		if r.onReceive != nil {
			r.onReceive(ans.Messages, at)
		}

		step := len(ans.Messages)
		if r.ackBatch > 0 {
			step = r.ackBatch
		}
		for from := 0; from < len(ans.Messages); from += step {
			if !r.ack(ctx, ackURL, ans.Messages[from:min(from+step, len(ans.Messages))]) {
				break
			}
		}
	}
}

// ack acknowledges msgs in one request; false when the request failed (or
// ctx ended) and the rest of the receive should not be acked now.
func (r *receiver) ack(ctx context.Context, ackURL string, msgs []receivedMessage) bool {
	ack := handlesRequest{ReceiptHandles: make([]string, len(msgs))}
	byHandle := make(map[string]int, len(msgs))
	for i, m := range msgs {
		ack.ReceiptHandles[i] = m.ReceiptHandle
		byHandle[m.ReceiptHandle] = i
	}
	var res handleResults
	t0 := time.Now()
	status, err := r.post.postJSON(ctx, ackURL, ack, &res)
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		r.fail(ctx, status, err)
		return false
	}
	r.stats.ackLat = append(r.stats.ackLat, time.Since(t0))
	for _, h := range res.Results {
		r.stats.ackStatus[h.Status]++
		if i, ok := byHandle[h.ReceiptHandle]; ok && h.Status == "ok" && r.onAcked != nil {
			r.onAcked(msgs[i])
		}
	}
	return true
}

func (r *receiver) fail(ctx context.Context, status int, err error) {
	r.stats.errs.add(status, 1)
	if r.stats.firstErr == "" {
		r.stats.firstErr = err.Error()
	}
	sleepCtx(ctx, errorBackoff)
}

// pollTimeout is the request timeout for a client that long-polls for
// waitSeconds: never shorter than the wait plus room for the answer.
func pollTimeout(timeout time.Duration, waitSeconds int) time.Duration {
	return max(timeout, time.Duration(waitSeconds)*time.Second+10*time.Second)
}

// poster sends one JSON POST and decodes a 2xx answer: net/http's client
// (--client std) or a lean connection of the receiver's own (raw).
type poster interface {
	postJSON(ctx context.Context, url string, in, out any) (int, error)
	close()
}

type stdPoster struct{ c *http.Client }

func (p stdPoster) postJSON(ctx context.Context, url string, in, out any) (int, error) {
	return doJSON(ctx, p.c, http.MethodPost, url, in, out)
}

func (stdPoster) close() {}

// newPosters returns what each receiver (and latency's each paced
// publisher) gets for --client kind: a raw connection of its own, or the
// shared std client.
func newPosters(kind, base string, std *http.Client, timeout time.Duration) (func() poster, error) {
	switch kind {
	case "std":
		return func() poster { return stdPoster{std} }, nil
	case "h2c":
		// One cleartext HTTP/2 connection (prior knowledge, the gateway's
		// --h2c) that every poster multiplexes its requests on.
		h2 := h2cClient(timeout)
		return func() poster { return stdPoster{h2} }, nil
	case "raw":
		if _, _, err := rawTarget(base); err != nil {
			return nil, err
		}
		return func() poster {
			p, _ := newRawPoster(base, timeout) // base was checked above
			return p
		}, nil
	}
	return nil, usagef("--client must be raw, std or h2c, not %q", kind)
}
