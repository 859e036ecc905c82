package api

import (
	"net/http"
)

// Pausing a group (API.md "Pause"; gateway/pause.go has the mechanics).

// handleGroupPause pauses a group.
//
//	@Summary		Pause a consumer group
//	@Description	The group hands out nothing until resumed: a receive waits out its waitSeconds and answers empty with reason PAUSED (GET of the group shows the same), and a push group's webhook gets no new request. Messages already received can still be acked, nacked and extended, and leases still expire. The pause is stored with the group before the answer (it survives restarts, and PUT keeps it). When it takes hold depends on the backend: the embedded server applies it before the answer (webhook requests in flight are aborted, and what they carried is delivered again after the resume); behind JetStream every gateway applies it within about a second of the answer (its group cache; push groups within the bucket watch's latency), and webhook requests in flight finish and are answered by their outcome. Pausing a paused group changes nothing.
//	@Tags			groups
//	@Produce		json
//	@Param			group	path		string	true	"Group name"
//	@Success		200		{object}	Group	"paused true"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		503		{object}	Problem
//	@ID				pauseGroup
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/pause [post]
func (s *Server) handleGroupPause(w http.ResponseWriter, r *http.Request) {
	s.pauseGroup(w, r, true)
}

// handleGroupResume resumes a paused group.
//
//	@Summary		Resume a paused consumer group
//	@Description	Ends a pause: parked receives get messages again at once and a push group's webhook delivery starts again from the committed offsets. Resuming a running group changes nothing.
//	@Tags			groups
//	@Produce		json
//	@Param			group	path		string	true	"Group name"
//	@Success		200		{object}	Group	"paused false"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		503		{object}	Problem
//	@ID				resumeGroup
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/resume [post]
func (s *Server) handleGroupResume(w http.ResponseWriter, r *http.Request) {
	s.pauseGroup(w, r, false)
}

func (s *Server) pauseGroup(w http.ResponseWriter, r *http.Request, paused bool) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	g, err := s.backend.PauseGroup(r.Context(), name, paused)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newGroup(g))
}
