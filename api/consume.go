package api

import (
	"net/http"
	"time"

	"github.com/mqgate/mqgate/core"
)

// ReceiveRequest is the body of POST /v1/groups/{group}/receive; every
// field is optional.
type ReceiveRequest struct {
	// MaxMessages is the most messages to return (default 1).
	MaxMessages *int `json:"maxMessages,omitempty" validate:"omitempty,min=1,max=32" minimum:"1" maximum:"32" example:"10"`
	// WaitSeconds is how long to wait for a message when none is ready
	// (default 0: answer at once).
	WaitSeconds *int `json:"waitSeconds,omitempty" validate:"omitempty,min=0,max=30" minimum:"0" maximum:"30" example:"20"`
	// InvisibleSeconds is the lease of each returned message (default: the group's).
	InvisibleSeconds *int `json:"invisibleSeconds,omitempty" validate:"omitempty,min=1,max=43200" minimum:"1" maximum:"43200" example:"60"`
	// ConsumerID names the consumer; required for BROADCASTING groups only.
	ConsumerID string `json:"consumerId,omitempty" validate:"omitempty,name" example:"c1"`
}

// ReceivedMessage is a leased message: Message plus its receipt handle.
type ReceivedMessage struct {
	Message
	// ReceiptHandle names this delivery in ack, nack and extend.
	ReceiptHandle string `json:"receiptHandle" example:"AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYg"`
	// InvisibleUntil is when the lease ends and the message is delivered again.
	InvisibleUntil string `json:"invisibleUntil" format:"date-time" example:"2026-01-02T15:05:05.000Z"`
}

// ReceiveResponse is the answer of receive (empty after the wait).
type ReceiveResponse struct {
	Messages []ReceivedMessage `json:"messages"`
	// Empty tells why no message came (present only when messages is
	// empty; diagnose.go).
	Empty *EmptyReceive `json:"empty,omitempty"`
}

// AckRequest is the body of POST /v1/groups/{group}/ack.
type AckRequest struct {
	// ReceiptHandles are the handles of received messages (1..100); an
	// empty or unknown one gets status invalid in the answer.
	ReceiptHandles []string `json:"receiptHandles" validate:"required,min=1,max=100,dive,max=1024"`
}

// NackRequest is the body of POST /v1/groups/{group}/nack.
type NackRequest struct {
	// ReceiptHandles are the handles of received messages (1..100); an
	// empty or unknown one gets status invalid in the answer.
	ReceiptHandles []string `json:"receiptHandles" validate:"required,min=1,max=100,dive,max=1024"`
	// DelayLevel: 0 lets the engine decide (3 + reconsumeTimes), -1 sends
	// to the dead-letter topic now, 1 or more picks that level of the
	// server's --delay-levels (1..18 by default); a level above the last
	// means the last, as in RocketMQ.
	DelayLevel int `json:"delayLevel" validate:"min=-1" minimum:"-1" example:"0"`
	// Reason says why the messages failed (at most 256 characters); it is
	// stored with the retry and dead-letter copies and shown as
	// lastReason in the DLQ listing.
	Reason string `json:"reason,omitempty" validate:"omitempty,max=256" maxLength:"256" example:"payment service answered 503"`
}

// ExtendRequest is the body of POST /v1/groups/{group}/extend.
type ExtendRequest struct {
	// ReceiptHandles are the handles of received messages (1..100); an
	// empty or unknown one gets status invalid in the answer.
	ReceiptHandles []string `json:"receiptHandles" validate:"required,min=1,max=100,dive,max=1024"`
	// InvisibleSeconds is the new lease, from now.
	InvisibleSeconds int `json:"invisibleSeconds" validate:"required,min=1,max=43200" minimum:"1" maximum:"43200" example:"120"`
}

// HandleResults answers ack, nack and extend, one result per handle in order.
type HandleResults struct {
	Results []HandleResult `json:"results"`
}

// HandleResult is the outcome for one handle.
type HandleResult struct {
	ReceiptHandle string `json:"receiptHandle"`
	// Status: ok, expired (the lease ended or the handle is from an
	// earlier delivery) or invalid (malformed or forged).
	Status string `json:"status" enums:"ok,expired,invalid" example:"ok"`
	// InvisibleUntil is the new lease end (extend).
	InvisibleUntil string `json:"invisibleUntil,omitempty" format:"date-time"`
}

func newHandleResults(rs []core.HandleResult) HandleResults {
	out := HandleResults{Results: make([]HandleResult, 0, len(rs))}
	for _, r := range rs {
		out.Results = append(out.Results, HandleResult{ReceiptHandle: r.ReceiptHandle, Status: string(r.Status), InvisibleUntil: formatTime(r.InvisibleUntil)})
	}
	return out
}

// handleReceive long-polls a group.
//
//	@Summary		Receive messages (long poll)
//	@Description	Returns up to maxMessages messages, fairly across queues, each leased for invisibleSeconds; waits up to waitSeconds when none is ready and answers as soon as one is. ORDERLY groups hand out a queue's messages in order and none while an earlier one of it is in flight. Push groups answer 409.
//	@Tags			consuming
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string			true	"Group name"
//	@Param			request	body		ReceiveRequest	false	"Receive options"
//	@Success		200		{object}	ReceiveResponse
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem	"Push group"
//	@Failure		415		{object}	Problem
//	@Failure		429		{object}	Problem	"Too many waiting receives, or over the API key's receive limits (docs/quotas.md)"
//	@Header			429		{string}	Retry-After	"Seconds until the request would pass"
//	@Header			429		{string}	RateLimit-Policy	"The key's limits that apply (draft-ietf-httpapi-ratelimit-headers)"
//	@Header			429		{string}	RateLimit	"What each limit has left"
//	@Failure		503		{object}	Problem
//	@ID				receiveMessages
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/receive [post]
func (s *Server) handleReceive(w http.ResponseWriter, r *http.Request) {
	var start time.Time
	if s.tracer != nil {
		start = time.Now()
	}
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req ReceiveRequest
	if err := s.decodeValid(w, r, maxSmallJSON, &req, true); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	greq := core.ReceiveRequest{MaxMessages: 1, ConsumerID: req.ConsumerID}
	if req.MaxMessages != nil {
		greq.MaxMessages = *req.MaxMessages
	}
	if req.WaitSeconds != nil {
		greq.Wait = time.Duration(*req.WaitSeconds) * time.Second
	}
	if req.InvisibleSeconds != nil {
		greq.Invisible = time.Duration(*req.InvisibleSeconds) * time.Second
	}
	// The key's limits (quota.go): receives in flight and deliveries.
	rc := s.quotas.Receive(keyFrom(r.Context()), name, greq.MaxMessages)
	if rc != nil {
		if !s.admit(w, r, &rc.Verdict) {
			rc.Cancel()
			return
		}
		greq.MaxMessages = rc.Max
	}
	// The server's WriteTimeout must not cut a long poll short: the
	// deadline covers the wait, then the usual time to write the answer.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(greq.Wait + s.writeTTL))
	got, err := s.backend.Receive(r.Context(), name, greq)
	rc.Delivered(len(got))
	if err != nil {
		if r.Context().Err() != nil {
			return // the client has gone; nothing was leased to it
		}
		s.writeProblem(w, r, err)
		return
	}
	if len(got) > 0 {
		if s.tracer != nil {
			s.traceReceive(requestContext(r), start, name, got)
		}
		writeAppended(w, http.StatusOK, appendReceived, got) // newReceiveResponse's JSON
		return
	}
	writeJSON(w, http.StatusOK, ReceiveResponse{Messages: []ReceivedMessage{}, Empty: s.emptyReceive(r.Context(), name, req.ConsumerID)})
}

// newReceiveResponse is the answer of a receive that got messages, as
// appendReceived encodes it.
func newReceiveResponse(got []core.Received) ReceiveResponse {
	out := ReceiveResponse{Messages: make([]ReceivedMessage, 0, len(got))}
	for _, m := range got {
		out.Messages = append(out.Messages, ReceivedMessage{
			Message: newMessage(m.Message), ReceiptHandle: m.ReceiptHandle, InvisibleUntil: formatTime(m.InvisibleUntil),
		})
	}
	return out
}

// handleAck acknowledges received messages.
//
//	@Summary		Acknowledge messages
//	@Description	CONSUME_SUCCESS for each handle. Acking a handle twice answers ok twice and changes nothing the second time.
//	@Tags			consuming
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string		true	"Group name"
//	@Param			request	body		AckRequest	true	"Handles"
//	@Success		200		{object}	HandleResults
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				ackMessages
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/ack [post]
func (s *Server) handleAck(w http.ResponseWriter, r *http.Request) {
	var start time.Time
	if s.tracer != nil {
		start = time.Now()
	}
	name, req, ok := decodeHandles[AckRequest](s, w, r)
	if !ok {
		return
	}
	res, err := s.backend.Ack(r.Context(), name, req.ReceiptHandles)
	if s.tracer != nil {
		s.traceSettle(requestContext(r), start, name, "ack", "ack", res, err)
	}
	s.answerHandles(w, r, res, err)
}

// handleNack gives messages back for a later retry.
//
//	@Summary		Negatively acknowledge messages
//	@Description	RECONSUME_LATER for each handle: the message comes back after the delay level (0: the engine decides; -1: dead-letter now). ORDERLY: the message and every later one of its batch come back, in order, after the suspend time.
//	@Tags			consuming
//	@Accept			json
//	@Produce		json
//	@Param			group	path		string		true	"Group name"
//	@Param			request	body		NackRequest	true	"Handles and delay level"
//	@Success		200		{object}	HandleResults
//	@Failure		400		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		415		{object}	Problem
//	@Failure		503		{object}	Problem
//	@ID				nackMessages
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/nack [post]
func (s *Server) handleNack(w http.ResponseWriter, r *http.Request) {
	var start time.Time
	if s.tracer != nil {
		start = time.Now()
	}
	name, req, ok := decodeHandles[NackRequest](s, w, r)
	if !ok {
		return
	}
	res, err := s.nack(r, name, req)
	if s.tracer != nil {
		s.traceSettle(requestContext(r), start, name, "nack", nackOutcome(req.DelayLevel), res, err)
	}
	s.answerHandles(w, r, res, err)
}

// handleExtend lengthens leases.
//
//	@Summary	Extend leases
//	@Tags		consuming
//	@Accept		json
//	@Produce	json
//	@Param		group	path		string			true	"Group name"
//	@Param		request	body		ExtendRequest	true	"Handles and new lease"
//	@Success	200		{object}	HandleResults
//	@Failure	400		{object}	Problem
//	@Failure	404		{object}	Problem
//	@Failure	415		{object}	Problem
//	@Failure	503		{object}	Problem
//	@ID			extendLeases
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Failure		403	{object}	Problem	"The API key lacks the grant"
//	@Security		BearerAuth
//	@Router		/v1/groups/{group}/extend [post]
func (s *Server) handleExtend(w http.ResponseWriter, r *http.Request) {
	name, req, ok := decodeHandles[ExtendRequest](s, w, r)
	if !ok {
		return
	}
	res, err := s.backend.Extend(r.Context(), name, req.ReceiptHandles, time.Duration(req.InvisibleSeconds)*time.Second)
	s.answerHandles(w, r, res, err)
}

// maxHandlesJSON fits the largest handle body the limits allow (100
// handles of 1,024 characters, quoted, plus the other fields) with room to
// spare; maxSmallJSON (64 KiB) answered such a valid request 413.
const maxHandlesJSON = 256 << 10

func decodeHandles[T any](s *Server, w http.ResponseWriter, r *http.Request) (string, *T, bool) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return "", nil, false
	}
	req := new(T)
	if err := s.decodeValid(w, r, maxHandlesJSON, req, false); err != nil {
		s.writeProblem(w, r, err)
		return "", nil, false
	}
	return name, req, true
}

func (s *Server) answerHandles(w http.ResponseWriter, r *http.Request, res []core.HandleResult, err error) {
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeAppended(w, http.StatusOK, appendHandleResults, res) // newHandleResults' JSON
}

// needConsumption answers 503 on consumption routes when the server was
// built without a backend (Options.Backend).
func (s *Server) needConsumption(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.backend == nil {
			sendProblem(w, r, newProblem(core.EUnavailable, "consumption is not configured on this server"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
