package quota

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/mqgate/mqgate/internal/auth"
)

// Verdict is the answer to one request's admission.
type Verdict struct {
	// Wait > 0: serve the request after this long (the key's maxDelay
	// allows it); the tokens are already taken. Call Cancel if the
	// request is given up while waiting.
	Wait time.Duration
	// RetryAfter > 0: refused (429); this long until it would pass.
	RetryAfter time.Duration
	// TooLarge, when set, refuses a request that can never pass: it
	// needs more tokens than the bucket holds (413).
	TooLarge string
	// Policies are the limits that applied, for the RateLimit headers.
	Policies []Policy

	res    []*rate.Reservation
	series *keySeries
}

// Refused reports whether the request must not be served.
func (v *Verdict) Refused() bool { return v.RetryAfter > 0 || v.TooLarge != "" }

// Violated names the policies that refused the request.
func (v *Verdict) Violated() []string {
	var out []string
	for _, p := range v.Policies {
		if p.Violated {
			out = append(out, p.Name)
		}
	}
	return out
}

// Cancel gives back the tokens of a request given up while it waited
// (the client left).
func (v *Verdict) Cancel() {
	now := time.Now()
	for _, r := range v.res {
		r.CancelAt(now)
	}
	v.res = nil
}

// charge is n tokens from b.
type charge struct {
	b *bucket
	n int
}

// admit reserves every charge at once: all pass (possibly after a wait of
// at most maxDelay) or none takes anything.
func admit(cs []charge, maxDelay time.Duration, s *keySeries, op string) *Verdict {
	v := &Verdict{series: s}
	for _, c := range cs {
		if c.n > c.b.burst {
			what := "messages"
			if c.b.unit == "content-bytes" {
				what = "bytes"
			}
			v.TooLarge = fmt.Sprintf("the request's %d %s exceed the %d of limit %q at once; send smaller requests", c.n, what, c.b.burst, c.b.policy)
			s.count(op, outcomeRejected)
			return v
		}
	}
	now := time.Now()
	var wait time.Duration
	waits := make([]time.Duration, len(cs))
	for i, c := range cs {
		r := c.b.lim.ReserveN(now, c.n)
		v.res = append(v.res, r)
		waits[i] = r.DelayFrom(now)
		wait = max(wait, waits[i])
	}
	if wait > maxDelay {
		for _, r := range v.res {
			r.CancelAt(now)
		}
		v.res = nil
		v.RetryAfter = wait
		for i, c := range cs {
			if waits[i] > 0 {
				v.Policies = append(v.Policies, c.b.policyOf(0, waits[i]))
			} else {
				v.Policies = append(v.Policies, c.b.policyOf(c.b.lim.TokensAt(now), 0))
			}
		}
		s.count(op, outcomeRejected)
		return v
	}
	v.Wait = wait
	for _, c := range cs {
		v.Policies = append(v.Policies, c.b.policyOf(c.b.lim.TokensAt(now), 0))
	}
	if wait > 0 {
		s.count(op, outcomeDelayed)
	} else {
		s.count(op, outcomeAllowed)
	}
	return v
}

// Publish admits a publish by key to topic of msgs messages and bytes
// body bytes. nil: the key has no publish limits here.
func (q *Quotas) Publish(key *auth.Key, topic string, msgs, bytes int) *Verdict {
	kq := q.of(key)
	if kq == nil {
		return nil
	}
	var cs []charge
	add := func(sc scope) {
		if sc.pub != nil {
			cs = append(cs, charge{sc.pub, msgs})
		}
		if sc.pubBytes != nil && bytes > 0 {
			cs = append(cs, charge{sc.pubBytes, bytes})
		}
	}
	add(kq.own)
	if i := kq.limits.TopicEntry(topic); i >= 0 {
		add(kq.topics[i])
	}
	if len(cs) == 0 {
		return nil
	}
	return admit(cs, kq.maxDelay, kq.series, "publish")
}

// Receipt is an admitted receive: call Delivered once it has its
// messages (or none), which also ends it.
type Receipt struct {
	Verdict
	// Max is the most messages the receive may take now (≥ 1 when
	// admitted): what the delivery buckets hold.
	Max int

	gates   []*gate
	charges []*bucket
	held    int // tokens reserved up front (after a wait)
	done    bool
}

// Receive admits a receive by key through group wanting up to want
// messages. nil: the key has no receive limits there. A refused receipt
// holds nothing.
func (q *Quotas) Receive(key *auth.Key, group string, want int) *Receipt {
	kq := q.of(key)
	if kq == nil {
		return nil
	}
	scopes := []scope{kq.own}
	if i := kq.limits.GroupEntry(group); i >= 0 {
		scopes = append(scopes, kq.groups[i])
	}
	rc := &Receipt{Max: want}
	rc.series = kq.series
	for _, sc := range scopes {
		if sc.receives != nil {
			rc.gates = append(rc.gates, sc.receives)
		}
		if sc.deliveries != nil {
			rc.charges = append(rc.charges, sc.deliveries)
		}
	}
	if len(rc.gates) == 0 && len(rc.charges) == 0 {
		return nil
	}
	// Requests in flight first: a refused receive takes no tokens.
	refused := false
	for i, g := range rc.gates {
		if n := g.n.Add(1); n > g.max {
			refused = true
			for _, h := range rc.gates[:i+1] {
				h.n.Add(-1)
			}
			break
		}
	}
	if refused {
		for _, g := range rc.gates {
			n := g.n.Load()
			rc.Policies = append(rc.Policies, g.policyOf(n, n >= g.max))
		}
		rc.gates = nil
		rc.RetryAfter = time.Second // a slot frees when a receive ends
		rc.series.count("receive", outcomeRejected)
		return rc
	}
	for _, g := range rc.gates {
		rc.Policies = append(rc.Policies, g.policyOf(g.n.Load(), false))
	}
	// Deliveries: take what the buckets hold now, and charge what came
	// afterwards (Delivered). An empty bucket is a wait for one token,
	// or a refusal.
	now := time.Now()
	avail := float64(want)
	for _, b := range rc.charges {
		avail = min(avail, b.lim.TokensAt(now))
	}
	if avail >= 1 {
		rc.Max = int(avail)
		for _, b := range rc.charges {
			rc.Policies = append(rc.Policies, b.policyOf(b.lim.TokensAt(now), 0))
		}
		rc.series.count("receive", outcomeAllowed)
		return rc
	}
	cs := make([]charge, len(rc.charges))
	for i, b := range rc.charges {
		cs[i] = charge{b, 1}
	}
	v := admit(cs, kq.maxDelay, nil, "receive")
	rc.Policies = append(rc.Policies, v.Policies...)
	if v.Refused() {
		rc.RetryAfter = v.RetryAfter
		rc.release()
		rc.series.count("receive", outcomeRejected)
		return rc
	}
	rc.Wait, rc.res, rc.Max, rc.held = v.Wait, v.res, 1, 1
	rc.series.count("receive", outcomeDelayed)
	return rc
}

// release ends the receive's requests in flight.
func (rc *Receipt) release() {
	for _, g := range rc.gates {
		g.n.Add(-1)
	}
	rc.gates = nil
}

// Delivered ends an admitted receive that handed out n messages: they
// are charged to the delivery buckets (which may go below zero when
// receives ran side by side; the next ones then wait) and its place
// among the receives in flight is freed. Safe to call more than once.
func (rc *Receipt) Delivered(n int) {
	if rc == nil || rc.done {
		return
	}
	rc.done = true
	rc.release()
	if n -= rc.held; n > 0 {
		now := time.Now()
		for _, b := range rc.charges {
			b.lim.ReserveN(now, min(n, b.burst))
		}
	}
}

// Cancel gives up a receive that waited and never ran.
func (rc *Receipt) Cancel() {
	if rc == nil || rc.done {
		return
	}
	rc.Verdict.Cancel()
	rc.held = 0
	rc.Delivered(0)
}
