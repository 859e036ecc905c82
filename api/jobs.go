package api

import (
	"net/http"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Redrive and purge by filter (API.md "Redrive and purge by filter"): a
// dry run counts what a filter selects; otherwise the engine starts a job
// that works through the queue at ratePerSecond and survives restarts.

// JobFilter selects messages; every field given must match.
type JobFilter struct {
	// Tags is a tag expression: `*` or tags joined by `||`.
	Tags string `json:"tags,omitempty" validate:"max=4096" example:"created || paid"`
	// SQL is a SQL92 expression over properties and TAGS (as a
	// subscription's with filterType SQL92).
	SQL string `json:"sql,omitempty" validate:"max=4096" example:"region = 'eu' AND amount > 100"`
	// Reason is a substring of the message's lastReason.
	Reason string `json:"reason,omitempty" validate:"max=256" example:"503"`
	// From selects messages stored (dead letters: dead-lettered) at or
	// after this time.
	From *time.Time `json:"from,omitempty" format:"date-time"`
	// To selects messages stored before this time.
	To *time.Time `json:"to,omitempty" format:"date-time"`
}

func (f *JobFilter) engine() core.MessageFilter {
	if f == nil {
		return core.MessageFilter{}
	}
	out := core.MessageFilter{Tags: f.Tags, SQL: f.SQL, Reason: f.Reason}
	if f.From != nil {
		out.From = *f.From
	}
	if f.To != nil {
		out.To = *f.To
	}
	return out
}

// PurgeRequest is the body of the purge endpoints.
type PurgeRequest struct {
	// Filter selects what to purge; absent: everything.
	Filter *JobFilter `json:"filter,omitempty"`
	// DryRun only counts what the filter selects (200 {"matched"}).
	DryRun bool `json:"dryRun,omitempty" example:"false"`
	// RatePerSecond bounds how many messages a second the job handles
	// (default: no bound).
	RatePerSecond int `json:"ratePerSecond,omitempty" validate:"omitempty,min=1,max=1000000" minimum:"1" maximum:"1000000" example:"500"`
}

// DryRunResult is the answer of a dry run.
type DryRunResult struct {
	// Matched counts the messages the filter selects now.
	Matched int64 `json:"matched" example:"42"`
}

// Job is a redrive or purge running in the background.
type Job struct {
	ID string `json:"id" example:"06h2lg7v1kf9hhtg0rkbf6cn4o"`
	// Kind: DLQ_REDRIVE, DLQ_PURGE or TOPIC_PURGE.
	Kind  string `json:"kind" enums:"DLQ_REDRIVE,DLQ_PURGE,TOPIC_PURGE" example:"DLQ_REDRIVE"`
	Group string `json:"group,omitempty" example:"billing"`
	Topic string `json:"topic,omitempty" example:"orders"`
	// State: RUNNING, DONE or FAILED (see error).
	State string `json:"state" enums:"RUNNING,DONE,FAILED" example:"RUNNING"`
	// Matched counts the messages selected so far.
	Matched int64 `json:"matched" example:"120"`
	// Moved counts those redriven or purged so far.
	Moved         int64  `json:"moved" example:"120"`
	RatePerSecond int    `json:"ratePerSecond,omitempty" example:"500"`
	Error         string `json:"error,omitempty"`
	StartedAt     string `json:"startedAt" format:"date-time"`
	// FinishedAt is set once the job is DONE or FAILED.
	FinishedAt string `json:"finishedAt,omitempty" format:"date-time"`
}

func newJob(j core.Job) Job {
	out := Job{ID: j.ID, Kind: j.Kind, Group: j.Group, Topic: j.Topic, State: j.State, Matched: j.Matched,
		Moved: j.Moved, RatePerSecond: j.RatePerSecond, Error: j.Error, StartedAt: formatTime(j.StartedAt)}
	if !j.FinishedAt.IsZero() {
		out.FinishedAt = formatTime(j.FinishedAt)
	}
	return out
}

// runFilterJob answers a dry run (200 {"matched"}, via dry) or starts a
// job (202 Job with Location).
func (s *Server) runFilterJob(w http.ResponseWriter, r *http.Request, kind, name string, f *JobFilter, dryRun bool, rate int, dry func(n int64) any) {
	je := s.backend
	if dryRun {
		n, err := je.CountMatching(kind, name, f.engine())
		if err != nil {
			s.writeProblem(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, dry(n))
		return
	}
	j, err := je.StartJob(kind, name, f.engine(), rate)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/jobs/"+j.ID)
	writeJSON(w, http.StatusAccepted, newJob(j))
}

// handleDLQPurge drops dead letters selected by a filter.
//
//	@Summary		Purge dead letters by filter
//	@Description	Dead letters of the group that match the filter (all without one) leave the listing and the DLQ depth for good. With dryRun the answer is 200 {"matched"}; otherwise 202 and a job to follow at GET /v1/jobs/{id}, paced at ratePerSecond, that survives restarts and never purges an entry twice.
//	@Tags			dead letters
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string			true	"Group name"
//	@Param			request	body		PurgeRequest	false	"Filter, dry run, rate"
//	@Success		200		{object}	DryRunResult	"Dry run"
//	@Success		202		{object}	Job				"Job started"
//	@Header			202		{string}	Location		"/v1/jobs/{id}"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				purgeDeadLetters
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/dlq/purge [post]
func (s *Server) handleDLQPurge(w http.ResponseWriter, r *http.Request) {
	name, err := s.knownGroup(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req PurgeRequest
	if err := s.decodeValid(w, r, maxSmallJSON, &req, true); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	s.runFilterJob(w, r, core.JobDLQPurge, name, req.Filter, req.DryRun, req.RatePerSecond,
		func(n int64) any { return DryRunResult{Matched: n} })
}

// handleTopicPurge drops a topic's messages selected by a filter.
//
//	@Summary		Purge a topic's messages by filter
//	@Description	Messages of the topic that match the filter (all without one), among those stored when the job starts, are never delivered to any group again (nor shown when browsing); lookups by id or key find them until retention removes them, and messages already handed to a consumer are not recalled. With dryRun the answer is 200 {"matched"}; otherwise 202 and a job to follow at GET /v1/jobs/{id}.
//	@Tags			topics
//	@Accept			json
//	@Produce		json
//	@Param			topic	path		string			true	"Topic name"
//	@Param			request	body		PurgeRequest	false	"Filter, dry run, rate"
//	@Success		200		{object}	DryRunResult	"Dry run"
//	@Success		202		{object}	Job				"Job started"
//	@Header			202		{string}	Location		"/v1/jobs/{id}"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown topic"
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				purgeTopic
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/topics/{topic}/purge [post]
func (s *Server) handleTopicPurge(w http.ResponseWriter, r *http.Request) {
	name, err := userTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req PurgeRequest
	if err := s.decodeValid(w, r, maxSmallJSON, &req, true); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	s.runFilterJob(w, r, core.JobTopicPurge, name, req.Filter, req.DryRun, req.RatePerSecond,
		func(n int64) any { return DryRunResult{Matched: n} })
}

// handleJobGet shows a job's progress.
//
//	@Summary		Get a redrive or purge job
//	@Description	The job's state and counters; progress is recorded with each chunk, so after a restart a RUNNING job goes on where it stopped.
//	@Tags			dead letters
//	@Produce		json
//	@Param			id	path		string	true	"Job id"
//	@Success		200	{object}	Job
//	@Failure		404	{object}	Problem	"Unknown job"
//	@Failure		503	{object}	Problem
//	@ID				getJob
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id} [get]
func (s *Server) handleJobGet(w http.ResponseWriter, r *http.Request) {
	je := s.backend
	id := pathParam(r, "id")
	if id == "" || len(id) > core.MaxIDLength {
		s.writeProblem(w, r, core.Errorf(core.ENotFound, "job %q not found", id))
		return
	}
	j, err := je.GetJob(id)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newJob(j))
}
