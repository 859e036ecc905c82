package core

import (
	"time"

	"github.com/mqgate/mqgate/core/policy"
)

// The consume side of the seam (Backend): a long-poll receive leases
// messages, each under a signed receipt handle that ack, nack and extend
// settle.

// Received is one leased message. Message.UserID and Message.UserTopic are
// what users see as messageId and topic.
type Received struct {
	Message        *Message
	ReceiptHandle  string
	InvisibleUntil time.Time
}

// HandleStatus is the outcome of one receipt handle in ack / nack /
// extend. Its rules are the same on every backend: core/policy states and
// implements them (it stays standard-library only, below every backend),
// and this is its name in the seam.
type HandleStatus = policy.HandleStatus

const (
	HandleOK      = policy.HandleOK      // done (or, for ack, done before)
	HandleExpired = policy.HandleExpired // the lease ended or the handle names an earlier delivery
	HandleInvalid = policy.HandleInvalid // malformed, forged or of another group
)

// HandleResult is the answer for one handle, in request order.
type HandleResult struct {
	ReceiptHandle  string
	Status         HandleStatus
	InvisibleUntil time.Time // extend (and a fresh lease) only
}

// GroupStatus is the live state of a group's consumption.
type GroupStatus struct {
	Group   string
	Waiting int // receives parked on the group
	Clients []ClientStatus
	// Push is the webhook delivery state of a push group running here
	// (nil for pull groups).
	Push *PushStatus
}

// ClientStatus is one consuming client of a group: the gateway instance
// for CLUSTERING, one consumerId for BROADCASTING.
type ClientStatus struct {
	ClientID string
	Queues   []QueueStatus
}

// QueueStatus is one queue a client owns, in terms every backend can
// answer.
type QueueStatus struct {
	Queue MessageQueue
	// Position is the offset the client would commit now (its consumed
	// offset; a backend without one reports its acknowledged floor).
	Position int64
	// Held counts the messages the backend fetched for this client and
	// has not finished (buffered, in flight or held back behind a key).
	Held     int
	Buffered int // ready for a receive, not yet handed out
	InFlight int // leased to receivers, unanswered
	// Exclusive: the client holds the queue alone (an ORDERLY group's
	// queue, taken so per-key order holds across instances).
	Exclusive bool
}

// PushStatus is a snapshot of one group's webhook delivery, for
// GET /v1/groups/{group} (status.push).
type PushStatus struct {
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

// QueueOffset is one queue of a group's offsets.
type QueueOffset struct {
	Queue     MessageQueue
	Committed int64 // committed offset (the queue's min offset when none yet)
	Max       int64
	Lag       int64 // messages from Committed to Max not yet finished
	InFlight  int   // leased to receivers and unanswered
	Buffered  int   // fetched for receivers, not yet received
}
