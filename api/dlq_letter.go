package api

import "github.com/mqgate/mqgate/core"

// DeadLetter is one entry of a group's DLQ: the message as published
// (original id and topic) with the failed delivery's reconsumeTimes.
type DeadLetter struct {
	Message
	// LastReason is why the last delivery failed: the nack's reason, the
	// webhook's status or error, or a lease timeout; for a blocked head an
	// operator skipped, "skipped by operator; last: " and the head's last
	// reason. Absent when unknown.
	LastReason string `json:"lastReason,omitempty" example:"payment service answered 503"`
}

func newDeadLetter(m *core.Message) DeadLetter {
	dm := newMessage(m)
	// The position is in %DLQ%group, not in the topic shown; it would
	// only mislead.
	dm.QueueID, dm.QueueOffset = nil, nil
	return DeadLetter{Message: dm, LastReason: m.SysProps[core.PropLastReason]}
}
