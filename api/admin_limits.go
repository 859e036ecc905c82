package api

import (
	"net/http"
	"time"

	"github.com/mqgate/mqgate/internal/auth"
	"github.com/mqgate/mqgate/internal/quota"
)

// Options.LimitScope values.
const (
	// LimitScopeServer: this process is the only gateway; its limits
	// are the whole service's.
	LimitScopeServer = "server"
	// LimitScopeInstance: every gateway in front of the same backend
	// counts on its own, so N instances allow up to N times each limit.
	LimitScopeInstance = "instance"
)

// LimitsResponse answers GET /v1/admin/limits.
type LimitsResponse struct {
	// Scope is what the limits count: server (this process is the only
	// gateway, --backend embedded) or instance (each gateway in front of
	// one JetStream counts on its own: N instances allow up to N times
	// each limit).
	Scope string `json:"scope" enums:"server,instance" example:"server"`
	// ScopeDetail says the same in a sentence.
	ScopeDetail string `json:"scopeDetail" example:"this server is the only gateway: the limits are the service's"`
	// Keys are the keys with limits, in key-file order (keys without
	// limits are not listed).
	Keys []KeyLimits `json:"keys"`
}

// LimitRates are the token-bucket limits of one scope, as in the key
// file (docs/quotas.md); absent: no limit. A burst is the bucket's size
// (default: one second's worth of the rate).
type LimitRates struct {
	// PublishPerSecond limits published messages (a batch counts each).
	PublishPerSecond float64 `json:"publishPerSecond,omitempty" example:"100"`
	// PublishBurst is the publish bucket's size.
	PublishBurst int `json:"publishBurst,omitempty" example:"100"`
	// PublishBytesPerSecond limits published body bytes.
	PublishBytesPerSecond float64 `json:"publishBytesPerSecond,omitempty" example:"1048576"`
	// PublishBytesBurst is the bytes bucket's size.
	PublishBytesBurst int `json:"publishBytesBurst,omitempty" example:"1048576"`
	// DeliveriesPerSecond limits messages handed out by receive.
	DeliveriesPerSecond float64 `json:"deliveriesPerSecond,omitempty" example:"500"`
	// DeliveriesBurst is the deliveries bucket's size.
	DeliveriesBurst int `json:"deliveriesBurst,omitempty" example:"500"`
	// ConcurrentReceives caps the receive calls (long polls) in flight.
	ConcurrentReceives int `json:"concurrentReceives,omitempty" example:"8"`
}

// KeyLimits are one key's limits and their state now.
type KeyLimits struct {
	// Name is the key's name (never its secret).
	Name string `json:"name" example:"orders-writer"`
	LimitRates
	// MaxDelaySeconds is how long a request over a rate limit is held
	// for its tokens before it is refused (0: refused at once).
	MaxDelaySeconds float64 `json:"maxDelaySeconds" example:"0.5"`
	// Topics are the limits shared by the topics matching each pattern.
	Topics []TopicLimit `json:"topics,omitempty"`
	// Groups are the limits shared by the groups matching each pattern.
	Groups []GroupLimit `json:"groups,omitempty"`
	// Policies are the limits as the RateLimit headers name them, with
	// what each has left now.
	Policies []LimitPolicy `json:"policies"`
}

// TopicLimit is a topic entry of a key's limits.
type TopicLimit struct {
	// Topic is the pattern (as in pub grants).
	Topic string `json:"topic" example:"orders-*"`
	LimitRates
}

// GroupLimit is a group entry of a key's limits.
type GroupLimit struct {
	// Group is the pattern (as in sub grants).
	Group string `json:"group" example:"billing"`
	LimitRates
}

// LimitPolicy is one limit as RateLimit-Policy and RateLimit show it.
type LimitPolicy struct {
	// Name is the policy name of the headers: pub, pub-bytes,
	// deliveries, receives, with :<pattern> for a topic or group entry.
	Name string `json:"name" example:"pub"`
	// Quota is q: per window for a rate, the maximum for receives.
	Quota int64 `json:"quota" example:"100"`
	// WindowSeconds is w (absent for a concurrency limit).
	WindowSeconds int64 `json:"windowSeconds,omitempty" example:"1"`
	// Unit is qu: requests (messages), content-bytes or concurrent-requests.
	Unit string `json:"unit" enums:"requests,content-bytes,concurrent-requests" example:"requests"`
	// Remaining is r: what the bucket holds now (or receives free).
	Remaining int64 `json:"remaining" example:"57"`
}

func newLimitRates(r auth.Rates) LimitRates {
	return LimitRates{
		PublishPerSecond: r.PublishPerSecond, PublishBurst: r.PublishBurst,
		PublishBytesPerSecond: r.PublishBytesPerSecond, PublishBytesBurst: r.PublishBytesBurst,
		DeliveriesPerSecond: r.DeliveriesPerSecond, DeliveriesBurst: r.DeliveriesBurst,
		ConcurrentReceives: r.ConcurrentReceives,
	}
}

func newLimitPolicies(ps []quota.Policy) []LimitPolicy {
	out := make([]LimitPolicy, 0, len(ps))
	for _, p := range ps {
		u := p.Unit
		if u == "" {
			u = "requests"
		}
		out = append(out, LimitPolicy{Name: p.Name, Quota: p.Quota, WindowSeconds: p.Window, Unit: u, Remaining: p.Remaining})
	}
	return out
}

// handleLimits reads the API keys' limits back.
//
//	@Summary		API-key limits
//	@Description	The limits of every API key that has some, as the key file gives them (reloaded on SIGHUP), and what each has left now. scope says what they count: on --backend jetstream each gateway instance counts on its own, so N instances allow up to N times each limit. Without --api-keys there are no limits and the list is empty.
//	@Tags			operations
//	@Produce		json
//	@Success		200	{object}	LimitsResponse
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant (admin)"
//	@ID				getLimits
//	@Security		BearerAuth
//	@Router			/v1/admin/limits [get]
func (s *Server) handleLimits(w http.ResponseWriter, r *http.Request) {
	out := LimitsResponse{Scope: s.scope, Keys: []KeyLimits{}}
	if s.scope == LimitScopeInstance {
		out.ScopeDetail = "each gateway instance counts on its own: N instances in front of the backend allow up to N times each limit"
	} else {
		out.ScopeDetail = "this server is the only gateway: the limits are the service's"
	}
	if s.keys != nil {
		for _, k := range s.keys.Keys().All() {
			l := k.Limits
			if l == nil {
				continue
			}
			kl := KeyLimits{Name: k.Name, LimitRates: newLimitRates(l.Rates),
				MaxDelaySeconds: time.Duration(l.MaxDelay).Seconds(), Policies: newLimitPolicies(s.quotas.State(k))}
			for _, t := range l.Topics {
				kl.Topics = append(kl.Topics, TopicLimit{Topic: t.Topic, LimitRates: newLimitRates(t.Rates)})
			}
			for _, g := range l.Groups {
				kl.Groups = append(kl.Groups, GroupLimit{Group: g.Group, LimitRates: newLimitRates(g.Rates)})
			}
			out.Keys = append(out.Keys, kl)
		}
	}
	writeJSON(w, http.StatusOK, out)
}
