package gateway

import "github.com/mqgate/mqgate/core"

// The seam's types moved to core (core/backend.go, consume.go,
// operator.go); this package names them core.X. These aliases only keep
// code written against the old names building until it is rewritten
// (gofmt -r 'gateway.X -> core.X'); then this file goes.

type (
	Service = core.ConsumeService
	Groups  = core.GroupService

	ReceiveRequest = core.ReceiveRequest
	Received       = core.Received
	HandleStatus   = core.HandleStatus
	HandleResult   = core.HandleResult
	GroupStatus    = core.GroupStatus
	ClientStatus   = core.ClientStatus
	QueueStatus    = core.QueueStatus
	QueueOffset    = core.QueueOffset

	BlockedState = core.BlockedState
	BlockedEntry = core.BlockedEntry
	EventType    = core.EventType
	Event        = core.Event
	EmptyReason  = core.EmptyReason
	Diagnosis    = core.Diagnosis
	HeldQueue    = core.HeldQueue
)

const (
	HandleOK      = core.HandleOK
	HandleExpired = core.HandleExpired
	HandleInvalid = core.HandleInvalid

	StateBlocked = core.StateBlocked
	StateParked  = core.StateParked
	StateSkipped = core.StateSkipped
	StateResumed = core.StateResumed

	EventPublished      = core.EventPublished
	EventDelivered      = core.EventDelivered
	EventAcked          = core.EventAcked
	EventNacked         = core.EventNacked
	EventLeaseExpired   = core.EventLeaseExpired
	EventRetryScheduled = core.EventRetryScheduled
	EventDeadLettered   = core.EventDeadLettered
	EventRedriven       = core.EventRedriven
	EventSkipped        = core.EventSkipped

	EmptyNoMessages          = core.EmptyNoMessages
	EmptyNotVisibleYet       = core.EmptyNotVisibleYet
	EmptyKeysBlocked         = core.EmptyKeysBlocked
	EmptyPaused              = core.EmptyPaused
	EmptyNoSubscriptionMatch = core.EmptyNoSubscriptionMatch
)
