package api

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"time"
	"unsafe"

	"github.com/mqgate/mqgate/core"
)

// PublishRequest is one message to publish. Exactly one of body and
// bodyBase64; at most one of delayLevel, delaySeconds and deliverAt
// (FieldGroups). binding:"optional" on keys and properties tells swag they
// are optional: the "required" in their validate tags is about each
// element, after dive. body's minLength is checked by toPutMessage, not a
// validate tag (which would cost every publish an allocation);
// openapi_rules_test.go checks the document says it.
type PublishRequest struct {
	// Body is a UTF-8 text body, not empty; it is returned as `body`.
	Body *string `json:"body,omitempty" minLength:"1" example:"order 17 created"`
	// BodyBase64 is a binary body in standard base64; it is returned as
	// `bodyBase64`. At most 4 MiB once decoded.
	BodyBase64 *string `json:"bodyBase64,omitempty" validate:"omitempty,min=4,base64" format:"byte"`
	// Tags is one tag that subscription filters match (`TagA || TagB`).
	Tags string `json:"tags,omitempty" validate:"max=128,excludes=0x7C0x7C" maxLength:"128" example:"created"`
	// Keys are indexed for GET /v1/topics/{topic}/messages?key=K.
	Keys []string `json:"keys,omitempty" validate:"max=32,dive,required,max=128" binding:"optional" example:"order-17"`
	// Properties are user properties, returned as given.
	Properties map[string]string `json:"properties,omitempty" validate:"max=64,dive,keys,required,max=128,endkeys,max=4096" binding:"optional"`
	// ShardingKey picks the queue by hash: messages with the same key go
	// to the same queue, in order.
	ShardingKey string `json:"shardingKey,omitempty" validate:"max=128" maxLength:"128" example:"customer-9"`
	// DelayLevel delays delivery by a RocketMQ delay level of the
	// server's --delay-levels, by default 1..18 = 1s 5s 10s 30s 1m 2m 3m
	// 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h; a level above the last means
	// the last.
	DelayLevel *int `json:"delayLevel,omitempty" validate:"omitempty,min=1" minimum:"1" example:"3"`
	// DelaySeconds delays delivery by this many seconds (at most 40 days).
	DelaySeconds *int64 `json:"delaySeconds,omitempty" validate:"omitempty,min=0,max=3456000" minimum:"0" maximum:"3456000"`
	// DeliverAt delivers the message at this time (RFC 3339), at most 40
	// days ahead.
	DeliverAt *time.Time `json:"deliverAt,omitempty" format:"date-time"`
	// DeduplicationID makes a batch entry idempotent (1..128 printable
	// ASCII characters): within the server's dedup window a repeat on the
	// same topic with the same id stores nothing and answers the original
	// result; with a different message it answers 422. Batch entries only:
	// a single publish takes the Idempotency-Key header instead.
	DeduplicationID string `json:"deduplicationId,omitempty" maxLength:"128" example:"order-17-created"`
	// TraceParent is the message's W3C traceparent (Trace Context level
	// 1, version 00): stored with the message, returned on receive and
	// sent as the traceparent header of a webhook push. A single publish
	// may send the traceparent header instead (not both); a malformed
	// value here answers 400 (a malformed header is ignored, as W3C says).
	TraceParent string `json:"traceparent,omitempty" maxLength:"55" example:"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
	// TraceState is the W3C tracestate that goes with traceparent (at
	// most 512 characters; only with traceparent).
	TraceState string `json:"tracestate,omitempty" maxLength:"512" example:"vendor=value"`
}

// PublishBatchRequest is the body of a batch publish: 1..1000 messages,
// at most 4 MiB of bodies in all, stored all or nothing.
type PublishBatchRequest struct {
	// Messages to publish, in order.
	Messages []PublishRequest `json:"messages" validate:"required,min=1,max=1000,dive" minItems:"1" maxItems:"1000"`
}

// PublishResult says where a published message went.
type PublishResult struct {
	// MessageID is the new message's id.
	MessageID string `json:"messageId" example:"0A1B2C3D4E5F60718293A4B5"`
	// Topic the message was published to.
	Topic string `json:"topic" example:"orders"`
	// QueueID is the queue it went to; absent for a delayed message.
	QueueID *int `json:"queueId,omitempty" example:"3"`
	// QueueOffset is its position in the queue; absent for a delayed message.
	QueueOffset *int64 `json:"queueOffset,omitempty" example:"42"`
	// DeliverAt is when a delayed message becomes deliverable; absent
	// otherwise.
	DeliverAt string `json:"deliverAt,omitempty" format:"date-time"`
	// Replayed is true when this is the original result of an earlier
	// publish with the same Idempotency-Key (or deduplicationId): nothing
	// new was stored.
	Replayed bool `json:"replayed,omitempty"`
}

// PublishBatchResult is the answer of a batch publish.
type PublishBatchResult struct {
	// Results are in the order of the request's messages.
	Results []PublishResult `json:"results"`
}

func newPublishResult(r core.PutResult) PublishResult {
	out := PublishResult{MessageID: r.MessageID, Topic: r.Topic, Replayed: r.Replayed}
	if !r.DeliverAt.IsZero() {
		out.DeliverAt = formatTime(r.DeliverAt)
		return out
	}
	qid, off := r.QueueID, r.QueueOffset
	out.QueueID, out.QueueOffset = &qid, &off
	return out
}

// toPutMessage checks what tags cannot (exactly one body field, at most
// one delay field, base64) and converts the request. Field errors go to
// fe, named as fields of batch entry i (entryField; -1 for a single
// publish); the decoded body size is returned for the 413 checks.
// badBase64 is the problem of a bodyBase64 that does not decode.
const badBase64 = "is not valid base64 (the standard alphabet with = padding, RFC 4648 §4)"

func toPutMessage(req *PublishRequest, i int, now time.Time, fe *fieldErrors) core.PutMessage {
	pm := core.PutMessage{
		Tags:        req.Tags,
		Keys:        req.Keys,
		Properties:  req.Properties,
		ShardingKey: req.ShardingKey,
	}
	before := len(*fe)
	switch {
	case req.Body != nil && req.BodyBase64 != nil, req.Body == nil && req.BodyBase64 == nil:
		fe.add(entryField(i, "body"), "give exactly one of body and bodyBase64")
	case req.Body != nil:
		// The decoded string is the body's only copy and nothing writes
		// to a message body (the store encodes it into a record of its
		// own), so it is viewed as bytes instead of copied once more.
		pm.Body, pm.BodyIsText = unsafe.Slice(unsafe.StringData(*req.Body), len(*req.Body)), true
	default:
		b, err := base64.StdEncoding.DecodeString(*req.BodyBase64)
		if err != nil {
			// One sentence for every way it fails (too short, a bad
			// character, bad padding), never the pattern.
			fe.set(entryField(i, "bodyBase64"), badBase64)
		}
		pm.Body = b
	}
	if (req.Body != nil || req.BodyBase64 != nil) && len(pm.Body) == 0 && len(*fe) == before {
		// RocketMQ refuses empty bodies too (Validators.checkMessage).
		// The member named is the one the client sent.
		field := "body"
		if req.BodyBase64 != nil {
			field = "bodyBase64"
		}
		fe.add(entryField(i, field), "must not be empty")
	}
	delays := 0
	if req.DelayLevel != nil {
		delays++
		pm.DelayLevel = *req.DelayLevel
	}
	if req.DelaySeconds != nil {
		delays++
		if *req.DelaySeconds > 0 {
			pm.DeliverAt = now.Add(time.Duration(*req.DelaySeconds) * time.Second)
		}
	}
	if req.DeliverAt != nil {
		delays++
		pm.DeliverAt = *req.DeliverAt
	}
	if delays > 1 {
		fe.add(entryField(i, "delayLevel"), "give at most one of delayLevel, delaySeconds and deliverAt")
	}
	if req.TraceParent != "" || req.TraceState != "" {
		checkTraceContext(req.TraceParent, req.TraceState, i, fe)
		pm.TraceParent, pm.TraceState = req.TraceParent, req.TraceState
	}
	return pm
}

// handleMessagePublish publishes one message.
//
//	@Summary		Publish a message
//	@Description	Stores one message durably (synced) before answering. Exactly one of body and bodyBase64; at most one of delayLevel, delaySeconds and deliverAt. With shardingKey the queue is chosen by hash, else round-robin. A deliverAt in the past stores the message in its queue at once.
//	@Tags			messages
//	@Accept			json
//	@Produce		json
//	@Param			topic	path		string			true	"Topic name"
//	@Param			request	body		PublishRequest	true	"The message"
//	@Param			Idempotency-Key	header	string	false	"1..128 printable ASCII characters: within the dedup window a repeat with the same key on this topic stores nothing and answers the original result (Idempotent-Replayed: true); the same key with another message answers 422"
//	@Param			traceparent	header	string	false	"W3C traceparent: the message's trace context (stored, returned on receive, sent on webhook pushes); the parent of the publish span when the server traces. A malformed one is ignored. Not together with the traceparent field"
//	@Param			tracestate	header	string	false	"W3C tracestate that goes with traceparent"
//	@Success		201		{object}	PublishResult
//	@Header			201		{string}	Idempotent-Replayed	"true when the answer is the original result of an earlier publish with the same Idempotency-Key"
//	@Failure		400		{object}	Problem
//	@Failure		403		{object}	Problem	"System topic"
//	@Failure		404		{object}	Problem	"Unknown topic"
//	@Failure		413		{object}	Problem	"Body over 4 MiB"
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"Idempotency-Key reused with a different message"
//	@Failure		429		{object}	Problem	"Over the API key's publish limit (docs/quotas.md)"
//	@Header			429		{string}	Retry-After	"Seconds until the request would pass"
//	@Header			429		{string}	RateLimit-Policy	"The key's limits that apply (draft-ietf-httpapi-ratelimit-headers), e.g. \"pub\";q=100;w=1"
//	@Header			429		{string}	RateLimit	"What each limit has left, e.g. \"pub\";r=0;t=1"
//	@Failure		503		{object}	Problem
//	@ID				publishMessage
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Security		BearerAuth
//	@Router			/v1/topics/{topic}/messages [post]
func (s *Server) handleMessagePublish(w http.ResponseWriter, r *http.Request) {
	var start time.Time
	if s.tracer != nil {
		start = time.Now()
	}
	topic, err := userTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req PublishRequest
	if err := decodePublish(w, r, maxPublishJSON, &req); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var fe fieldErrors
	s.checkStruct(&req, &fe)
	pm := toPutMessage(&req, -1, time.Now(), &fe)
	if req.DeduplicationID != "" {
		fe.add("deduplicationId", "only batch entries take deduplicationId; a single publish sends the Idempotency-Key header")
	}
	if key, ok := r.Header[headerIdempotencyKey]; ok {
		if len(key) != 1 || !validDedupID(key[0]) {
			fe.add(headerIdempotencyKey, dedupIDRule)
		} else {
			pm.DedupID, pm.DedupHash = key[0], requestHash(&req)
		}
	}
	if tp, ts, ok := traceHeaders(r); ok {
		if req.TraceParent != "" {
			fe.add("traceparent", "give the traceparent header or the traceparent field, not both")
		}
		pm.TraceParent, pm.TraceState = tp, ts
	}
	if err := fe.err(); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if len(pm.Body) > core.MaxMessageSize {
		s.writeProblem(w, r, core.Errorf(core.ETooLarge, "the message body is %d bytes; the limit is %d", len(pm.Body), core.MaxMessageSize))
		return
	}
	if !s.admitPublish(w, r, topic, 1, len(pm.Body)) {
		return
	}
	pms := []core.PutMessage{pm}
	var res []core.PutResult
	if s.tracer == nil {
		res, err = s.backend.Put(r.Context(), topic, pms)
	} else {
		ctx, span := s.startPublish(r.Context(), start, topic, pms, false)
		res, err = s.put(ctx, topic, pms)
		endPublish(span, err)
	}
	s.metrics.observePublish("single", 1, len(pm.Body), err)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if len(res) != 1 {
		s.writeProblem(w, r, fmt.Errorf("engine returned %d results for 1 message", len(res)))
		return
	}
	if res[0].Replayed {
		w.Header().Set(headerReplayed, "true")
	}
	writeAppended(w, http.StatusCreated, appendPublishResult, &res[0]) // newPublishResult's JSON
}

// handleMessagePublishBatch publishes up to 1000 messages atomically.
//
//	@Summary		Publish a batch of messages
//	@Description	Stores 1..1000 messages (at most 4 MiB of bodies in all) in one durable transaction: all or nothing. Results are in request order. Messages with a shardingKey go to its queue by hash; all the others of one batch go together to the next round-robin queue (as a RocketMQ batch goes to one queue), so give sharding keys to spread a batch.
//	@Tags			messages
//	@Accept			json
//	@Produce		json
//	@Param			topic	path		string				true	"Topic name"
//	@Param			request	body		PublishBatchRequest	true	"The messages"
//	@Success		201		{object}	PublishBatchResult
//	@Header			201		{string}	Idempotent-Replayed	"true when every entry is the original result of an earlier publish with its deduplicationId (each such entry also has replayed: true)"
//	@Failure		400		{object}	Problem
//	@Failure		403		{object}	Problem	"System topic"
//	@Failure		404		{object}	Problem	"Unknown topic"
//	@Failure		413		{object}	Problem	"Bodies over 4 MiB in all"
//	@Failure		415		{object}	Problem
//	@Failure		422		{object}	Problem	"A deduplicationId reused with a different message"
//	@Failure		429		{object}	Problem	"Over the API key's publish limit (docs/quotas.md)"
//	@Header			429		{string}	Retry-After	"Seconds until the request would pass"
//	@Header			429		{string}	RateLimit-Policy	"The key's limits that apply (draft-ietf-httpapi-ratelimit-headers), e.g. \"pub\";q=100;w=1"
//	@Header			429		{string}	RateLimit	"What each limit has left, e.g. \"pub\";r=0;t=1"
//	@Failure		503		{object}	Problem
//	@ID				publishBatch
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Security		BearerAuth
//	@Router			/v1/topics/{topic}/messages/batch [post]
func (s *Server) handleMessagePublishBatch(w http.ResponseWriter, r *http.Request) {
	var start time.Time
	if s.tracer != nil {
		start = time.Now()
	}
	topic, err := userTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var req PublishBatchRequest
	if err := decodeJSON(w, r, maxPublishJSON, &req, false); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var fe fieldErrors
	s.checkStruct(&req, &fe)
	now := time.Now()
	pms := make([]core.PutMessage, len(req.Messages))
	total := 0
	if _, ok := r.Header[headerIdempotencyKey]; ok {
		fe.add(headerIdempotencyKey, "a batch takes a deduplicationId per message, not the Idempotency-Key header")
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		pms[i] = toPutMessage(m, i, now, &fe)
		total += len(pms[i].Body)
		if m.DeduplicationID != "" {
			if !validDedupID(m.DeduplicationID) {
				fe.add(entryField(i, "deduplicationId"), dedupIDRule)
				continue
			}
			pms[i].DedupID, pms[i].DedupHash = m.DeduplicationID, requestHash(m)
		}
	}
	if err := fe.err(); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if total > core.MaxMessageSize {
		s.writeProblem(w, r, core.Errorf(core.ETooLarge, "the batch bodies total %d bytes; the limit is %d", total, core.MaxMessageSize))
		return
	}
	if !s.admitPublish(w, r, topic, len(pms), total) {
		return
	}
	if tp, ts, ok := traceHeaders(r); ok {
		// The request's context is the parent of the publish span; with
		// tracing off it is the creation context of the entries that have
		// none of their own.
		if s.tracer == nil {
			for i := range pms {
				if pms[i].TraceParent == "" {
					pms[i].TraceParent, pms[i].TraceState = tp, ts
				}
			}
		}
	}
	var res []core.PutResult
	if s.tracer == nil {
		res, err = s.backend.Put(r.Context(), topic, pms)
	} else {
		ctx, span := s.startPublish(requestContext(r), start, topic, pms, true)
		res, err = s.put(ctx, topic, pms)
		endPublish(span, err)
	}
	s.metrics.observePublish("batch", len(pms), total, err)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if len(res) != len(pms) {
		s.writeProblem(w, r, fmt.Errorf("engine returned %d results for %d messages", len(res), len(pms)))
		return
	}
	replayed := 0
	for _, pr := range res {
		if pr.Replayed {
			replayed++
		}
	}
	if replayed == len(res) {
		w.Header().Set(headerReplayed, "true")
	}
	writeAppended(w, http.StatusCreated, appendPublishBatchResult, res) // PublishBatchResult's JSON
}
