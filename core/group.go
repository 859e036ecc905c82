package core

import "time"

// MessageModel: how a group's consumers share messages (SPEC §4).
type MessageModel string

const (
	Clustering   MessageModel = "CLUSTERING"
	Broadcasting MessageModel = "BROADCASTING"
)

// ConsumeMode: parallel or in queue order.
type ConsumeMode string

const (
	Concurrently ConsumeMode = "CONCURRENTLY"
	Orderly      ConsumeMode = "ORDERLY"
)

// ConsumeFromWhere: where a group with no committed offset starts.
type ConsumeFromWhere string

const (
	ConsumeFromLastOffset  ConsumeFromWhere = "LAST_OFFSET"
	ConsumeFromFirstOffset ConsumeFromWhere = "FIRST_OFFSET"
	ConsumeFromTimestamp   ConsumeFromWhere = "TIMESTAMP"
)

// Group defaults (SPEC §4).
const (
	DefaultMaxReconsumeTimes = 16
	DefaultInvisibleSeconds  = 60
)

// Subscription is one topic a group consumes, with its tag filter.
type Subscription struct {
	Topic  string
	Filter string // "*" or "TagA || TagB"; with FilterType SQL92 an expression
	// FilterType is "" (TAG) or FilterSQL92 (filter_sql.go).
	FilterType string `json:"FilterType,omitempty"`
}

// PushConfig makes a group a webhook group.
type PushConfig struct {
	URL            string
	MaxInFlight    int
	TimeoutSeconds int
	Secret         string
	// BatchSize is how many messages one POST carries (0 or 1: one per
	// request; at most 32). Orderly groups post batches in queue order.
	BatchSize int
}

// GroupConfig is a consumer group's settings (RocketMQ
// SubscriptionGroupConfig plus the push consumer's settings).
type GroupConfig struct {
	Name              string
	Subscriptions     []Subscription
	MessageModel      MessageModel
	ConsumeMode       ConsumeMode
	ConsumeFrom       ConsumeFromWhere
	ConsumeTimestamp  time.Time // for ConsumeFromTimestamp
	MaxReconsumeTimes int
	InvisibleSeconds  int
	Push              *PushConfig
	// Incarnation is assigned by the group registry when the group is
	// created (a group deleted and created again gets a larger one) and
	// ignored on Put: state written for an older incarnation (offsets,
	// retries) must never land in a newer one.
	Incarnation uint64
}

// Group is a group as stored.
type Group struct {
	GroupConfig
	CreatedAt time.Time
	UpdatedAt time.Time
	// Paused groups hand out nothing: receives answer empty (reason
	// PAUSED) and a push group's webhook gets no request, until resumed.
	// Set by the pause and resume actions, not by a config PUT (which
	// keeps it); persisted with the group.
	Paused   bool
	PausedAt time.Time // when it was paused (zero when not paused)
}
