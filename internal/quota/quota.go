package quota

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/mqgate/mqgate/internal/auth"
)

// Quotas holds the limiters of a Keyring's keys. Safe for concurrent use.
type Quotas struct {
	kr  *auth.Keyring
	cur atomic.Pointer[table]
	m   *Metrics

	mu       sync.Mutex // serialises rebuilds; guards limiters and gates
	limiters map[string]*rate.Limiter
	gates    map[string]*atomic.Int64
}

// New follows kr's keys. m may be nil (no metrics).
func New(kr *auth.Keyring, m *Metrics) *Quotas {
	return &Quotas{kr: kr, m: m, limiters: map[string]*rate.Limiter{}, gates: map[string]*atomic.Int64{}}
}

// table is the limiters of one key set.
type table struct {
	keys  *auth.Keys
	byKey map[string]*keyQuota
}

// keyQuota is one key's limiters.
type keyQuota struct {
	name     string
	limits   *auth.Limits // of the key set the table was built for
	maxDelay time.Duration
	own      scope
	topics   []scope // parallel to Limits.Topics
	groups   []scope // parallel to Limits.Groups
	series   *keySeries
}

// scope is the limiters of one level: the key itself, or one entry.
type scope struct {
	pub, pubBytes, deliveries *bucket
	receives                  *gate
}

// bucket is one token bucket and how it is named in headers.
type bucket struct {
	policy string
	unit   string // "" (requests, here messages) or "content-bytes"
	rate   float64
	burst  int
	lim    *rate.Limiter
}

// gate counts requests in flight against a maximum.
type gate struct {
	policy string
	max    int64
	n      *atomic.Int64
}

// current is the table for the keyring's key set, rebuilt when it moved.
func (q *Quotas) current() *table {
	ks := q.kr.Keys()
	if t := q.cur.Load(); t != nil && t.keys == ks {
		return t
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if t := q.cur.Load(); t != nil && t.keys == ks {
		return t
	}
	t := q.build(ks)
	q.cur.Store(t)
	return t
}

// build makes the table of ks, reusing the limiters and counters whose
// names stay (q.mu held).
func (q *Quotas) build(ks *auth.Keys) *table {
	t := &table{keys: ks, byKey: map[string]*keyQuota{}}
	usedL, usedG := map[string]bool{}, map[string]bool{}
	now := time.Now()
	mk := func(key, policy, unit string, r float64, b int) *bucket {
		if r <= 0 {
			return nil
		}
		id := key + "\x00" + policy
		burst := auth.Burst(r, b)
		lim := q.limiters[id]
		if lim == nil {
			lim = rate.NewLimiter(rate.Limit(r), burst)
			q.limiters[id] = lim
		} else {
			lim.SetLimitAt(now, rate.Limit(r))
			lim.SetBurstAt(now, burst)
		}
		usedL[id] = true
		return &bucket{policy: policy, unit: unit, rate: r, burst: burst, lim: lim}
	}
	mg := func(key, policy string, n int) *gate {
		if n <= 0 {
			return nil
		}
		id := key + "\x00" + policy
		c := q.gates[id]
		if c == nil {
			c = new(atomic.Int64)
			q.gates[id] = c
		}
		usedG[id] = true
		return &gate{policy: policy, max: int64(n), n: c}
	}
	mkScope := func(key, suffix string, r auth.Rates) scope {
		return scope{
			pub:        mk(key, "pub"+suffix, "", r.PublishPerSecond, r.PublishBurst),
			pubBytes:   mk(key, "pub-bytes"+suffix, "content-bytes", r.PublishBytesPerSecond, r.PublishBytesBurst),
			deliveries: mk(key, "deliveries"+suffix, "", r.DeliveriesPerSecond, r.DeliveriesBurst),
			receives:   mg(key, "receives"+suffix, r.ConcurrentReceives),
		}
	}
	var names []string
	for _, k := range ks.All() {
		l := k.Limits
		if l == nil {
			continue
		}
		kq := &keyQuota{name: k.Name, limits: l, maxDelay: time.Duration(l.MaxDelay), own: mkScope(k.Name, "", l.Rates)}
		for _, e := range l.Topics {
			kq.topics = append(kq.topics, mkScope(k.Name, ":"+e.Topic, e.Rates))
		}
		for _, e := range l.Groups {
			kq.groups = append(kq.groups, mkScope(k.Name, ":"+e.Group, e.Rates))
		}
		t.byKey[k.Name] = kq
		names = append(names, k.Name)
	}
	for id := range q.limiters {
		if !usedL[id] {
			delete(q.limiters, id)
		}
	}
	for id := range q.gates {
		if !usedG[id] {
			delete(q.gates, id)
		}
	}
	if q.m != nil {
		series := q.m.forKeys(names)
		for _, kq := range t.byKey {
			kq.series = series[kq.name]
		}
	}
	return t
}

// of is key's quotas, nil when it has none (or keys are off).
func (q *Quotas) of(key *auth.Key) *keyQuota {
	if q == nil || key == nil || key.Limits == nil {
		return nil
	}
	return q.current().byKey[key.Name]
}

// Policy is the state of one limit for the RateLimit headers.
type Policy struct {
	// Name is the policy's name: pub, pub-bytes, deliveries, receives,
	// with ":<pattern>" for a topic or group entry.
	Name string
	// Quota and Window (seconds; 0 for a concurrency limit) are the
	// RateLimit-Policy's q and w; Unit its qu ("" = requests).
	Quota  int64
	Window int64
	Unit   string
	// Remaining and Reset (seconds; -1 for none) are RateLimit's r and t.
	Remaining int64
	Reset     int64
	// Violated is true for the limits that refused the request.
	Violated bool
}

// policyOf describes b after a request, tokens being what is left (or
// owed, below 0); wait, when the request was refused, is how long until
// it would have been let through.
func (b *bucket) policyOf(tokens float64, wait time.Duration) Policy {
	p := Policy{Name: b.policy, Unit: b.unit}
	if b.rate >= 1 {
		p.Quota, p.Window = int64(math.Round(b.rate)), 1
	} else {
		p.Quota, p.Window = 1, int64(math.Ceil(1/b.rate))
	}
	if wait > 0 {
		p.Violated, p.Reset = true, ceilSeconds(wait)
		return p
	}
	p.Remaining = max(0, int64(math.Floor(tokens)))
	p.Reset = ceilSeconds(time.Duration((float64(b.burst) - tokens) / b.rate * float64(time.Second)))
	return p
}

func (g *gate) policyOf(inFlight int64, refused bool) Policy {
	return Policy{Name: g.policy, Unit: "concurrent-requests", Quota: g.max, Remaining: max(0, g.max-inFlight), Reset: -1, Violated: refused}
}

// ceilSeconds is d in whole seconds, rounded up (0 for d ≤ 0).
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Header formats policies as the RateLimit-Policy and RateLimit fields
// of draft-ietf-httpapi-ratelimit-headers (lists of structured-field
// items: "pub";q=100;w=1 and "pub";r=0;t=1).
func Header(ps []Policy) (policy, limit string) {
	var pb, lb []byte
	for i, p := range ps {
		if i > 0 {
			pb, lb = append(pb, ", "...), append(lb, ", "...)
		}
		pb = strconv.AppendQuote(pb, p.Name)
		pb = append(pb, ";q="...)
		pb = strconv.AppendInt(pb, p.Quota, 10)
		if p.Unit != "" {
			pb = append(pb, ";qu="...)
			pb = strconv.AppendQuote(pb, p.Unit)
		}
		if p.Window > 0 {
			pb = append(pb, ";w="...)
			pb = strconv.AppendInt(pb, p.Window, 10)
		}
		lb = strconv.AppendQuote(lb, p.Name)
		lb = append(lb, ";r="...)
		lb = strconv.AppendInt(lb, p.Remaining, 10)
		if p.Reset >= 0 {
			lb = append(lb, ";t="...)
			lb = strconv.AppendInt(lb, p.Reset, 10)
		}
	}
	return string(pb), string(lb)
}

// State is what each of key's limits has left now (for GET
// /v1/admin/limits): its own, then its topic and group entries', in file
// order. Empty when the key has no limits.
func (q *Quotas) State(key *auth.Key) []Policy {
	kq := q.of(key)
	if kq == nil {
		return nil
	}
	now := time.Now()
	var out []Policy
	add := func(sc scope) {
		for _, b := range []*bucket{sc.pub, sc.pubBytes, sc.deliveries} {
			if b != nil {
				out = append(out, b.policyOf(b.lim.TokensAt(now), 0))
			}
		}
		if g := sc.receives; g != nil {
			out = append(out, g.policyOf(g.n.Load(), false))
		}
	}
	add(kq.own)
	for _, sc := range kq.topics {
		add(sc)
	}
	for _, sc := range kq.groups {
		add(sc)
	}
	return out
}
