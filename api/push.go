package api

import (
	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// PushStatus is a push group's webhook delivery as this gateway sees it
// (status.push of GET /v1/groups/{group}).
type PushStatus struct {
	// URL is where this gateway pushes right now (it follows a changed
	// push.url within moments of the PUT).
	URL string `json:"url" example:"https://hooks.example/orders"`
	// InFlight counts POSTs waiting for an answer (at most
	// push.maxInFlight).
	InFlight int `json:"inFlight" example:"3"`
	// InFlightMessages counts the messages those POSTs carry.
	InFlightMessages int `json:"inFlightMessages" example:"3"`
	// Queued counts messages waiting for a free request slot or for a
	// Retry-After pause to end.
	Queued int `json:"queued" example:"0"`
	// Delivered counts messages answered with a 2xx since this gateway
	// started pushing the group.
	Delivered uint64 `json:"delivered" example:"1200"`
	// Failed counts messages sent back for a retry since this gateway
	// started pushing the group.
	Failed uint64 `json:"failed" example:"4"`
	// ConsecutiveFailures counts failed requests since the last 2xx.
	ConsecutiveFailures int `json:"consecutiveFailures" example:"0"`
	// LastSuccessAt is the time of the last 2xx; absent until the first.
	LastSuccessAt string `json:"lastSuccessAt,omitempty" format:"date-time"`
	// LastErrorAt is the time of the last failure; absent until the first.
	LastErrorAt string `json:"lastErrorAt,omitempty" format:"date-time"`
	// LastError describes the last failure (status code, timeout,
	// connection or network-guard error).
	LastError string `json:"lastError,omitempty" example:"HTTP 503 Service Unavailable"`
	// PausedUntil is set while a Retry-After from the receiver holds the
	// group's pushing.
	PausedUntil string `json:"pausedUntil,omitempty" format:"date-time"`
}

func newPushStatus(s *core.PushStatus) *PushStatus {
	if s == nil {
		return nil
	}
	return &PushStatus{
		URL:      s.URL,
		InFlight: s.InFlight, InFlightMessages: s.InFlightMessages, Queued: s.Queued,
		Delivered: s.Delivered, Failed: s.Failed, ConsecutiveFailures: s.ConsecutiveFailures,
		LastSuccessAt: formatTime(s.LastSuccessAt), LastErrorAt: formatTime(s.LastErrorAt),
		LastError: s.LastError, PausedUntil: formatTime(s.PausedUntil),
	}
}

// validatePush checks a push block beyond its struct tags (the URL's
// scheme and host, the secret's encoding), naming the field (push.url…):
// a bad block is a 400 at PUT, not a pusher that cannot start.
func validatePush(p *core.PushConfig) error {
	if p == nil {
		return nil
	}
	return webhook.ValidateConfig(*p)
}
