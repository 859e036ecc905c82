package api

import (
	"net/http"
	"strconv"

	"github.com/mqgate/mqgate/core"
)

// Dead letters (API.md "Dead letters"): a group's %DLQ%<group> is never
// consumed; operators list it page by page and redrive what they have
// fixed. Redrive goes through %RETRY%<group>, so only the group whose DLQ
// it is sees the messages again (RocketMQ's console "resend" does the
// same through the retry topic).

// DLQ listing bounds (the engine caps a page at the same maximum).
const (
	defaultDLQLimit = 32
	maxDLQLimit     = 1000
)

// DLQPage is one page of a group's dead letters.
type DLQPage struct {
	// Messages are dead letters oldest first, with their original id,
	// topic, tags, keys, properties and body; reconsumeTimes is the
	// failed delivery's count (maxReconsumeTimes after exhausted retries).
	// There is no queue position and no receipt handle: dead letters are
	// not consumed.
	Messages []DeadLetter `json:"messages"`
	// NextCursor continues the listing (pass it as `cursor`); absent on
	// the last page.
	NextCursor string `json:"nextCursor,omitempty" example:"32"`
}

// RedriveRequest is the body of POST /v1/groups/{group}/dlq/redrive.
type RedriveRequest struct {
	// MessageIDs are original message ids to redrive; empty or absent
	// redrives every dead letter of the group.
	MessageIDs []string `json:"messageIds,omitempty" validate:"max=1000,dive,required,max=64" maxItems:"1000" binding:"optional" example:"0A1B2C3D4E5F60718293A4B5"`
	// Filter selects the dead letters to redrive instead of messageIds;
	// with it (or dryRun or ratePerSecond) the redrive is a job: 202.
	Filter *JobFilter `json:"filter,omitempty"`
	// DryRun only counts what the filter selects: 200 {"matched"}.
	DryRun bool `json:"dryRun,omitempty" example:"false"`
	// RatePerSecond bounds how many dead letters a second the job
	// redrives (default: no bound).
	RatePerSecond int `json:"ratePerSecond,omitempty" validate:"omitempty,min=1,max=1000000" minimum:"1" maximum:"1000000" example:"500"`
}

// RedriveResult is the answer of a redrive.
type RedriveResult struct {
	// Redriven counts the dead letters sent back to the group.
	Redriven int `json:"redriven" example:"3"`
	// Matched is the answer of a dry run: how many dead letters the
	// filter selects now (redriven is then 0).
	Matched *int64 `json:"matched,omitempty" example:"3"`
}

// knownGroup returns the {group} of the request once it names an existing
// group (404 otherwise: a DLQ exists only for a group).
func (s *Server) knownGroup(r *http.Request) (string, error) {
	name, err := groupParam(r)
	if err != nil {
		return "", err
	}
	if _, err := s.backend.Group(r.Context(), name); err != nil {
		return "", err
	}
	return name, nil
}

// handleDLQList pages through a group's dead letters.
//
//	@Summary		List a group's dead letters
//	@Description	Dead letters of the group (%DLQ%group), oldest first, redriven ones left out. Each shows its original id, topic, tags, keys, properties, body and reconsumeTimes. Follow nextCursor for the next page.
//	@Tags			dead letters
//	@Produce		json
//	@Param			group	path		string	true	"Group name"
//	@Param			limit	query		int		false	"Most messages to return (default 32)"	minimum(1)	maximum(1000)
//	@Param			cursor	query		string	false	"nextCursor of the previous page"
//	@Success		200		{object}	DLQPage
//	@Failure		400		{object}	Problem	"Bad limit or cursor"
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		503		{object}	Problem
//	@ID				listDeadLetters
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/dlq [get]
func (s *Server) handleDLQList(w http.ResponseWriter, r *http.Request) {
	name, err := s.knownGroup(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	q := r.URL.Query()
	limit := defaultDLQLimit
	if _, ok := q["limit"]; ok { // given empty is not "absent": it is not a number
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxDLQLimit {
			s.writeProblem(w, r, core.FieldError("limit", "must be an integer in 1..%d", maxDLQLimit))
			return
		}
		limit = n
	}
	msgs, next, err := s.backend.DLQMessages(name, q.Get("cursor"), limit)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	out := DLQPage{Messages: make([]DeadLetter, 0, len(msgs)), NextCursor: next}
	for _, m := range msgs {
		out.Messages = append(out.Messages, newDeadLetter(m))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleDLQRedrive sends dead letters back to their group.
//
//	@Summary		Redrive dead letters
//	@Description	Sends the dead letters with the given original ids (all of them when messageIds is empty or absent) back to this group only, through %RETRY%group, at once and with reconsumeTimes reset to 0. Each dead letter is redriven at most once; ids not in the DLQ are ignored. With a filter (tags, sql, reason, from, to) instead: dryRun answers 200 {"matched"}; otherwise 202 and a job (GET /v1/jobs/{id}) redrives the matching dead letters at ratePerSecond, surviving restarts without redriving any twice.
//	@Tags			dead letters
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string			true	"Group name"
//	@Param			request	body		RedriveRequest	false	"Which dead letters"
//	@Success		200		{object}	RedriveResult	"messageIds: redriven; dryRun: matched"
//	@Success		202		{object}	Job				"filter or ratePerSecond: a job started"
//	@Header			202		{string}	Location		"/v1/jobs/{id}"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		409		{object}	Problem	"A concurrent redrive took some of them; retry"
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				redriveDeadLetters
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/dlq/redrive [post]
func (s *Server) handleDLQRedrive(w http.ResponseWriter, r *http.Request) {
	name, err := s.knownGroup(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req RedriveRequest
	if err := s.decodeValid(w, r, maxSmallJSON, &req, true); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if req.Filter != nil || req.DryRun || req.RatePerSecond != 0 {
		if len(req.MessageIDs) > 0 {
			s.writeProblem(w, r, core.FieldError("messageIds", "cannot be combined with filter, dryRun or ratePerSecond"))
			return
		}
		s.runFilterJob(w, r, core.JobDLQRedrive, name, req.Filter, req.DryRun, req.RatePerSecond,
			func(n int64) any { return RedriveResult{Matched: &n} })
		return
	}
	n, err := s.redrive(r.Context(), name, req.MessageIDs) // timeline.go
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, RedriveResult{Redriven: n})
}
