package api

import (
	"net/http"
	"strconv"

	"github.com/mqgate/mqgate/core"
)

// Read limits.
const (
	defaultReadLimit = 32
	maxKeyLimit      = 100
	maxBrowseLimit   = 1000
)

// handleMessageGet returns one message by id.
//
//	@Summary	Get a message by id
//	@Tags		messages
//	@Produce	json
//	@Param		topic		path		string	true	"Topic name"
//	@Param		messageId	path		string	true	"Message id"
//	@Success	200			{object}	Message
//	@Failure	400			{object}	Problem
//	@Failure	404			{object}	Problem	"Unknown topic or message"
//	@Failure	500			{object}	Problem	"The stored message failed its checksum (type urn:mqgate:problem:corrupt); it is set aside and listed by GET /v1/topics/{topic}/corrupt"
//	@Failure	503			{object}	Problem
//	@ID			getMessage
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/topics/{topic}/messages/{messageId} [get]
func (s *Server) handleMessageGet(w http.ResponseWriter, r *http.Request) {
	topic, err := readTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	id := pathParam(r, "messageId")
	if id == "" || len(id) > core.MaxIDLength {
		s.writeProblem(w, r, core.Errorf(core.ENotFound, "no message %q in topic %q", id, topic))
		return
	}
	m, err := s.backend.Message(topic, id)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newMessage(m))
}

// handleMessageQuery finds messages by key, or browses one queue.
//
//	@Summary		Query messages by key, or browse a queue
//	@Description	With `key`: the messages carrying that key (newest last). With `queueId`: up to `limit` messages of that queue from `offset` (default: the oldest kept), without consuming them; `nextOffset` continues the browse. Exactly one of key and queueId.
//	@Tags			messages
//	@Produce		json
//	@Param			topic	path		string	true	"Topic name"
//	@Param			key		query		string	false	"Message key"
//	@Param			queueId	query		int		false	"Queue to browse"	minimum(0)
//	@Param			offset	query		int		false	"First queue offset to browse"	minimum(0)
//	@Param			limit	query		int		false	"Most messages to return (key: 1..100, browse: 1..1000; default 32)"	minimum(1)	maximum(1000)
//	@Param			filter	query		string	false	"Tag filter for a browse: * or TagA || TagB"
//	@Success		200		{object}	MessageList
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem	"Unknown topic"
//	@Failure		503		{object}	Problem
//	@ID				queryMessages
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/topics/{topic}/messages [get]
func (s *Server) handleMessageQuery(w http.ResponseWriter, r *http.Request) {
	topic, err := readTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	q := r.URL.Query()
	var fe fieldErrors
	intParam := func(name string, def, min, max int64) int64 {
		if _, ok := q[name]; !ok { // given empty is not "absent": it is not a number
			return def
		}
		v := q.Get(name)
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			fe.add(name, "must be an integer")
		case n < min:
			fe.add(name, "must be ≥ "+strconv.FormatInt(min, 10))
		case n > max:
			fe.add(name, "must be ≤ "+strconv.FormatInt(max, 10))
		}
		return n
	}
	_, hasKey := q["key"]
	_, hasQueue := q["queueId"]
	switch {
	case hasKey && hasQueue:
		fe.add("key", "give either key or queueId, not both")
	case !hasKey && !hasQueue:
		fe.add("key", "give key (query by key) or queueId (browse a queue)")
	}
	if hasKey {
		key := q.Get("key")
		if key == "" || len(key) > 128 {
			fe.add("key", "must be 1..128 characters")
		}
		limit := intParam("limit", defaultReadLimit, 1, maxKeyLimit)
		if err := fe.err(); err != nil {
			s.writeProblem(w, r, err)
			return
		}
		if _, err := s.backend.Topic(topic); err != nil {
			s.writeProblem(w, r, err)
			return
		}
		ms, err := s.backend.MessagesByKey(topic, key, int(limit))
		if err != nil {
			s.writeProblem(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, newMessageList(ms))
		return
	}
	qid := intParam("queueId", 0, 0, core.MaxQueues-1)
	offset := intParam("offset", -1, 0, 1<<62)
	limit := intParam("limit", defaultReadLimit, 1, maxBrowseLimit)
	filter, ferr := core.ParseFilter(q.Get("filter"))
	if ferr != nil {
		fe.add("filter", "must be * or TagA || TagB")
	}
	if err := fe.err(); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	t, err := s.backend.Topic(topic)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if int(qid) >= t.Queues {
		fe.add("queueId", "must be < "+strconv.Itoa(t.Queues)+" (the topic's queue count)")
		s.writeProblem(w, r, fe.err())
		return
	}
	mq := core.MessageQueue{Topic: topic, QueueID: int(qid)}
	res, err := s.backend.GetMessages(mq, max(offset, 0), int(limit), filter)
	// Below the min offset (never given, or removed by retention) the
	// browse starts at the oldest kept message, as a consumer would.
	if err == nil && res.Status == core.OffsetIllegal && offset < res.MinOffset {
		res, err = s.backend.GetMessages(mq, res.MinOffset, int(limit), filter)
	}
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	out := newMessageList(res.Messages)
	next, lo, hi := res.NextOffset, res.MinOffset, res.MaxOffset
	out.NextOffset, out.MinOffset, out.MaxOffset = &next, &lo, &hi
	writeJSON(w, http.StatusOK, out)
}
