package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/auth"
	"github.com/mqgate/mqgate/internal/jsonscan"
)

// The publish stream, GET /v1/topics/{topic}/stream. Each publish frame
// is checked as the REST publish checks its body and handed to the same
// Engine.Put, on one of the stream's publish workers: the stream keeps
// many publishes in flight, and the engine's group commit makes one disk
// sync for the publishes of every stream and request that arrive
// together. A confirm goes out only once Put has answered, that is once
// the messages are durable.

// Publish stream limits (docs/streaming.md).
const (
	defaultUnconfirmedMessages = 1000
	maxUnconfirmedMessages     = 10000
	defaultUnconfirmedBytes    = 16 << 20
	minUnconfirmedBytes        = 64 << 10
	maxUnconfirmedBytes        = 256 << 20
)

// handleTopicStream opens a publish stream.
//
//	@Summary		Publish over a WebSocket stream
//	@Description	Upgrades to a WebSocket (RFC 6455) with subprotocol mqgate.v1 (Sec-WebSocket-Protocol; browsers may add mqgate.key.<base64url key>). The client sends publish frames (one message or an atomic batch, the REST fields and limits, deduplicationId included); the server answers each with a confirm once its messages are durable, or an error frame, and reads no further frame while maxUnconfirmedMessages or maxUnconfirmedBytes are unconfirmed. The frames are described in docs/streaming.md and the AsyncAPI document openapi/asyncapi.json. A refused upgrade answers problem+json.
//	@Tags			messages
//	@Produce		json
//	@Param			topic					path		string	true	"Topic name"
//	@Param			Sec-WebSocket-Protocol	header		string	true	"mqgate.v1 (and, for browsers, mqgate.key.<base64url of the API key>)"
//	@Param			maxUnconfirmedMessages	query		int		false	"Most messages read and not yet confirmed (default 1000)"	minimum(1)	maximum(10000)
//	@Param			maxUnconfirmedBytes		query		int		false	"Most frame bytes read and not yet confirmed (default 16 MiB)"	minimum(65536)	maximum(268435456)
//	@Success		101						"Switching Protocols: the stream is open"
//	@Failure		400						{object}	Problem	"Not a WebSocket upgrade, no mqgate.v1, or a bad parameter"
//	@Failure		403						{object}	Problem	"System topic, an Origin not allowed, or the API key lacks the grant"
//	@Failure		404						{object}	Problem	"Unknown topic"
//	@Failure		429						{object}	Problem	"Too many streams for this API key or server"
//	@Failure		503						{object}	Problem
//	@ID				publishStream
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Security		BearerAuth
//	@Router			/v1/topics/{topic}/stream [get]
func (s *Server) handleTopicStream(w http.ResponseWriter, r *http.Request) {
	topic, err := userTopicParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	maxMsgs, maxBytes := defaultUnconfirmedMessages, int64(defaultUnconfirmedBytes)
	var fe fieldErrors
	for k, vs := range r.URL.Query() {
		switch {
		case len(vs) != 1:
			fe.add(k, "give it once")
		case k == "maxUnconfirmedMessages":
			maxMsgs = int(queryInt(&fe, k, vs[0], 1, maxUnconfirmedMessages))
		case k == "maxUnconfirmedBytes":
			maxBytes = queryInt(&fe, k, vs[0], minUnconfirmedBytes, maxUnconfirmedBytes)
		default:
			fe.add(k, "unknown query parameter")
		}
	}
	if err := fe.err(); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if _, err := s.backend.Topic(topic); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	up, ok := s.checkUpgrade(w, r, kindPublish)
	if !ok {
		return
	}
	defer s.releaseStream(up)
	st, err := s.accept(w, r, kindPublish, maxPublishFrame)
	if err != nil {
		return // Accept has answered
	}
	p := &publishStream{stream: st, topic: topic, maxMsgs: maxMsgs, maxBytes: maxBytes, jobs: make(chan publishJob),
		putCtx: context.WithoutCancel(st.ctx)}
	st.sent = p.sentLocked
	st.allowed = s.keyCheck(st, up, auth.Pub, topic)
	b := getFrameBuf()
	*b = appendJSONValue(*b, PublishOpenFrame{Type: FrameOpen, Protocol: StreamProtocol, Stream: st.id, Topic: topic,
		MaxUnconfirmedMessages: maxMsgs, MaxUnconfirmedBytes: maxBytes, PingSeconds: int(s.streamOpts.Ping / time.Second)})
	st.send(outFrame{buf: b})
	st.run(p.reader, p.finish)
}

// publishStream is one publish stream's state; the unconfirmed counts
// are under stream.mu, where the writer's sent callback lowers them.
type publishStream struct {
	*stream
	topic    string
	maxMsgs  int
	maxBytes int64

	unconfMsgs  int
	unconfBytes int64
	// jobs hands a publish to an idle worker (unbuffered: a send succeeds
	// only when one is waiting); finish closes it. workers counts them,
	// under mu while the stream is open, so finish can wait for them.
	jobs    chan publishJob
	workers sync.WaitGroup
	// putCtx is the publishes' context: not the stream's, so a publish
	// handed to the engine is carried out and answered even while the
	// stream closes (made once: it was an allocation per publish).
	putCtx context.Context
	// plain holds the plain publishes (gatherable) not yet handed to the
	// engine, and gatherers counts the workers taking them; both under mu.
	plain     []publishJob
	gatherers int
}

// publishJob is one checked publish frame on its way to the engine, or
// (gather) a worker's order to store the stream's plain publishes.
type publishJob struct {
	id     string
	pms    []core.PutMessage
	batch  bool
	size   int64
	start  time.Time // when the frame was read, with tracing on
	ahead  int64     // its share of the server's publishAhead, given back when the store answers
	gather bool
}

// Reading ahead. A stream's window is what its client may send
// unconfirmed (1,000 messages by default), but what the server holds read
// and not yet answered by the store is bounded across all streams, by
// StreamOptions.PublishAhead: a frame read past it waits, and its stream's
// further frames wait in TCP. With 32 streams each at a window of 1,000,
// every message of the benchmark was in the server at once: the same
// copies of the same bytes (into records, strings, bbolt's pages) then
// cost 2-3x, the cache being too small for them (docs/performance.md,
// "What moves the publish stream"). A frame takes its size, at most the
// whole bound, so any frame can pass once the others are answered.
func (p *publishStream) readAhead(size int64) (int64, bool) {
	n := min(size, p.s.streamOpts.PublishAhead)
	if p.s.publishAhead.TryAcquire(n) {
		return n, true
	}
	release := p.hold() // not reading pongs while it waits: not idle
	err := p.s.publishAhead.Acquire(p.ctx, n)
	release()
	return n, err == nil
}

// Plain publishes are gathered. A single message without a
// deduplicationId, on a stream without tracing, needs nothing of its own
// from the engine, so the ones a stream has in flight are stored
// together, up to a batch's limits, by at most maxGatherers workers: a
// stream with a thousand unconfirmed publishes then holds a few Puts, not
// a thousand goroutines each waiting for its group commit (which cost
// the 32-producer benchmark a third of its rate at the default window).
// Each still gets its own confirm. As in a batch, the unkeyed ones of one
// Put go to one queue together. A deduplicated, batch or traced publish
// keeps its own Put, as on REST.
const maxGatherers = 4

// gatherable reports whether a checked frame is a plain publish.
func (p *publishStream) gatherable(f *clientFrame, pms []core.PutMessage) bool {
	return p.s.tracer == nil && f.Message != nil && len(pms) == 1 && pms[0].DedupID == ""
}

// workerIdle is how long a publish worker waits for another publish
// before it ends, so a stream's workers follow its load and an idle
// stream holds none.
const workerIdle = time.Second

// sentLocked: a confirm or error went out; what it answered is confirmed.
func (p *publishStream) sentLocked(f *outFrame) {
	p.unconfMsgs -= f.msgs
	p.unconfBytes -= f.bytes
}

// reader reads publish frames while the stream is under its limits.
func (p *publishStream) reader() {
	buf := make([]byte, 0, streamReadBuf)
	bad := 0
	for {
		p.mu.Lock()
		if (p.unconfMsgs >= p.maxMsgs || p.unconfBytes >= p.maxBytes || p.queued > maxQueuedOutput) && p.ctx.Err() == nil {
			release := p.hold()
			for (p.unconfMsgs >= p.maxMsgs || p.unconfBytes >= p.maxBytes || p.queued > maxQueuedOutput) && p.ctx.Err() == nil {
				p.drained.Wait()
			}
			release()
		}
		p.mu.Unlock()
		if p.ctx.Err() != nil {
			return
		}
		ok, binary := p.readFrame(&buf)
		if !ok {
			return
		}
		if binary {
			p.answerError("", 1, int64(len(buf)), core.Errorf(core.EInvalid, "binary frames are not part of %s: send each frame as one text frame of JSON", StreamProtocol))
			bad++
		} else if p.handle(buf) {
			bad = 0
		} else {
			bad++
		}
		if bad >= maxBadInARow {
			p.closeWith(closePolicy, "too many malformed frames in a row")
			return
		}
	}
}

// answerError counts a refused frame as unconfirmed until its error
// frame is sent, as a publish is until its confirm.
func (p *publishStream) answerError(id string, msgs int, bytes int64, err error) {
	p.mu.Lock()
	p.unconfMsgs += msgs
	p.unconfBytes += bytes
	p.mu.Unlock()
	pr := problemFor(err)
	b := getFrameBuf()
	*b = appendErrorFrame(*b, id, &pr)
	p.send(outFrame{buf: b, msgs: msgs, bytes: bytes})
}

// handle checks one frame and hands it to the engine; false when it
// was refused.
func (p *publishStream) handle(b []byte) bool {
	var start time.Time
	if p.s.tracer != nil {
		start = time.Now()
	}
	size := int64(len(b))
	var f clientFrame
	if !fastPublishFrame(b, &f) {
		if err := decodeFrame(b, &f); err != nil {
			p.answerError(f.ID, 1, size, err)
			return false
		}
	}
	if f.Type != FramePublish {
		why := "must be publish on a publish stream"
		if f.Type == FrameAck || f.Type == FrameNack || f.Type == FrameExtend || f.Type == FrameFlow {
			why = f.Type + " frames go on a consume stream (GET /v1/groups/{group}/stream), not a publish stream"
		}
		p.answerError(f.ID, 1, size, core.FieldError("type", "%s", why))
		return false
	}
	pms, err := p.check(&f)
	if err != nil {
		p.answerError(f.ID, max(len(pms), 1), size, err)
		return false
	}
	n := len(pms)
	if err := p.admit(n, pms); err != nil {
		p.answerError(f.ID, n, size, err)
		return false
	}
	ahead, ok := p.readAhead(size)
	if !ok {
		return true // closing while it waited: not confirmed, not stored; the client resends it
	}
	p.mu.Lock()
	if p.ctx.Err() != nil {
		// Closing: finish may be waiting already. Not confirmed, not
		// stored; the client resends it.
		p.mu.Unlock()
		p.s.publishAhead.Release(ahead)
		return true
	}
	p.unconfMsgs += n
	p.unconfBytes += size
	job := publishJob{id: f.ID, pms: pms, batch: f.Message == nil, size: size, start: start, ahead: ahead}
	if p.gatherable(&f, pms) {
		p.plain = append(p.plain, job)
		if p.gatherers < maxGatherers {
			p.gatherers++
			p.dispatchLocked(publishJob{gather: true})
		}
	} else {
		p.dispatchLocked(job)
	}
	p.mu.Unlock()
	return true
}

// dispatchLocked hands job to an idle worker, or to a new one when all
// are busy. A publish waits in Put for its group commit, so the stream
// needs a goroutine per publish in flight; reusing them, rather than a
// new goroutine per publish, keeps the stacks Put's call chain has grown
// (a new goroutine outgrew its first stack on the way into the group
// commit, and copying it was 15% of the server's CPU on the 32-producer
// publish stream).
// Under mu with the stream open, so finish's Wait follows every Add.
func (p *publishStream) dispatchLocked(job publishJob) {
	select {
	case p.jobs <- job:
	default:
		p.workers.Go(func() { p.work(job) })
	}
}

// work publishes job, then the jobs handed to it, until it has been idle
// for workerIdle or the stream has ended (a job it was handed first is
// still carried out and answered).
func (p *publishStream) work(job publishJob) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for ok := true; ok; {
		if job.gather {
			p.gather()
		} else {
			p.publish(job)
		}
		idle.Reset(workerIdle)
		select {
		case job, ok = <-p.jobs:
		case <-idle.C:
			return
		}
	}
}

// admit charges a publish to the key's publish limits (docs/quotas.md).
// Over a rate, the stream is paced: the reader waits until the tokens are
// there (the client is slowed by TCP, as at the unconfirmed limits); a
// publish no bucket can ever hold is refused (413).
func (p *publishStream) admit(msgs int, pms []core.PutMessage) error {
	bytes := 0
	for i := range pms {
		bytes += len(pms[i].Body)
	}
	for {
		v := p.s.quotas.Publish(p.key.Load(), p.topic, msgs, bytes)
		switch {
		case v == nil:
			return nil
		case v.TooLarge != "":
			return core.Errorf(core.ETooLarge, "%s", v.TooLarge)
		}
		wait := v.Wait
		if v.RetryAfter > 0 {
			wait = v.RetryAfter // nothing was taken: ask again then
		}
		if wait > 0 {
			release := p.hold()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.ctx.Done():
				t.Stop()
				release()
				v.Cancel()
				return core.Errorf(core.EUnavailable, "the stream closed while the publish waited for its key's limit")
			}
			release()
		}
		if v.RetryAfter == 0 {
			return nil
		}
	}
}

// check turns a publish frame into the engine's messages under the REST
// publish rules: fields, bodies, delays, deduplicationId, 4 MiB of bodies.
func (p *publishStream) check(f *clientFrame) ([]core.PutMessage, error) {
	var fe fieldErrors
	now := time.Now()
	var pms []core.PutMessage
	switch {
	case (f.Message == nil) == (f.Messages == nil):
		return nil, core.FieldError("message", "give exactly one of message and messages")
	case f.Message != nil:
		var one fieldErrors
		p.s.checkStruct(f.Message, &one)
		pm := toPutMessage(f.Message, -1, now, &one)
		if id := f.Message.DeduplicationID; id != "" {
			if !validDedupID(id) {
				one.add("deduplicationId", dedupIDRule)
			} else {
				pm.DedupID, pm.DedupHash = id, requestHash(f.Message)
			}
		}
		for _, e := range one {
			fe.add("message."+e.Field, e.Message)
		}
		pms = []core.PutMessage{pm}
	default:
		batch := PublishBatchRequest{Messages: f.Messages}
		p.s.checkStruct(&batch, &fe)
		pms = make([]core.PutMessage, len(f.Messages))
		for i := range f.Messages {
			m := &f.Messages[i]
			pms[i] = toPutMessage(m, i, now, &fe)
			if m.DeduplicationID != "" {
				if !validDedupID(m.DeduplicationID) {
					fe.add(entryField(i, "deduplicationId"), dedupIDRule)
					continue
				}
				pms[i].DedupID, pms[i].DedupHash = m.DeduplicationID, requestHash(m)
			}
		}
	}
	if err := fe.err(); err != nil {
		return pms, err
	}
	total := 0
	for i := range pms {
		total += len(pms[i].Body)
	}
	if total > core.MaxMessageSize {
		return pms, core.Errorf(core.ETooLarge, "the message bodies total %d bytes; the limit is %d", total, core.MaxMessageSize)
	}
	return pms, nil
}

// publish stores pms and answers the frame: a confirm once durable, or
// an error frame. With tracing on, a frame is a publish span as a REST
// publish is (a single message's, or a batch's linked to its entries),
// from when the frame was read (start).
func (p *publishStream) publish(job publishJob) {
	pms, batch := job.pms, job.batch
	kind := "single"
	if batch {
		kind = "batch"
	}
	ctx := p.putCtx
	var res []core.PutResult
	var err error
	if p.s.tracer == nil {
		res, err = p.s.backend.Put(ctx, p.topic, pms)
	} else {
		ctx, span := p.s.startPublish(ctx, job.start, p.topic, pms, batch)
		res, err = p.s.put(ctx, p.topic, pms)
		endPublish(span, err)
	}
	if err == nil && len(res) != len(pms) {
		err = fmt.Errorf("engine returned %d results for %d messages", len(res), len(pms))
	}
	p.closeIfTopicGone(err)
	p.answerPublish(job, kind, res, err)
}

// closeIfTopicGone closes the stream when a Put failed because its topic
// was deleted (the stream's topic cannot come back under it); called
// once per Put, not once per publish answered from it.
func (p *publishStream) closeIfTopicGone(err error) {
	if err != nil && core.ErrorCode(err) == core.ENotFound {
		if _, terr := p.s.backend.Topic(p.topic); core.ErrorCode(terr) == core.ENotFound {
			p.closeWith(closeGone, "the topic was deleted")
		}
	}
}

// answerPublish counts a stored (or failed) publish frame and answers it:
// its confirm with res, or err's error frame.
func (p *publishStream) answerPublish(job publishJob, kind string, res []core.PutResult, err error) {
	p.send(p.answerFrame(job, kind, res, err))
}

// answerFrame counts a stored (or failed) publish frame and encodes its
// answer.
func (p *publishStream) answerFrame(job publishJob, kind string, res []core.PutResult, err error) outFrame {
	p.s.publishAhead.Release(job.ahead) // the store has answered it
	id, pms, size := job.id, job.pms, job.size
	total := 0
	for i := range pms {
		total += len(pms[i].Body)
	}
	p.s.metrics.observePublish(kind, len(pms), total, err)
	b := getFrameBuf()
	if err != nil {
		pr := problemFor(err)
		if pr.Status >= 500 && pr.Status != http.StatusServiceUnavailable {
			p.log.Error().Err(err).Str("stream", p.id).Msg("internal error on a publish stream")
		}
		*b = appendErrorFrame(*b, id, &pr)
	} else {
		*b = appendConfirmFrame(*b, id, res)
	}
	return outFrame{buf: b, msgs: len(pms), bytes: size}
}

// gather stores the stream's plain publishes, a batch's worth per Put,
// until none is left.
func (p *publishStream) gather() {
	for {
		p.mu.Lock()
		if len(p.plain) == 0 {
			p.gatherers--
			p.mu.Unlock()
			return
		}
		n, bytes := 0, 0
		for n < len(p.plain) && n < core.MaxBatch && (n == 0 || bytes+len(p.plain[n].pms[0].Body) <= core.MaxMessageSize) {
			bytes += len(p.plain[n].pms[0].Body)
			n++
		}
		jobs := slices.Clone(p.plain[:n])
		clear(p.plain[:n])
		p.plain = p.plain[n:]
		if len(p.plain) == 0 {
			p.plain = p.plain[:0:0] // let the backing array go
		}
		p.mu.Unlock()
		p.putPlain(jobs)
	}
}

// putPlain stores gathered plain publishes in one Put and confirms each.
// A refusal the engine gives before it stores anything (a 4xx: one
// message's fault, such as a deliverAt past this server's --max-delay)
// is the fault of one of them, not of all: each is then published on
// its own, for its own answer. Any other failure is every one's.
func (p *publishStream) putPlain(jobs []publishJob) {
	if len(jobs) == 1 {
		p.publish(jobs[0])
		return
	}
	pms := make([]core.PutMessage, len(jobs))
	for i := range jobs {
		pms[i] = jobs[i].pms[0]
	}
	res, err := p.s.backend.Put(p.putCtx, p.topic, pms)
	if err == nil && len(res) != len(pms) {
		err = fmt.Errorf("engine returned %d results for %d messages", len(res), len(pms))
	}
	if err != nil && problemFor(err).Status < 500 && core.ErrorCode(err) != core.ENotFound {
		for _, j := range jobs {
			p.publish(j)
		}
		return
	}
	p.closeIfTopicGone(err)
	frames := make([]outFrame, len(jobs)) // the Put's confirms, queued together
	for i, j := range jobs {
		var r []core.PutResult
		if err == nil {
			r = res[i : i+1]
		}
		frames[i] = p.answerFrame(j, "single", r, err)
	}
	p.sendAll(frames)
}

// finish waits for the publishes in flight, so their confirms are queued
// before the writer stops, and for their workers, which end with the
// stream.
func (p *publishStream) finish() {
	p.mu.Lock()
	p.drained.Broadcast()
	close(p.jobs) // the stream has ended: handle dispatches nothing more
	p.mu.Unlock()
	p.workers.Wait()
}

// fastPublishFrame decodes the plainest single-message publish frame,
// {"type":"publish","id":…,"message":{…}} in any member order, as the
// strict decoder would (decode_fast.go's subset); anything else reports
// false.
func fastPublishFrame(b []byte, f *clientFrame) bool {
	s := fastScanner{Scanner: jsonscan.Scanner{B: b}}
	var head frameHead
	var seenMsg bool
	var out clientFrame
	ok := s.Object(func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "type", "id":
			ok = s.frameHead(name, FramePublish, &head, &out)
		case "message":
			if seenMsg {
				return false
			}
			seenMsg = true
			out.Message = new(PublishRequest)
			ok = s.publish(out.Message)
		}
		return ok
	})
	if !ok || !s.End() || !head.complete() || !seenMsg {
		return false
	}
	*f = out
	return true
}
