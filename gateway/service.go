package gateway

import (
	"context"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/policy"
	"github.com/mqgate/mqgate/gateway/webhook"
)

// Service is what the HTTP layer calls to consume. The embedded
// implementation (Embedded) sits on the in-process push consumer; a
// distributed engine implements the same interface later, and api must not
// know which one it talks to.
//
// Errors are core.Error values: ENotFound (unknown group), EConflict (a push
// group), EInvalid with a field (missing consumerId), ETooMany (too many
// waiting receives), EUnavailable (shutting down).
type Service interface {
	// Receive long-polls the group for up to req.MaxMessages messages and
	// leases each one for req.Invisible. It returns as soon as it has at
	// least one message, after req.Wait with none, when ctx ends (no message
	// is lost: nothing is leased to a caller that has gone) or at once when
	// the service drains.
	Receive(ctx context.Context, group string, req ReceiveRequest) ([]Received, error)
	// Ack answers CONSUME_SUCCESS for each handle. Acking twice answers ok
	// twice and has no second effect.
	Ack(ctx context.Context, group string, handles []string) ([]HandleResult, error)
	// Nack answers RECONSUME_LATER: delayLevel 0 lets the engine decide, -1
	// dead-letters now, 1..18 picks that level.
	Nack(ctx context.Context, group string, handles []string, delayLevel int) ([]HandleResult, error)
	// Extend sets each lease to end invisible from now.
	Extend(ctx context.Context, group string, handles []string, invisible time.Duration) ([]HandleResult, error)
	// GroupStatus reports what the group's clients own and hold.
	GroupStatus(ctx context.Context, group string) (GroupStatus, error)
}

// ReceiveRequest is one long poll: core.ReceiveRequest, whose Validate
// every backend calls.
type ReceiveRequest = core.ReceiveRequest

// Received is one leased message. Message.UserID and Message.UserTopic are
// what users see as messageId and topic.
type Received struct {
	Message        *core.Message
	ReceiptHandle  string
	InvisibleUntil time.Time
}

// HandleStatus is the outcome of one receipt handle in ack / nack / extend:
// policy.HandleStatus, whose rules every backend shares (core/policy).
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
	Push *webhook.Status
}

// ClientStatus is one push-consumer client: the gateway instance for
// CLUSTERING, one consumerId for BROADCASTING.
type ClientStatus struct {
	ClientID string
	Queues   []QueueStatus
}

// QueueStatus is one owned queue.
type QueueStatus struct {
	Queue          core.MessageQueue
	ConsumedOffset int64 // the client's in-memory offset (what it would commit)
	Cached         int   // messages in the ProcessQueue
	Buffered       int   // dispatched to the gateway, waiting for a receive
	InFlight       int   // leased to HTTP callers, unanswered
	Locked         bool  // orderly lock held
}
