package api

import (
	"net/http"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/auth"
)

// TopicRequest is the body of PUT /v1/topics/{topic}. Both fields are
// optional: on create they default, on update they keep their value.
type TopicRequest struct {
	// Queues is the number of queues (read = write queue count). It may
	// grow, never shrink. Default 8.
	Queues *int `json:"queues,omitempty" validate:"omitempty,min=1,max=256" minimum:"1" maximum:"256" example:"8"`
	// RetentionHours is how long messages are kept (RocketMQ
	// fileReservedTime). Default 72.
	RetentionHours *int `json:"retentionHours,omitempty" validate:"omitempty,min=1,max=87600" minimum:"1" maximum:"87600" example:"72"`
}

// Topic is a topic as the API shows it.
type Topic struct {
	// Name of the topic.
	Name string `json:"name" example:"orders"`
	// Queues is the number of queues.
	Queues int `json:"queues" example:"8"`
	// RetentionHours is how long messages are kept.
	RetentionHours int `json:"retentionHours" example:"72"`
	// CreatedAt is when the topic was created (RFC 3339, UTC, milliseconds).
	CreatedAt string `json:"createdAt" format:"date-time" example:"2026-01-02T15:04:05.000Z"`
	// Stats is present on GET /v1/topics/{topic}.
	Stats *TopicStats `json:"stats,omitempty"`
}

// TopicStats counts a topic's messages.
type TopicStats struct {
	// Messages is the number of messages kept, summed over queues.
	Messages int64 `json:"messages" example:"1200"`
	// Queues lists each queue's offset range [minOffset, maxOffset).
	Queues []QueueStats `json:"queues"`
	// Corrupt counts the stored messages set aside because they failed
	// their checksum when read (part of messages, never delivered);
	// GET /v1/topics/{topic}/corrupt lists them.
	Corrupt int64 `json:"corrupt" example:"0"`
	// Bytes estimates the disk the topic's messages take in the store
	// (their records, from a sample of each queue; indexes and free pages
	// not included). /metrics has the file's figures.
	Bytes int64 `json:"bytes" example:"1258291"`
}

// QueueStats is one queue's offset range.
type QueueStats struct {
	// QueueID is the queue's index, 0..queues-1.
	QueueID int `json:"queueId" example:"0"`
	// MinOffset is the offset of the oldest message still kept.
	MinOffset int64 `json:"minOffset" example:"0"`
	// MaxOffset is the offset the next message will get.
	MaxOffset int64 `json:"maxOffset" example:"150"`
}

// TopicList is the answer of GET /v1/topics.
type TopicList struct {
	// Topics are the user topics, by name.
	Topics []Topic `json:"topics"`
	// NextCursor continues the listing (pass it as `cursor`); absent on
	// the last page.
	NextCursor string `json:"nextCursor,omitempty" example:"orders"`
}

func newTopic(t core.Topic) Topic {
	return Topic{Name: t.Name, Queues: t.Queues, RetentionHours: t.RetentionHours, CreatedAt: formatTime(t.CreatedAt)}
}

func newTopicStats(st core.TopicStats) *TopicStats {
	out := &TopicStats{Messages: st.Messages, Corrupt: st.Corrupt, Bytes: st.Bytes, Queues: make([]QueueStats, 0, len(st.Queues))}
	for _, q := range st.Queues {
		out.Queues = append(out.Queues, QueueStats{QueueID: q.QueueID, MinOffset: q.MinOffset, MaxOffset: q.MaxOffset})
	}
	return out
}

// handleTopicPut creates or updates a topic.
//
//	@Summary		Create or update a topic
//	@Description	Creates the topic (201) or updates it (200). The queue count may grow, never shrink (409). Omitted fields default on create and stay unchanged on update.
//	@Tags			topics
//	@Accept			json
//	@Produce		json
//	@Param			topic	path		string			true	"Topic name (^[A-Za-z0-9_-]{1,127}$)"
//	@Param			request	body		TopicRequest	false	"Topic settings"
//	@Success		200		{object}	Topic			"Updated"
//	@Success		201		{object}	Topic			"Created"
//	@Failure		400		{object}	Problem
//	@Failure		403		{object}	Problem	"System topic"
//	@Failure		409		{object}	Problem	"Queue count would shrink"
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				putTopic
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Security		BearerAuth
//	@Router			/v1/topics/{topic} [put]
func (s *Server) handleTopicPut(w http.ResponseWriter, r *http.Request) {
	name, err := userTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req TopicRequest
	if err := decodeJSON(w, r, maxSmallJSON, &req, true); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var fe fieldErrors
	if s.checkStruct(&req, &fe); fe.err() != nil {
		s.writeProblem(w, r, fe.err())
		return
	}
	cfg := core.TopicConfig{Name: name, Queues: core.DefaultQueues, RetentionHours: core.DefaultRetentionHours}
	// An update keeps what the request leaves out; a racing delete only
	// means the topic is re-created with these values.
	if cur, err := s.backend.Topic(name); err == nil {
		cfg = cur.TopicConfig
	} else if core.ErrorCode(err) != core.ENotFound {
		s.writeProblem(w, r, err)
		return
	}
	if req.Queues != nil {
		cfg.Queues = *req.Queues
	}
	if req.RetentionHours != nil {
		cfg.RetentionHours = *req.RetentionHours
	}
	t, created, err := s.backend.PutTopic(cfg)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeUpsert(w, created, newTopic(t))
}

// handleTopicGet returns one topic with its stats.
//
//	@Summary	Get a topic
//	@Tags		topics
//	@Produce	json
//	@Param		topic	path		string	true	"Topic name"
//	@Success	200		{object}	Topic	"The topic with stats"
//	@Failure	400		{object}	Problem
//	@Failure	404		{object}	Problem
//	@Failure	503		{object}	Problem
//	@ID			getTopic
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/topics/{topic} [get]
func (s *Server) handleTopicGet(w http.ResponseWriter, r *http.Request) {
	name, err := readTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	t, err := s.backend.Topic(name)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	st, err := s.backend.TopicStats(name)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	out := newTopic(t)
	out.Stats = newTopicStats(st)
	writeJSON(w, http.StatusOK, out)
}

// handleTopicList lists the user topics.
//
//	@Summary		List topics
//	@Description	Topics in name order, a page at a time: up to limit (default and most 1000) after cursor; follow nextCursor, absent on the last page. Without parameters: the first page.
//	@Tags		topics
//	@Produce	json
//	@Param		limit	query		int		false	"Most topics to return (default 1000)"	minimum(1)	maximum(1000)
//	@Param		cursor	query		string	false	"nextCursor of the previous page"
//	@Success	200	{object}	TopicList
//	@Failure	400	{object}	Problem	"Bad limit or cursor"
//	@Failure	503	{object}	Problem
//	@ID			listTopics
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/topics [get]
func (s *Server) handleTopicList(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := pageParams(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	ts, err := s.backend.Topics()
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	mine := ts[:0]
	for _, t := range ts {
		if visible(r.Context(), auth.Pub, t.Name) { // API keys: the topics it may publish to
			mine = append(mine, t)
		}
	}
	pg, next := page(mine, func(t core.Topic) string { return t.Name }, limit, cursor)
	out := TopicList{Topics: make([]Topic, 0, len(pg)), NextCursor: next}
	for _, t := range pg {
		out.Topics = append(out.Topics, newTopic(t))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleTopicDelete removes a topic and its messages.
//
//	@Summary	Delete a topic
//	@Description	Deletes the topic and its messages. Groups subscribed to it simply receive nothing from it.
//	@Tags		topics
//	@Param		topic	path	string	true	"Topic name"
//	@Success	204		"Deleted"
//	@Failure	400		{object}	Problem
//	@Failure	403		{object}	Problem	"System topic"
//	@Failure	404		{object}	Problem
//	@Failure	503		{object}	Problem
//	@ID			deleteTopic
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Security		BearerAuth
//	@Router		/v1/topics/{topic} [delete]
func (s *Server) handleTopicDelete(w http.ResponseWriter, r *http.Request) {
	name, err := userTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if err := s.backend.DeleteTopic(name); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
