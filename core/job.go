package core

import "time"

// Redrive and purge by filter (API.md): the filter, the job kinds and
// states, and a job as the engine stores it (core/engine/jobs.go).

// Job kinds.
const (
	JobDLQRedrive = "DLQ_REDRIVE" // dead letters back through %RETRY%<group>
	JobDLQPurge   = "DLQ_PURGE"   // dead letters dropped (marked, never listed again)
	JobTopicPurge = "TOPIC_PURGE" // a user topic's messages never delivered again
)

// Job states.
const (
	JobRunning = "RUNNING"
	JobDone    = "DONE"
	JobFailed  = "FAILED"
)

// MessageFilter selects the messages a redrive or purge job works on
// (API.md "Redrive and purge by filter"); every set field must match.
type MessageFilter struct {
	// Tags is a tag expression (`a || b`, `*`; core.ParseFilter).
	Tags string `json:"tags,omitempty"`
	// SQL is a SQL92 expression over properties and TAGS (core/sqlfilter).
	SQL string `json:"sql,omitempty"`
	// Reason is a substring of the message's last failure reason
	// (core.PropLastReason); a message without one never matches.
	Reason string `json:"reason,omitempty"`
	// From and To bound when the copy was stored (for a dead letter: when
	// it was dead-lettered): From ≤ storedAt < To; zero is open.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
}

// Job is a redrive or purge by filter as stored.
type Job struct {
	ID     string        `json:"id"`
	Kind   string        `json:"kind"`
	Group  string        `json:"group,omitempty"` // DLQ jobs
	Topic  string        `json:"topic,omitempty"` // topic purge
	Filter MessageFilter `json:"filter"`
	// RatePerSecond bounds how many messages a second the job moves (0:
	// as fast as it goes).
	RatePerSecond int    `json:"ratePerSecond,omitempty"`
	State         string `json:"state"`
	// Matched counts the messages selected so far, Moved those redriven
	// or purged (the same unless one went meanwhile).
	Matched    int64     `json:"matched"`
	Moved      int64     `json:"moved"`
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`

	// Progress: the queue's incarnation, the queue and offset the walk
	// resumes at, and each queue's end when the job started.
	UID   uint64  `json:"uid"`
	Queue int     `json:"queue"`
	At    int64   `json:"at"`
	Ends  []int64 `json:"ends"`
	Start []int64 `json:"start"`
}
