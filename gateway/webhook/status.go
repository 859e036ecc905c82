package webhook

import "time"

// Status is a snapshot of one group's push delivery, for
// GET /v1/groups/{group} (status.push).
type Status struct {
	URL string `json:"url"`
	// InFlight is the number of POSTs waiting for an answer (at most
	// push.maxInFlight); InFlightMessages the messages they carry.
	InFlight         int `json:"inFlight"`
	InFlightMessages int `json:"inFlightMessages"`
	// Queued is the number of messages handed to the pusher that wait for
	// a free request slot (or for a Retry-After pause to end).
	Queued int `json:"queued"`
	// Delivered and Failed count messages answered with a 2xx and messages
	// sent back for a retry, since the pusher started.
	Delivered uint64 `json:"delivered"`
	Failed    uint64 `json:"failed"`
	// ConsecutiveFailures counts failed requests since the last 2xx.
	ConsecutiveFailures int       `json:"consecutiveFailures"`
	LastSuccessAt       time.Time `json:"lastSuccessAt,omitzero"`
	LastErrorAt         time.Time `json:"lastErrorAt,omitzero"`
	LastError           string    `json:"lastError,omitempty"`
	// PausedUntil is set while a Retry-After from the receiver holds the
	// group's pushing.
	PausedUntil time.Time `json:"pausedUntil,omitzero"`
}

// stats is the mutable part of Status, guarded by Pusher.mu.
type stats struct {
	delivered, failed   uint64
	consecutiveFailures int
	lastSuccessAt       time.Time
	lastErrorAt         time.Time
	lastError           string
}
