package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Per-key lag of ORDERLY groups (an addition to API.md).

// KeyLag is one ordering key's unfinished work.
type KeyLag struct {
	Topic       string `json:"topic" example:"orders"`
	QueueID     int    `json:"queueId" example:"0"`
	ShardingKey string `json:"shardingKey" example:"customer-9"`
	// Depth counts the key's pulled, unfinished messages.
	Depth int `json:"depth" example:"12"`
	// OldestAgeSeconds is how long ago the key's oldest unfinished message
	// was born.
	OldestAgeSeconds int64 `json:"oldestAgeSeconds" example:"95"`
	// OldestBornAt is that message's bornAt.
	OldestBornAt string `json:"oldestBornAt" format:"date-time"`
	// OldestMessageID is that message's id.
	OldestMessageID string `json:"oldestMessageId"`
}

// KeyLagList is the answer of GET /v1/groups/{group}/keys.
type KeyLagList struct {
	Keys []KeyLag `json:"keys"`
}

// handleKeyLags lists an ORDERLY group's keys by the age of their oldest
// unfinished message.
//
//	@Summary		Per-key lag (ORDERLY)
//	@Description	The ordering keys with unfinished messages, oldest first: depth and the age of the oldest unacked message per (topic, queueId, shardingKey). Counts what the gateway's client has pulled (up to its cache thresholds), not what is only in the store.
//	@Tags			blocked keys
//	@Produce		json
//	@Param			group	path		string	true	"Group name"
//	@Param			limit	query		int		false	"Most keys to return (default 20)"	minimum(1)	maximum(1000)
//	@Success		200		{object}	KeyLagList
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown group"
//	@Failure		409		{object}	Problem	"Not a CLUSTERING ORDERLY group"
//	@Failure		503		{object}	Problem
//	@ID				listKeyLags
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/keys [get]
func (s *Server) handleKeyLags(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	limit := 20
	if _, given := r.URL.Query()["limit"]; given { // given empty is not a number
		n, err := strconv.Atoi(r.URL.Query().Get("limit"))
		if err != nil || n < 1 || n > 1000 {
			s.writeProblem(w, r, core.FieldError("limit", "must be an integer in 1..1000"))
			return
		}
		limit = n
	}
	ks, err := s.backend.KeyLags(name, limit)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	now := time.Now()
	out := KeyLagList{Keys: make([]KeyLag, 0, len(ks))}
	for _, k := range ks {
		out.Keys = append(out.Keys, KeyLag{Topic: k.Queue.Topic, QueueID: k.Queue.QueueID, ShardingKey: k.ShardingKey,
			Depth: k.Depth, OldestAgeSeconds: int64(now.Sub(k.Oldest) / time.Second),
			OldestBornAt: formatTime(k.Oldest), OldestMessageID: k.OldestID})
	}
	writeJSON(w, http.StatusOK, out)
}
