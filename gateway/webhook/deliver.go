package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.opentelemetry.io/otel/trace"

	"github.com/mqgate/mqgate/core"
)

// result is the outcome of one POST.
type result struct {
	ok      bool
	outcome string // Outcome* constant
	err     string // for Status.LastError; empty on success
	level   int    // Nack delay level
	reason  string // the messages' nack reason (failureReason); empty on success
}

// webhookID names one request for the receiver's idempotency (Standard
// Webhooks: the same across retries): the original message id, which a
// retry copy carries as ORIGIN_MESSAGE_ID (Message.UserID), so every
// attempt of a message has the same id. A batch is named by its messages'
// ids together ("batch_" and a digest): the same messages retried together
// keep the id.
func webhookID(msgs []*core.Message) string {
	if len(msgs) == 1 {
		return msgs[0].UserID()
	}
	h := sha256.New()
	for _, m := range msgs {
		h.Write([]byte(m.UserID()))
		h.Write([]byte{0})
	}
	return "batch_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// webhookAttempt is the delivery attempt of a request, 1 for the first:
// reconsumeTimes + 1 (of the most retried message of a batch).
func webhookAttempt(msgs []*core.Message) int {
	n := 0
	for _, m := range msgs {
		n = max(n, m.ReconsumeTimes)
	}
	return n + 1
}

// post sends one request and classifies its answer, traced when tracing
// is on. It never holds p.mu during I/O.
func (p *Pusher) post(msgs []*core.Message) result {
	if p.opts.Tracer == nil {
		return p.send(msgs, nil)
	}
	span := p.startPush(msgs)
	r := p.send(msgs, span)
	endPush(span, r)
	return r
}

// send is post's request; span is the push span (nil: tracing off).
func (p *Pusher) send(msgs []*core.Message, span trace.Span) result {
	body, err := encodeMessages(msgs)
	if err != nil {
		// Not the receiver's fault and not transient; still a retry rather
		// than a silent drop.
		return p.finish(result{outcome: OutcomeStatus, err: "encoding messages: " + err.Error()}, 0, len(msgs), nil, 0)
	}
	p.mu.Lock()
	cfg, client, tr := p.cfg, p.client, p.transports[len(p.transports)-1]
	p.inFlight++
	p.inFlightN += len(msgs)
	p.mu.Unlock()
	p.metrics.inFlight(1)

	ctx, cancel := context.WithTimeout(p.ctx, cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.url, bytes.NewReader(body))
	if err != nil {
		return p.finish(result{outcome: OutcomeConnection, err: err.Error()}, 0, len(msgs), tr, 0)
	}
	id, ts := webhookID(msgs), time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", p.opts.UserAgent)
	req.Header.Set(HeaderID, id)
	req.Header.Set(HeaderAttempt, strconv.Itoa(webhookAttempt(msgs)))
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	if len(cfg.secret) > 0 {
		req.Header.Set(HeaderSignature, Sign(cfg.secret, id, ts, body))
	}
	setTraceHeaders(req.Header, msgs, span)

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return p.finish(p.classifyError(err, cfg.timeout), time.Since(start), len(msgs), tr, 0)
	}
	// Read (a bounded part of) the body before closing so the connection
	// goes back to the pool; the per-request timeout covers the read.
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, p.opts.MaxResponseBytes))
	resp.Body.Close()
	elapsed := time.Since(start)

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return p.finish(result{ok: true, outcome: OutcomeSuccess}, elapsed, len(msgs), tr, 0)
	}
	r := result{outcome: OutcomeStatus, err: fmt.Sprintf("HTTP %s%s", resp.Status, excerpt(snippet))}
	var pause time.Duration
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		r.outcome = OutcomeRedirect
		r.err = fmt.Sprintf("HTTP %s: redirects are not followed (Location %q)", resp.Status, resp.Header.Get("Location"))
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now(), p.opts.MaxRetryAfter); ok && d > 0 {
			r.outcome = OutcomeThrottled
			r.err += fmt.Sprintf(" (Retry-After %s)", d)
			pause = d
			if p.opts.DelayLevelFor != nil {
				r.level = p.opts.DelayLevelFor(d)
			}
		}
	}
	return p.finish(r, elapsed, len(msgs), tr, pause)
}

// classifyError turns a client error into an outcome and a readable text.
func (p *Pusher) classifyError(err error, timeout time.Duration) result {
	var blocked *BlockedError
	var ne net.Error
	switch {
	case errors.As(err, &blocked):
		return result{outcome: OutcomeBlocked, err: blocked.Error()}
	case p.ctx.Err() != nil:
		return result{outcome: OutcomeCancelled, err: "pusher closed before the receiver answered"}
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return result{outcome: OutcomeTimeout, err: fmt.Sprintf("no answer within %s (push.timeoutSeconds)", timeout)}
	}
	return result{outcome: OutcomeConnection, err: err.Error()}
}

// finish records a request's outcome in the status, metrics and log, and
// starts a Retry-After pause. tr is the transport used: if Update retired
// it meanwhile, its now idle connection is closed.
func (p *Pusher) finish(r result, elapsed time.Duration, n int, tr *http.Transport, pause time.Duration) result {
	now := time.Now()
	p.mu.Lock()
	if tr != nil {
		p.inFlight--
		p.inFlightN -= n
	}
	// Counted under the same lock that ends the request: Status never
	// shows a message as neither in flight nor answered.
	p.countLocked(r.ok, n)
	retired := tr != nil && tr != p.transports[len(p.transports)-1]
	wasFailing := p.stats.consecutiveFailures
	if r.ok {
		p.stats.consecutiveFailures = 0
		p.stats.lastSuccessAt = now
	} else {
		p.stats.consecutiveFailures++
		p.stats.lastErrorAt = now
		p.stats.lastError = r.err
	}
	if pause > 0 {
		p.pauseLocked(now.Add(pause))
	}
	p.mu.Unlock()
	if !r.ok {
		r.reason = failureReason(r, elapsed)
	}

	if tr != nil {
		p.metrics.inFlight(-1)
	}
	p.metrics.answered(r.ok, n)
	p.metrics.request(r.outcome, elapsed)
	if retired {
		tr.CloseIdleConnections()
	}
	switch {
	case r.ok && wasFailing > 0:
		p.log.Info().Int("failures", wasFailing).Msg("webhook receiver answering 2xx again")
	case !r.ok && wasFailing == 0:
		p.log.Warn().Str("outcome", r.outcome).Str("error", r.err).Msg("webhook delivery failing; messages go back for retry")
	}
	if pause > 0 {
		p.log.Info().Dur("retryAfter", pause).Msg("webhook receiver asked to wait; group paused")
	}
	return r
}

// excerpt makes the start of a response body fit for a status line.
func excerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b), "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	if s == "" {
		return ""
	}
	return ": " + s
}
