package core

import (
	"context"
	"time"
)

// Backend is the one seam below the HTTP layer: everything the API offers,
// implemented in full by each message backend (backend/embedded over the
// bbolt engine, backend/jetstream over a NATS JetStream cluster). The HTTP
// layer holds a Backend and nothing else; it never asks which one it has.
//
// A capability a backend truly cannot offer answers Unsupported (an
// EUnavailable error naming it); docs/jetstream.md lists them. The rules
// that must not differ between backends (the delay-level table, the retry
// and DLQ policy, receipt-handle sealing and the ok / expired / invalid
// answers) live in core/policy, which both call.
//
// Errors are *Error values: ENotFound (unknown topic, group or message),
// EConflict, EInvalid with a field, ETooMany (too many waiting receives),
// EUnavailable (shutting down, or a capability this backend lacks).
type Backend interface {
	TopicService
	DeadLetterService
	ConsumeService
	GroupService
	OperatorService
	// Drain answers every parked receive at once and refuses new ones;
	// settling keeps working.
	Drain()
	// Close drains and releases the backend; leases still held are not
	// lost (their messages are delivered again).
	Close(ctx context.Context) error
}

// TopicService is topics, publish, lookup and browse.
type TopicService interface {
	// PutTopic creates or updates a topic; created reports which.
	PutTopic(cfg TopicConfig) (t Topic, created bool, err error)
	// Topic returns one topic (ENotFound if absent).
	Topic(name string) (Topic, error)
	// Topics lists user topics by name.
	Topics() ([]Topic, error)
	// DeleteTopic removes a topic and its messages.
	DeleteTopic(name string) error
	// TopicStats returns a topic's per-queue offset ranges.
	TopicStats(name string) (TopicStats, error)
	// CorruptMessages lists the topic's stored messages set aside because
	// they failed their checksum when read (ENotFound: no such topic).
	CorruptMessages(topic string) ([]CorruptMessage, error)

	// Put publishes messages atomically and durably; results are in order.
	Put(ctx context.Context, topic string, msgs []PutMessage) ([]PutResult, error)
	// Message returns a message of topic by its user id.
	Message(topic, id string) (*Message, error)
	// MessagesByKey returns up to limit messages of topic carrying key.
	MessagesByKey(topic, key string, limit int) ([]*Message, error)
	// GetMessages reads a queue from offset without consuming (browse).
	GetMessages(mq MessageQueue, offset int64, max int, filter Filter) (GetResult, error)
}

// DeadLetterService is a group's dead-letter queue, its redrive, and the
// filter jobs (redrive and purge by filter) that work through a queue.
type DeadLetterService interface {
	// DLQMessages lists a group's dead letters (%DLQ%<group>) oldest
	// first from cursor ("" = the start), skipping redriven ones; next is
	// "" once the queue is exhausted. A bad cursor is EInvalid.
	DLQMessages(group, cursor string, limit int) (msgs []*Message, next string, err error)
	// DLQDepth counts a group's dead letters not yet redriven.
	DLQDepth(group string) (int64, error)
	// RedriveIDs sends dead letters (those with the given original ids,
	// or all when ids is empty) back through %RETRY%<group> with
	// reconsumeTimes reset, and returns the ids of those that went (also
	// on an error, those that went before it).
	RedriveIDs(ctx context.Context, group string, ids []string) (moved []string, err error)

	// CountMatching counts what a job of kind on name would select now.
	CountMatching(kind, name string, f MessageFilter) (int64, error)
	// StartJob starts a job and returns it RUNNING.
	StartJob(kind, name string, f MessageFilter, ratePerSecond int) (Job, error)
	// GetJob returns a job (ENotFound if unknown).
	GetJob(id string) (Job, error)
}

// ConsumeService is receive and settle: a lease per message under a
// signed receipt handle.
type ConsumeService interface {
	// Receive long-polls the group for up to req.MaxMessages messages and
	// leases each one for req.Invisible. It returns as soon as it has at
	// least one message, after req.Wait with none, when ctx ends (no
	// message is lost: nothing is leased to a caller that has gone) or at
	// once when the backend drains. Errors: ENotFound (unknown group),
	// EConflict (a push group), EInvalid with a field (missing
	// consumerId), ETooMany (too many waiting receives), EUnavailable
	// (shutting down).
	Receive(ctx context.Context, group string, req ReceiveRequest) ([]Received, error)
	// Ack answers CONSUME_SUCCESS for each handle. Acking twice answers ok
	// twice and has no second effect.
	Ack(ctx context.Context, group string, handles []string) ([]HandleResult, error)
	// Nack answers RECONSUME_LATER: delayLevel 0 lets the backend decide,
	// -1 dead-letters now, 1..18 picks that level. reason ("" for none)
	// goes with the message to its retry and dead letter (lastReason).
	Nack(ctx context.Context, group string, handles []string, delayLevel int, reason string) ([]HandleResult, error)
	// Extend sets each lease to end invisible from now.
	Extend(ctx context.Context, group string, handles []string, invisible time.Duration) ([]HandleResult, error)
	// GroupStatus reports what the group's clients own and hold, and a
	// push group's webhook delivery.
	GroupStatus(ctx context.Context, group string) (GroupStatus, error)
}

// GroupService is consumer-group configs, their offsets and pause.
type GroupService interface {
	PutGroup(ctx context.Context, cfg GroupConfig) (g Group, created bool, err error)
	Group(ctx context.Context, name string) (Group, error)
	GroupList(ctx context.Context) ([]Group, error)
	DeleteGroup(ctx context.Context, name string) error
	// PauseGroup pauses (or resumes) a group: it hands nothing out until
	// resumed; settling keeps working.
	PauseGroup(ctx context.Context, name string, paused bool) (Group, error)
	// Offsets lists, per queue of every subscribed topic and of the
	// group's retry topic, the committed and max offsets, the lag and
	// what is in flight. consumerID names a BROADCASTING consumer (""
	// otherwise).
	Offsets(ctx context.Context, group, consumerID string) ([]QueueOffset, error)
	// ResetOffsets moves every queue of topic to position and returns the
	// new offsets. It answers once nothing fetched from the old positions
	// can be handed out any more.
	ResetOffsets(ctx context.Context, group, consumerID, topic string, position ConsumeFromWhere, ts time.Time) ([]QueueOffset, error)
}

// OperatorService is what an operator uses to see and unstick consumption:
// blocked and parked keys of ORDERLY groups, per-key lag, message
// timelines, and why a receive came back empty. consumerID names a
// BROADCASTING group's consumer ("" otherwise).
type OperatorService interface {
	// Blocked lists the group's blocked queues and parked keys.
	Blocked(group, consumerID string) ([]BlockedEntry, error)
	// SkipBlocked dead-letters the failed head blocking key's queue.
	SkipBlocked(group, consumerID string, mq MessageQueue, key string) (BlockedEntry, error)
	// ParkKey sets key's messages aside so the rest of its queue flows.
	ParkKey(group, consumerID string, mq MessageQueue, key string) (BlockedEntry, error)
	// ResumeKey hands the parked ids to release before it forgets the park.
	ResumeKey(group, consumerID string, mq MessageQueue, key string, release func(ids []string) error) (BlockedEntry, error)
	// KeyLags lists up to limit ordering keys of the group with the most
	// unfinished work.
	KeyLags(group string, limit int) ([]KeyLag, error)
	// MessageEvents returns what happened to message id in group, oldest
	// first; RecordEvents adds events the API layer knows of (REDRIVEN).
	MessageEvents(group, id string) []Event
	RecordEvents(group string, evs ...Event)
	// Diagnose explains why a receive of group would come back empty now.
	Diagnose(group, consumerID string) (Diagnosis, error)
}
