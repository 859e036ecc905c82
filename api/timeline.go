package api

import (
	"context"
	"net/http"

	"github.com/mqgate/mqgate/core"
)

// Message timelines (API.md "Timeline"; gateway/timeline.go keeps the
// events).

// TimelineEvent is one step of a message's life in a group.
type TimelineEvent struct {
	At   string `json:"at" format:"date-time"`
	Type string `json:"type" enums:"PUBLISHED,DELIVERED,ACKED,NACKED,LEASE_EXPIRED,RETRY_SCHEDULED,DEAD_LETTERED,REDRIVEN,SKIPPED" example:"DELIVERED"`
	// ConsumerID is who received it (DELIVERED).
	ConsumerID string `json:"consumerId,omitempty" example:"c1"`
	// Attempt is the delivery's number, 1 for the first (DELIVERED).
	Attempt int `json:"attempt,omitempty" example:"1"`
	// Reason is the nack reason, when one was given (NACKED).
	Reason string `json:"reason,omitempty"`
	// DelayLevel: the nack's level (NACKED) or the retry's (RETRY_SCHEDULED).
	DelayLevel *int `json:"delayLevel,omitempty" example:"3"`
	// JobID is the redrive job that moved it back (REDRIVEN by
	// POST /v1/groups/{group}/dlq/redrive with a filter; absent for a
	// redrive by message ids or a blocked key's resume).
	JobID string `json:"jobId,omitempty" example:"06h2lg7v1kf9hhtg0rkbf6cn4o"`
}

// Timeline is the answer of GET /v1/groups/{group}/messages/{messageId}/timeline.
type Timeline struct {
	Events []TimelineEvent `json:"events"`
}

// handleTimeline lists what happened to one message in a group.
//
//	@Summary		A message's timeline in a group
//	@Description	PUBLISHED (from the stored message), then what this gateway saw in the group: DELIVERED, ACKED, NACKED, LEASE_EXPIRED, RETRY_SCHEDULED, DEAD_LETTERED, REDRIVEN (with jobId when a redrive job moved it), SKIPPED, oldest first. Retention: the last 4096 events of each group, in memory (a restart forgets them).
//	@Tags			consuming
//	@Produce		json
//	@Param			group		path		string	true	"Group name"
//	@Param			messageId	path		string	true	"Message id"
//	@Success		200			{object}	Timeline
//	@Failure		400			{object}	Problem
//	@Failure		404			{object}	Problem	"Unknown group, or a message neither stored in its topics nor seen"
//	@Failure		503			{object}	Problem
//	@ID				getMessageTimeline
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/messages/{messageId}/timeline [get]
func (s *Server) handleTimeline(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	g, err := s.backend.Group(r.Context(), name)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	id := pathParam(r, "messageId")
	out := Timeline{Events: []TimelineEvent{}}
	for _, sub := range g.Subscriptions {
		if m, err := s.backend.Message(sub.Topic, id); err == nil {
			out.Events = append(out.Events, TimelineEvent{At: formatTime(m.BornAt), Type: string(core.EventPublished)})
			break
		}
	}
	for _, e := range s.backend.MessageEvents(name, id) {
		te := TimelineEvent{At: formatTime(e.At), Type: string(e.Type), ConsumerID: e.ConsumerID, Attempt: e.Attempt, Reason: e.Reason, JobID: e.Job}
		if e.Type == core.EventNacked || e.Type == core.EventRetryScheduled {
			level := e.DelayLevel
			te.DelayLevel = &level
		}
		out.Events = append(out.Events, te)
	}
	if len(out.Events) == 0 {
		s.writeProblem(w, r, core.Errorf(core.ENotFound, "message %q is neither stored in the topics of group %q nor seen by it", id, name))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// redrive redrives ids of group (all when empty) and records REDRIVEN in
// the group's timeline for the dead letters that moved, and only those: a
// redrive that moved nothing records nothing.
func (s *Server) redrive(ctx context.Context, group string, ids []string) (int, error) {
	moved, err := s.backend.RedriveIDs(ctx, group, ids)
	s.noteRedriven(ctx, group, moved)
	return len(moved), err
}

// noteRedriven records REDRIVEN for ids in group's timeline.
func (s *Server) noteRedriven(_ context.Context, group string, ids []string) {
	for _, id := range ids {
		s.backend.RecordEvents(group, core.Event{Type: core.EventRedriven, MessageID: id})
	}
}
