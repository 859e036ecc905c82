package api

import (
	"net/http"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/webhook"
	"github.com/mqgate/mqgate/internal/auth"
)

// GroupRequest is the body of PUT /v1/groups/{group}: the whole config
// (PUT replaces; omitted fields take their defaults).
type GroupRequest struct {
	// Subscriptions are the topics the group consumes, each with a tag filter.
	Subscriptions []SubscriptionBody `json:"subscriptions" validate:"required,min=1,max=64,dive"`
	// MessageModel: CLUSTERING (each message to one consumer; default) or
	// BROADCASTING (every consumerId gets every message).
	MessageModel string `json:"messageModel,omitempty" validate:"omitempty,oneof=CLUSTERING BROADCASTING" enums:"CLUSTERING,BROADCASTING" example:"CLUSTERING"`
	// ConsumeMode: CONCURRENTLY (default) or ORDERLY (per queue, in order).
	ConsumeMode string `json:"consumeMode,omitempty" validate:"omitempty,oneof=CONCURRENTLY ORDERLY" enums:"CONCURRENTLY,ORDERLY" example:"CONCURRENTLY"`
	// ConsumeFrom is where a queue with no committed offset starts.
	ConsumeFrom *ConsumeFrom `json:"consumeFrom,omitempty"`
	// MaxReconsumeTimes is how many failures send a message to the
	// dead-letter topic (default 16).
	MaxReconsumeTimes *int `json:"maxReconsumeTimes,omitempty" validate:"omitempty,min=0,max=1000" minimum:"0" maximum:"1000" example:"16"`
	// InvisibleSeconds is the default lease of a received message (default 60).
	InvisibleSeconds *int `json:"invisibleSeconds,omitempty" validate:"omitempty,min=1,max=43200" minimum:"1" maximum:"43200" example:"60"`
	// Push makes this a webhook group (it then answers 409 to receive).
	Push *PushBody `json:"push,omitempty"`
}

// SubscriptionBody is one subscribed topic.
type SubscriptionBody struct {
	// Topic is a user topic.
	Topic string `json:"topic" validate:"required,name" example:"orders"`
	// Filter is `*` (default) or tags joined by `||`; with filterType
	// SQL92 an expression over properties and TAGS, e.g.
	// `a > 5 AND region IN ('eu','us') AND b IS NOT NULL` (a bad one is a
	// 400 naming its position).
	Filter string `json:"filter,omitempty" example:"created || paid"`
	// FilterType is TAG (default) or SQL92.
	FilterType string `json:"filterType,omitempty" enums:"TAG,SQL92" example:"TAG"`
}

// ConsumeFrom is the start position of a new group.
type ConsumeFrom struct {
	// Position: LAST_OFFSET (default), FIRST_OFFSET or TIMESTAMP.
	Position string `json:"position,omitempty" validate:"omitempty,oneof=LAST_OFFSET FIRST_OFFSET TIMESTAMP" enums:"LAST_OFFSET,FIRST_OFFSET,TIMESTAMP" example:"LAST_OFFSET"`
	// Timestamp is required with TIMESTAMP (RFC 3339); null or absent
	// otherwise.
	Timestamp *time.Time `json:"timestamp" format:"date-time"`
}

// ConsumeFromView is a group's start position as GET shows it: the
// timestamp is null unless the position is TIMESTAMP.
type ConsumeFromView struct {
	// Position: LAST_OFFSET, FIRST_OFFSET or TIMESTAMP.
	Position string `json:"position" enums:"LAST_OFFSET,FIRST_OFFSET,TIMESTAMP" example:"LAST_OFFSET"`
	// Timestamp is the start time of a TIMESTAMP group, else null.
	Timestamp *time.Time `json:"timestamp" format:"date-time"`
}

// PushBody is a group's webhook.
type PushBody struct {
	// URL receives each message as a POST.
	URL string `json:"url" validate:"required" example:"https://hooks.example/orders"`
	// MaxInFlight bounds concurrent requests (orderly: one per queue). Default 16.
	MaxInFlight int `json:"maxInFlight,omitempty" validate:"omitempty,min=1,max=1024" example:"16"`
	// TimeoutSeconds bounds one request. Default 15.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty" validate:"omitempty,min=1,max=300" example:"15"`
	// Secret signs requests (Standard Webhooks); write-only.
	Secret string `json:"secret,omitempty" example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`
	// BatchSize is how many messages one POST carries (ORDERLY: in queue
	// order). Default 1.
	BatchSize int `json:"batchSize,omitempty" validate:"omitempty,min=1,max=32" example:"1"`
}

// Group is a consumer group as the API shows it; the push secret is never
// returned.
type Group struct {
	Name              string             `json:"name" example:"orders-billing"`
	Subscriptions     []SubscriptionBody `json:"subscriptions"`
	MessageModel      string             `json:"messageModel" enums:"CLUSTERING,BROADCASTING" example:"CLUSTERING"`
	ConsumeMode       string             `json:"consumeMode" enums:"CONCURRENTLY,ORDERLY" example:"CONCURRENTLY"`
	ConsumeFrom       ConsumeFromView    `json:"consumeFrom"`
	MaxReconsumeTimes int                `json:"maxReconsumeTimes" example:"16"`
	InvisibleSeconds  int                `json:"invisibleSeconds" example:"60"`
	Push              *PushView          `json:"push,omitempty"`
	CreatedAt         string             `json:"createdAt" format:"date-time"`
	UpdatedAt         string             `json:"updatedAt" format:"date-time"`
	// Paused: the group hands out nothing (receives answer empty with
	// reason PAUSED, a push group's webhook gets no request) until
	// POST /v1/groups/{group}/resume. Set by POST …/pause, kept by PUT.
	Paused bool `json:"paused" example:"false"`
	// PausedAt is when the group was paused (absent when not paused).
	PausedAt string `json:"pausedAt,omitempty" format:"date-time"`
	// Status is present on GET /v1/groups/{group}.
	Status *GroupStatus `json:"status,omitempty"`
}

// PushView is a group's webhook without its secret.
type PushView struct {
	URL            string `json:"url"`
	MaxInFlight    int    `json:"maxInFlight"`
	TimeoutSeconds int    `json:"timeoutSeconds"`
	// HasSecret tells whether requests are signed.
	HasSecret bool `json:"hasSecret"`
	BatchSize int  `json:"batchSize"`
}

// GroupStatus is a group's live consumption state.
type GroupStatus struct {
	// QueuesOwned counts the queues this gateway's clients own.
	QueuesOwned int `json:"queuesOwned" example:"8"`
	// InFlight counts messages received and not yet acked, nacked or expired.
	InFlight int `json:"inFlight" example:"3"`
	// Buffered counts messages pulled and waiting for a receive.
	Buffered int `json:"buffered" example:"12"`
	// Waiting counts long polls parked on the group.
	Waiting int `json:"waiting" example:"2"`
	// RetryDepth is the lag of the group's retry queue (%RETRY%group).
	RetryDepth int64 `json:"retryDepth" example:"0"`
	// DLQDepth counts the group's dead letters not yet redriven.
	DLQDepth int64 `json:"dlqDepth" example:"0"`
	// Consumers are the live client ids (the gateway for CLUSTERING, each
	// consumerId for BROADCASTING).
	Consumers []string `json:"consumers"`
	// Push is the webhook delivery of a push group (absent for pull
	// groups, and while this gateway has not started pushing it yet).
	Push *PushStatus `json:"push,omitempty"`
	// Empty is what an empty receive would answer now (diagnose.go):
	// present when nothing waits to be received, ORDERLY keys are
	// blocked or the group is paused; absent for push groups.
	Empty *EmptyReceive `json:"empty,omitempty"`
}

// GroupList is the answer of GET /v1/groups.
type GroupList struct {
	Groups []Group `json:"groups"`
	// NextCursor continues the listing (pass it as `cursor`); absent on
	// the last page.
	NextCursor string `json:"nextCursor,omitempty" example:"orders-billing"`
}

// OffsetList is the answer of the offsets endpoints.
type OffsetList struct {
	Offsets []QueueOffset `json:"offsets"`
}

// QueueOffset is one queue's consumption progress.
type QueueOffset struct {
	Topic   string `json:"topic" example:"orders"`
	QueueID int    `json:"queueId" example:"0"`
	// CommittedOffset is the next offset the group will consume.
	CommittedOffset int64 `json:"committedOffset" example:"140"`
	// MaxOffset is the offset the next message will get.
	MaxOffset int64 `json:"maxOffset" example:"150"`
	// Lag is maxOffset - committedOffset.
	Lag int64 `json:"lag" example:"10"`
	// InFlight counts received, unanswered messages of the queue.
	InFlight int `json:"inFlight" example:"2"`
	// Buffered counts pulled messages not yet received.
	Buffered int `json:"buffered" example:"8"`
}

// OffsetResetRequest is the body of POST /v1/groups/{group}/offsets/reset.
type OffsetResetRequest struct {
	// Topic is a subscribed topic (or the group's retry topic).
	Topic string `json:"topic" validate:"required,resettopic" example:"orders"`
	// Position: LAST_OFFSET, FIRST_OFFSET or TIMESTAMP.
	Position string `json:"position" validate:"required,oneof=LAST_OFFSET FIRST_OFFSET TIMESTAMP" enums:"LAST_OFFSET,FIRST_OFFSET,TIMESTAMP" example:"TIMESTAMP"`
	// Timestamp is required with TIMESTAMP.
	Timestamp *time.Time `json:"timestamp,omitempty" format:"date-time"`
	// ConsumerID names the consumer of a BROADCASTING group.
	ConsumerID string `json:"consumerId,omitempty" validate:"omitempty,name" example:"c1"`
}

func groupParam(r *http.Request) (string, error) {
	name := pathParam(r, "group")
	if !core.ValidName(name) {
		return "", core.FieldError("group", "must match ^[A-Za-z0-9_-]{1,127}$")
	}
	return name, nil
}

func (req *GroupRequest) config(name string) core.GroupConfig {
	cfg := core.GroupConfig{
		Name:              name,
		MessageModel:      core.MessageModel(req.MessageModel),
		ConsumeMode:       core.ConsumeMode(req.ConsumeMode),
		MaxReconsumeTimes: core.DefaultMaxReconsumeTimes,
	}
	for _, s := range req.Subscriptions {
		cfg.Subscriptions = append(cfg.Subscriptions, core.Subscription{Topic: s.Topic, Filter: s.Filter, FilterType: s.FilterType})
	}
	if req.ConsumeFrom != nil {
		cfg.ConsumeFrom = core.ConsumeFromWhere(req.ConsumeFrom.Position)
		if req.ConsumeFrom.Timestamp != nil {
			cfg.ConsumeTimestamp = *req.ConsumeFrom.Timestamp
		}
	}
	if req.MaxReconsumeTimes != nil {
		cfg.MaxReconsumeTimes = *req.MaxReconsumeTimes
	}
	if req.InvisibleSeconds != nil {
		cfg.InvisibleSeconds = *req.InvisibleSeconds
	}
	if p := req.Push; p != nil {
		cfg.Push = &core.PushConfig{URL: p.URL, MaxInFlight: p.MaxInFlight, TimeoutSeconds: p.TimeoutSeconds, Secret: p.Secret, BatchSize: p.BatchSize}
	}
	return cfg
}

func newGroup(g core.Group) Group {
	out := Group{
		Name:              g.Name,
		Subscriptions:     make([]SubscriptionBody, 0, len(g.Subscriptions)),
		MessageModel:      string(g.MessageModel),
		ConsumeMode:       string(g.ConsumeMode),
		ConsumeFrom:       ConsumeFromView{Position: string(g.ConsumeFrom)},
		MaxReconsumeTimes: g.MaxReconsumeTimes,
		InvisibleSeconds:  g.InvisibleSeconds,
		CreatedAt:         formatTime(g.CreatedAt),
		UpdatedAt:         formatTime(g.UpdatedAt),
		Paused:            g.Paused,
	}
	if g.Paused && !g.PausedAt.IsZero() {
		out.PausedAt = formatTime(g.PausedAt)
	}
	for _, s := range g.Subscriptions {
		out.Subscriptions = append(out.Subscriptions, SubscriptionBody{Topic: s.Topic, Filter: s.Filter, FilterType: filterTypeOf(s)})
	}
	if !g.ConsumeTimestamp.IsZero() {
		ts := g.ConsumeTimestamp.UTC()
		out.ConsumeFrom.Timestamp = &ts
	}
	if p := g.Push; p != nil {
		out.Push = &PushView{URL: p.URL, MaxInFlight: p.MaxInFlight, TimeoutSeconds: p.TimeoutSeconds, HasSecret: p.Secret != "", BatchSize: p.BatchSize}
		if out.Push.BatchSize == 0 { // stored before the default was applied at PUT
			out.Push.BatchSize = webhook.DefaultBatchSize
		}
	}
	return out
}

func newOffsetList(qs []core.QueueOffset) OffsetList {
	out := OffsetList{Offsets: make([]QueueOffset, 0, len(qs))}
	for _, q := range qs {
		out.Offsets = append(out.Offsets, QueueOffset{
			Topic: q.Queue.Topic, QueueID: q.Queue.QueueID, CommittedOffset: q.Committed,
			MaxOffset: q.Max, Lag: q.Lag, InFlight: q.InFlight, Buffered: q.Buffered,
		})
	}
	return out
}

// handleGroupPut creates or replaces a consumer group.
//
//	@Summary		Create or replace a consumer group
//	@Description	Creates the group (201) or replaces its config (200). Changes (subscriptions, mode, push) take effect without a restart. A push block makes it a webhook group (receive answers 409); removing it makes it a pull group again. The push secret is write-only.
//	@Tags			groups
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string			true	"Group name (^[A-Za-z0-9_-]{1,127}$)"
//	@Param			request	body		GroupRequest	true	"Group config"
//	@Success		200		{object}	Group			"Updated"
//	@Success		201		{object}	Group			"Created"
//	@Failure		400		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				putGroup
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group} [put]
func (s *Server) handleGroupPut(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req GroupRequest
	if err := s.decodeValid(w, r, maxSmallJSON, &req, false); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	cfg := req.config(name)
	if err := validatePush(cfg.Push); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	g, created, err := s.backend.PutGroup(r.Context(), cfg)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeUpsert(w, created, newGroup(g))
}

// handleGroupList lists the consumer groups.
//
//	@Summary		List consumer groups
//	@Description	Groups in name order, a page at a time: up to limit (default and most 1000) after cursor; follow nextCursor, absent on the last page. Without parameters: the first page.
//	@Tags		groups
//	@Produce	json
//	@Param		limit	query		int		false	"Most groups to return (default 1000)"	minimum(1)	maximum(1000)
//	@Param		cursor	query		string	false	"nextCursor of the previous page"
//	@Success	200	{object}	GroupList
//	@Failure	400	{object}	Problem	"Bad limit or cursor"
//	@Failure	503	{object}	Problem
//	@ID			listGroups
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/groups [get]
func (s *Server) handleGroupList(w http.ResponseWriter, r *http.Request) {
	limit, cursor, err := pageParams(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	gs, err := s.backend.GroupList(r.Context())
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	mine := gs[:0]
	for _, g := range gs {
		if visible(r.Context(), auth.Sub, g.Name) { // API keys: the groups it may consume through
			mine = append(mine, g)
		}
	}
	pg, next := page(mine, func(g core.Group) string { return g.Name }, limit, cursor)
	out := GroupList{Groups: make([]Group, 0, len(pg)), NextCursor: next}
	for _, g := range pg {
		out.Groups = append(out.Groups, newGroup(g))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleGroupGet returns one group with its live status.
//
//	@Summary	Get a consumer group
//	@Tags		groups
//	@Produce	json
//	@Param		group	path		string	true	"Group name"
//	@Success	200		{object}	Group	"The group with status"
//	@Failure	400		{object}	Problem
//	@Failure	404		{object}	Problem
//	@Failure	503		{object}	Problem
//	@ID			getGroup
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/groups/{group} [get]
func (s *Server) handleGroupGet(w http.ResponseWriter, r *http.Request) {
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
	out := newGroup(g)
	st := &GroupStatus{Consumers: []string{}}
	gs, err := s.backend.GroupStatus(r.Context(), name)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	st.Waiting = gs.Waiting
	for _, c := range gs.Clients {
		st.Consumers = append(st.Consumers, c.ClientID)
		for _, q := range c.Queues {
			st.QueuesOwned++
			st.InFlight += q.InFlight
			st.Buffered += q.Buffered
		}
	}
	if gs.Push != nil {
		// A push group's in flight are its POSTed messages, its buffered
		// those queued in the pusher.
		st.Push = newPushStatus(gs.Push)
		st.InFlight, st.Buffered = gs.Push.InFlightMessages, gs.Push.Queued
	}
	if g.MessageModel != core.Broadcasting {
		if offs, err := s.backend.Offsets(r.Context(), name, ""); err == nil {
			for _, o := range offs {
				if o.Queue.Topic == core.RetryTopic(name) {
					st.RetryDepth += o.Lag
				}
			}
		}
	}
	// Redriven dead letters stay in the append-only %DLQ% queue, marked;
	// DLQDepth leaves them out where the topic's message count would not.
	if n, err := s.backend.DLQDepth(name); err == nil {
		st.DLQDepth = n
	}
	if gs.Push == nil {
		st.Empty = s.statusEmpty(r.Context(), name, st.Buffered)
	}
	out.Status = st
	writeJSON(w, http.StatusOK, out)
}

// handleGroupDelete removes a group, its offsets, retry and dead-letter topics.
//
//	@Summary	Delete a consumer group
//	@Tags		groups
//	@Param		group	path	string	true	"Group name"
//	@Success	204
//	@Failure	400	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	503	{object}	Problem
//	@ID			deleteGroup
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/groups/{group} [delete]
func (s *Server) handleGroupDelete(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if err := s.backend.DeleteGroup(r.Context(), name); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleGroupOffsets lists a group's offsets, retry queue included.
//
//	@Summary	Get a group's offsets
//	@Tags		groups
//	@Produce	json
//	@Param		group		path		string	true	"Group name"
//	@Param		consumerId	query		string	false	"Consumer (BROADCASTING groups only, required there)"
//	@Success	200			{object}	OffsetList
//	@Failure	400			{object}	Problem
//	@Failure	404			{object}	Problem
//	@Failure	503			{object}	Problem
//	@ID			getGroupOffsets
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/groups/{group}/offsets [get]
func (s *Server) handleGroupOffsets(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	consumer := r.URL.Query().Get("consumerId")
	if consumer != "" && !core.ValidName(consumer) {
		s.writeProblem(w, r, core.FieldError("consumerId", "must match "+NamePattern))
		return
	}
	offs, err := s.backend.Offsets(r.Context(), name, consumer)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newOffsetList(offs))
}

// handleGroupOffsetsReset moves a topic's offsets of the group.
//
//	@Summary		Reset a group's offsets on one topic
//	@Description	Sets every queue of the topic to the first or last offset, or to the first message stored at or after the timestamp. A running consumer restarts those queues from there.
//	@Tags			groups
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string				true	"Group name"
//	@Param			request	body		OffsetResetRequest	true	"Where to"
//	@Success		200		{object}	OffsetList			"The new offsets"
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				resetGroupOffsets
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/offsets/reset [post]
func (s *Server) handleGroupOffsetsReset(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req OffsetResetRequest
	if err := s.decodeValid(w, r, maxSmallJSON, &req, false); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var ts time.Time
	if req.Timestamp != nil {
		ts = *req.Timestamp
	}
	offs, err := s.backend.ResetOffsets(r.Context(), name, req.ConsumerID, req.Topic, core.ConsumeFromWhere(req.Position), ts)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newOffsetList(offs))
}
