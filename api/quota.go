package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/quota"
)

// codeRateLimited answers a request over one of its key's limits (429).
const codeRateLimited = "rate_limited"

// Headers of draft-ietf-httpapi-ratelimit-headers.
const (
	headerRateLimitPolicy = "RateLimit-Policy"
	headerRateLimit       = "RateLimit"
)

// admitPublish checks a publish of msgs messages and bytes body bytes to
// topic against the caller's key's limits (internal/quota). It reports
// false when it has answered: 429 over a limit, 413 for a request no
// bucket can ever hold, nothing when the client left while it was held.
func (s *Server) admitPublish(w http.ResponseWriter, r *http.Request, topic string, msgs, bytes int) bool {
	return s.admit(w, r, s.quotas.Publish(keyFrom(r.Context()), topic, msgs, bytes))
}

// admit answers a refused verdict, or holds an admitted one for its wait
// (the key's maxDelay) and reports true. A nil verdict is no limit.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, v *quota.Verdict) bool {
	if v == nil {
		return true
	}
	setRateLimit(w, v.Policies)
	switch {
	case v.TooLarge != "":
		p := newProblem(core.ETooLarge, v.TooLarge)
		p.ViolatedPolicies = v.Violated()
		sendProblem(w, r, p)
		return false
	case v.RetryAfter > 0:
		secs := max(1, int64((v.RetryAfter+time.Second-1)/time.Second))
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		p := newProblem(codeRateLimited, "API key "+strconv.Quote(keyFrom(r.Context()).Name)+" is over its limit; retry after "+strconv.FormatInt(secs, 10)+" s")
		p.ViolatedPolicies = v.Violated()
		sendProblem(w, r, p)
		return false
	case v.Wait > 0:
		// Held, not refused: the answer is written after the wait, so the
		// write deadline moves by as much.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(v.Wait + s.writeTTL))
		t := time.NewTimer(v.Wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			v.Cancel() // the client left: its tokens go back
			return false
		}
	}
	return true
}

// setRateLimit sets the RateLimit-Policy and RateLimit fields of the
// limits that applied.
func setRateLimit(w http.ResponseWriter, ps []quota.Policy) {
	if len(ps) == 0 {
		return
	}
	pol, lim := quota.Header(ps)
	h := w.Header()
	h.Set(headerRateLimitPolicy, pol)
	h.Set(headerRateLimit, lim)
}
