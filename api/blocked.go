package api

import (
	"net/http"
	"strconv"

	"github.com/mqgate/mqgate/core"
)

// Blocked ordering keys of ORDERLY groups (API.md "Blocked keys";
// gateway/blocked.go has the mechanics).

// BlockedKey is one blocked queue (its head failed) or parked key.
type BlockedKey struct {
	Topic   string `json:"topic" example:"orders"`
	QueueID int    `json:"queueId" example:"0"`
	// ShardingKey is the head message's ordering key (RocketMQ blocks the
	// whole queue behind it).
	ShardingKey string `json:"shardingKey" example:"customer-9"`
	// MessageID is the failed head (BLOCKED) or the first parked message.
	MessageID string `json:"messageId,omitempty" example:"01J9Z7K3V1W2X3Y4Z5A6B7C8D9"`
	// Since is the head's first failure in a row, or when the key was parked.
	Since string `json:"since" format:"date-time"`
	// Attempts: failed deliveries of the head (BLOCKED) or messages parked (PARKED).
	Attempts int `json:"attempts" example:"3"`
	// LastReason is the last nack reason, when one was given.
	LastReason string `json:"lastReason,omitempty"`
	// State: BLOCKED or PARKED in the list; an action answers the entry's
	// new state (SKIPPED, PARKED or RESUMED).
	State string `json:"state" enums:"BLOCKED,PARKED,SKIPPED,RESUMED" example:"BLOCKED"`
}

// BlockedList is the answer of GET /v1/groups/{group}/blocked.
type BlockedList struct {
	Blocked []BlockedKey `json:"blocked"`
	// NextCursor fetches the next page; absent on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// BlockedKeyRequest names a queue's ordering key.
type BlockedKeyRequest struct {
	// Topic is the queue's topic: a subscribed topic or the group's
	// %RETRY% topic.
	Topic string `json:"topic" validate:"required,resettopic" example:"orders"`
	// QueueID is the queue's id (default 0).
	QueueID     int    `json:"queueId" validate:"min=0,max=255" example:"0"`
	ShardingKey string `json:"shardingKey" validate:"max=1024" example:"customer-9"`
	// ConsumerID names the consumer of a BROADCASTING group, whose queues
	// are its own (required there; ignored for CLUSTERING). Only skip
	// applies to BROADCASTING: park and resume answer 409.
	ConsumerID string `json:"consumerId,omitempty" validate:"max=127" example:"c1"`
}

func newBlockedKey(e core.BlockedEntry) BlockedKey {
	return BlockedKey{Topic: e.Queue.Topic, QueueID: e.Queue.QueueID, ShardingKey: e.ShardingKey, MessageID: e.MessageID,
		Since: formatTime(e.Since), Attempts: e.Attempts, LastReason: e.LastReason, State: string(e.State)}
}

const maxBlockedLimit = 1000

// handleBlockedList lists an ORDERLY group's blocked queues and parked keys.
//
//	@Summary		List blocked ordering keys
//	@Description	ORDERLY groups: queues whose head message failed (nacked or expired, or waiting out its suspension) — everything behind it waits — and keys set aside with park. Sorted by topic, queue and key. A BROADCASTING group's consumers each have their own queues: name one with consumerId.
//	@Tags			blocked keys
//	@Produce		json
//	@Param			group	path		string	true	"Group name"
//	@Param			limit	query		int		false	"Most entries to return (default 100)"	minimum(1)	maximum(1000)
//	@Param			cursor	query		string	false	"nextCursor of the previous page"
//	@Param			consumerId	query	string	false	"BROADCASTING groups: the consumer whose queues to list (required there)"
//	@Success		200		{object}	BlockedList
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		409		{object}	Problem	"Not an ORDERLY group"
//	@Failure		503		{object}	Problem
//	@ID				listBlockedKeys
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/blocked [get]
func (s *Server) handleBlockedList(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	q := r.URL.Query()
	limit, start := 100, 0
	if _, given := q["limit"]; given { // given empty is not a number
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxBlockedLimit {
			s.writeProblem(w, r, core.FieldError("limit", "must be an integer in 1..%d", maxBlockedLimit))
			return
		}
		limit = n
	}
	if v := q.Get("cursor"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || len(v) > 9 {
			s.writeProblem(w, r, core.FieldError("cursor", "is not a cursor of this list"))
			return
		}
		start = n
	}
	es, err := s.backend.Blocked(name, q.Get("consumerId"))
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	out := BlockedList{Blocked: []BlockedKey{}}
	for i := start; i < len(es) && len(out.Blocked) < limit; i++ {
		out.Blocked = append(out.Blocked, newBlockedKey(es[i]))
	}
	if end := start + len(out.Blocked); end < len(es) {
		out.NextCursor = strconv.Itoa(end)
	}
	writeJSON(w, http.StatusOK, out)
}

// blockedAction decodes the key and runs act on it.
func (s *Server) blockedAction(w http.ResponseWriter, r *http.Request, act func(bk core.OperatorService, group, consumerID string, mq core.MessageQueue, key string) (core.BlockedEntry, error)) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req BlockedKeyRequest
	if err := s.decodeValid(w, r, maxSmallJSON, &req, false); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	e, err := act(s.backend, name, req.ConsumerID, core.MessageQueue{Topic: req.Topic, QueueID: req.QueueID}, req.ShardingKey)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newBlockedKey(e))
}

// handleBlockedSkip dead-letters a blocked queue's head.
//
//	@Summary		Skip a blocked key's head message
//	@Description	Sends the failed head message of the queue blocked on this key to the DLQ through the consumer's dead-letter path (exactly once), and the queue continues. A suspended head is dead-lettered when its suspension ends (within a second). BROADCASTING (consumerId required): the head is dropped for that consumer only — a broadcast failure has no retry or DLQ copy (RocketMQ) — and its queue continues; other consumers are untouched.
//	@Tags			blocked keys
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string				true	"Group name"
//	@Param			request	body		BlockedKeyRequest	true	"The key"
//	@Success		200		{object}	BlockedKey			"state SKIPPED"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group, or the queue is not blocked on this key"
//	@Failure		409		{object}	Problem	"Not an ORDERLY group"
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				skipBlockedKey
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/blocked/skip [post]
func (s *Server) handleBlockedSkip(w http.ResponseWriter, r *http.Request) {
	s.blockedAction(w, r, core.OperatorService.SkipBlocked)
}

// handleBlockedPark sets a key aside.
//
//	@Summary		Park an ordering key
//	@Description	Sets the key aside: each of its messages goes, in queue order, to the DLQ (through the consumer's dead-letter path) as it reaches the head of its queue, and the other keys of the queue continue. Resume releases them in order. Parks persist in the data directory across restarts. CLUSTERING only: a BROADCASTING group answers 409 — a broadcast failure is dropped for its consumer with no retry or dead-letter copy, so nothing could be released later.
//	@Tags			blocked keys
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string				true	"Group name"
//	@Param			request	body		BlockedKeyRequest	true	"The key"
//	@Success		200		{object}	BlockedKey			"state PARKED"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		409		{object}	Problem	"Not a CLUSTERING ORDERLY group (BROADCASTING groups cannot park)"
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				parkBlockedKey
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/blocked/park [post]
func (s *Server) handleBlockedPark(w http.ResponseWriter, r *http.Request) {
	s.blockedAction(w, r, core.OperatorService.ParkKey)
}

// handleBlockedResume releases a parked key.
//
//	@Summary		Resume a parked ordering key
//	@Description	Ends the park and redrives the key's parked messages, in order, through %RETRY%group (reconsumeTimes reset). Messages of the key published after the resume may be consumed before the released ones finish.
//	@Tags			blocked keys
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string				true	"Group name"
//	@Param			request	body		BlockedKeyRequest	true	"The key"
//	@Success		200		{object}	BlockedKey			"state RESUMED"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group, or the key is not parked"
//	@Failure		409		{object}	Problem	"Not a CLUSTERING ORDERLY group (BROADCASTING groups cannot park)"
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				resumeBlockedKey
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/blocked/resume [post]
func (s *Server) handleBlockedResume(w http.ResponseWriter, r *http.Request) {
	s.blockedAction(w, r, func(bk core.OperatorService, group, consumerID string, mq core.MessageQueue, key string) (core.BlockedEntry, error) {
		// Redriven before the park is forgotten: a crash in between
		// leaves the key parked, to resume again. ResumeKey calls release
		// only with some ids (empty ids would redrive the whole DLQ).
		return bk.ResumeKey(group, consumerID, mq, key, func(ids []string) error {
			_, err := s.redrive(r.Context(), group, ids)
			return err
		})
	})
}
