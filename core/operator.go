package core

import (
	"strings"
	"time"
)

// The operator side of the seam (Backend): blocked and parked keys of
// ORDERLY groups, per-key lag, message timelines and why a receive came
// back empty.

// BlockedState is the state of a BlockedEntry.
type BlockedState string

const (
	StateBlocked BlockedState = "BLOCKED" // the head failed; the queue waits behind it
	StateParked  BlockedState = "PARKED"  // the key is set aside
	StateSkipped BlockedState = "SKIPPED" // answer of skip: the head goes to the DLQ
	StateResumed BlockedState = "RESUMED" // answer of resume: the key's messages are released
)

// BlockedEntry is one blocked queue or parked key.
type BlockedEntry struct {
	Queue       MessageQueue
	ShardingKey string
	MessageID   string    // the head (BLOCKED) or the first parked message
	Since       time.Time // first failure of the head, or when the key was parked
	Attempts    int       // failed deliveries of the head; parked: messages parked
	LastReason  string    // the last nack reason (none recorded yet)
	State       BlockedState
	ParkedIDs   []string // resume: the ids to redrive
}

// CompareBlocked orders a blocked-keys list the way every backend answers
// it: by queue, then sharding key, then state (for slices.SortFunc).
func CompareBlocked(a, b BlockedEntry) int {
	if a.Queue != b.Queue {
		if a.Queue.Less(b.Queue) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.ShardingKey, b.ShardingKey); c != 0 {
		return c
	}
	return strings.Compare(string(a.State), string(b.State))
}

// KeyLag is the unfinished work of one ordering key as the backend sees
// it: the messages of the key fetched for consumers and not yet finished.
type KeyLag struct {
	Queue       MessageQueue
	ShardingKey string
	// Depth counts the key's unfinished messages.
	Depth int
	// Oldest is the bornAt of the key's oldest unfinished message;
	// OldestID its user id.
	Oldest   time.Time
	OldestID string
}

// EventType is what happened to a message in a group.
type EventType string

const (
	EventPublished      EventType = "PUBLISHED"
	EventDelivered      EventType = "DELIVERED"
	EventAcked          EventType = "ACKED"
	EventNacked         EventType = "NACKED"
	EventLeaseExpired   EventType = "LEASE_EXPIRED"
	EventRetryScheduled EventType = "RETRY_SCHEDULED"
	EventDeadLettered   EventType = "DEAD_LETTERED"
	EventRedriven       EventType = "REDRIVEN"
	EventSkipped        EventType = "SKIPPED"
)

// Event is one step of a message's life in a group.
type Event struct {
	At         time.Time
	Type       EventType
	MessageID  string // the user id (stable across retries and redrives)
	ConsumerID string // DELIVERED: the BROADCASTING consumer or the gateway client
	Attempt    int    // DELIVERED: reconsumeTimes + 1
	DelayLevel int    // NACKED, RETRY_SCHEDULED
	Reason     string // NACKED: the nack reason, when given
	Job        string // REDRIVEN by a redrive job: its id
}

// EmptyReason says why a receive came back empty (API.md "Receive
// diagnostics"). Decided after the receive, from what the backend holds at
// that moment; a message arriving in between can make the answer stale,
// never wrong about the past.
type EmptyReason string

const (
	// EmptyNoMessages: nothing is buffered, leased or suspended.
	EmptyNoMessages EmptyReason = "NO_MESSAGES"
	// EmptyNotVisibleYet: every message the client holds is leased to
	// another receive; NextVisibleAt is the earliest lease deadline.
	EmptyNotVisibleYet EmptyReason = "NOT_VISIBLE_YET"
	// EmptyKeysBlocked: ORDERLY queues hold their messages back behind a
	// message in flight or a failed head waiting out its suspension.
	EmptyKeysBlocked EmptyReason = "KEYS_BLOCKED"
	// EmptyPaused: the group is paused.
	EmptyPaused EmptyReason = "PAUSED"
	// EmptyNoSubscriptionMatch: none of the group's subscribed topics
	// exists (decided by the API layer, which knows topics).
	EmptyNoSubscriptionMatch EmptyReason = "NO_SUBSCRIPTION_MATCH"
)

// Diagnosis explains an empty receive.
type Diagnosis struct {
	Reason EmptyReason
	// NextVisibleAt is when a message may become takeable: the earliest
	// lease deadline or suspension end of what holds messages back (zero:
	// unknown).
	NextVisibleAt time.Time
	// Blocked are the ORDERLY queues held back (KEYS_BLOCKED).
	Blocked []HeldQueue
}

// HeldQueue is an ORDERLY queue whose head holds back the rest: it is in
// flight (leased, unanswered) or it failed and waits out the consume
// service's suspension.
type HeldQueue struct {
	Queue MessageQueue
	// Head is the message holding the queue (a copy).
	Head Message
	// Since: the head's first failure in a row (suspended or failed
	// before), else when it was leased (zero if unknown).
	Since time.Time
	// Until: its lease deadline or the end of its suspension.
	Until time.Time
	// InFlight: the head is leased to a receive; Buffered: it failed
	// before and waits for a receive (takeable); neither: suspended.
	InFlight, Buffered bool
}

// Failed reports whether the head has failed before: nacked or expired
// at least once (reconsumeTimes > 0) or suspended.
func (h HeldQueue) Failed() bool { return !h.InFlight || h.Head.ReconsumeTimes > 0 }
