package api

import (
	"container/heap"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway"
	"github.com/mqgate/mqgate/internal/auth"
)

// The consume stream, GET /v1/groups/{group}/stream. Its deliveries come
// from the same Service.Receive the REST receive calls (leases,
// consumerId, ORDERLY order, pause, the timeline's DELIVERED events all
// come with it), its settlements go to the same Ack, Nack and Extend, so
// its handles are ordinary receipt handles and it runs on every backend.
//
// Three goroutines serve it: the reader (frames in, on the request's
// goroutine), the pump (receives while the flow limits allow) and the
// writer (stream.go); a settler runs only while settlements wait, and
// gathers the ack frames that arrived while the last settle ran into one
// Ack call.

// Consume stream limits (docs/streaming.md).
const (
	defaultOutstandingMessages = 1000
	maxOutstandingMessages     = 10000
	defaultOutstandingBytes    = 10 << 20
	minOutstandingBytes        = 1 << 10
	maxOutstandingBytes        = 256 << 20
	// streamWait is the long poll of each of the pump's receives; an empty
	// one is when the stream says why (empty frame), if that changed.
	streamWait = 20 * time.Second
	// maxPendingSettles bounds the settlement frames waiting for the
	// settler; the reader pauses beyond it.
	maxPendingSettles = 1024
	// pumpOutputLimit: the pump receives no more while this much is still
	// waiting for the writer, so a client that stops reading holds the
	// socket buffers and one frame, not its whole flow window.
	pumpOutputLimit = 256 << 10
	// maxFrameBodies is about the most body bytes the pump puts in one
	// messages frame (a receive is sized to it by the mean body size).
	maxFrameBodies = 256 << 10
	// maxRefillBatch caps refillBatch: a refill of 32 is already one
	// receive and one frame per 32 acks.
	maxRefillBatch = 32
	// busyRetry is the pause before the pump tries again after the gateway
	// refused a receive (too many waiting receives) or failed.
	busyRetry = time.Second
)

// handleGroupStream opens a consume stream.
//
//	@Summary		Consume over a WebSocket stream
//	@Description	Upgrades to a WebSocket (RFC 6455) with subprotocol mqgate.v1 (Sec-WebSocket-Protocol; browsers may add mqgate.key.<base64url key>). The server pushes deliveries as they come, within maxOutstandingMessages and maxOutstandingBytes; the client acks, nacks, extends and changes the flow limits with frames answered per handle. The frames are described in docs/streaming.md and the AsyncAPI document openapi/asyncapi.json. A refused upgrade answers problem+json.
//	@Tags			consuming
//	@Produce		json
//	@Param			group					path		string	true	"Group name"
//	@Param			Sec-WebSocket-Protocol	header		string	true	"mqgate.v1 (and, for browsers, mqgate.key.<base64url of the API key>)"
//	@Param			consumerId				query		string	false	"The consumer's name; required for BROADCASTING groups"
//	@Param			invisibleSeconds		query		int		false	"The lease of each delivery (default: the group's)"	minimum(1)	maximum(43200)
//	@Param			maxOutstandingMessages	query		int		false	"Most deliveries out and not yet settled (default 1000)"	minimum(1)	maximum(10000)
//	@Param			maxOutstandingBytes		query		int		false	"Most body bytes out and not yet settled (default 10 MiB)"	minimum(1024)	maximum(268435456)
//	@Success		101						"Switching Protocols: the stream is open"
//	@Failure		400						{object}	Problem	"Not a WebSocket upgrade, no mqgate.v1, or a bad parameter"
//	@Failure		403						{object}	Problem	"The Origin is not allowed, or the API key lacks the grant"
//	@Failure		404						{object}	Problem
//	@Failure		409						{object}	Problem	"Push group"
//	@Failure		429						{object}	Problem	"Too many streams for this API key or server"
//	@Failure		503						{object}	Problem
//	@ID				consumeStream
//	@Failure		401	{object}	Problem	"Missing or bad API key (when the server has --api-keys)"
//	@Security		BearerAuth
//	@Router			/v1/groups/{group}/stream [get]
func (s *Server) handleGroupStream(w http.ResponseWriter, r *http.Request) {
	name, err := groupParam(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	p, err := parseConsumeParams(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	g, err := s.backend.Group(r.Context(), name)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if g.Push != nil {
		s.writeProblem(w, r, core.Errorf(core.EConflict, "group %q is a push group: its messages go to its webhook, not to receives or streams", name))
		return
	}
	if g.MessageModel == core.Broadcasting && p.consumerID == "" {
		s.writeProblem(w, r, core.FieldError("consumerId", "is required for a BROADCASTING group"))
		return
	}
	if p.invisible == 0 {
		p.invisible = g.InvisibleSeconds
		if p.invisible <= 0 {
			p.invisible = core.DefaultInvisibleSeconds
		}
	}
	up, ok := s.checkUpgrade(w, r, kindConsume)
	if !ok {
		return
	}
	defer s.releaseStream(up)
	st, err := s.accept(w, r, kindConsume, maxConsumeFrame)
	if err != nil {
		return // Accept has answered
	}
	c := &consumeStream{
		stream: st, group: name, consumerID: p.consumerID,
		invisible: time.Duration(p.invisible) * time.Second,
		maxMsgs:   p.maxMsgs, maxBytes: p.maxBytes,
		out:    map[string]*outEntry{},
		credit: make(chan struct{}, 1),
	}
	c.pendCond = sync.NewCond(&c.fmu)
	st.allowed = s.keyCheck(st, up, auth.Sub, name)
	b := getFrameBuf()
	*b = appendJSONValue(*b, ConsumeOpenFrame{Type: FrameOpen, Protocol: StreamProtocol, Stream: st.id, Group: name,
		MaxOutstandingMessages: p.maxMsgs, MaxOutstandingBytes: p.maxBytes, InvisibleSeconds: p.invisible,
		PingSeconds: int(s.streamOpts.Ping / time.Second)})
	st.send(outFrame{buf: b})
	c.tasks.Add(1)
	go c.pump()
	st.run(c.reader, c.finish)
}

type consumeParams struct {
	consumerID string
	invisible  int
	maxMsgs    int
	maxBytes   int64
}

// parseConsumeParams reads the consume stream's query: every parameter
// is checked, unknown ones refused, all problems answered at once.
func parseConsumeParams(r *http.Request) (consumeParams, error) {
	p := consumeParams{maxMsgs: defaultOutstandingMessages, maxBytes: defaultOutstandingBytes}
	var fe fieldErrors
	for k, vs := range r.URL.Query() {
		if len(vs) != 1 {
			fe.add(k, "give it once")
			continue
		}
		v := vs[0]
		switch k {
		case "consumerId":
			if !core.ValidName(v) {
				fe.add(k, "must match ^[A-Za-z0-9_-]{1,127}$")
			}
			p.consumerID = v
		case "invisibleSeconds":
			p.invisible = int(queryInt(&fe, k, v, minInvisibleSeconds, maxInvisibleSeconds))
		case "maxOutstandingMessages":
			p.maxMsgs = int(queryInt(&fe, k, v, 1, maxOutstandingMessages))
		case "maxOutstandingBytes":
			p.maxBytes = queryInt(&fe, k, v, minOutstandingBytes, maxOutstandingBytes)
		default:
			fe.add(k, "unknown query parameter")
		}
	}
	return p, fe.err()
}

func queryInt(fe *fieldErrors, name, v string, lo, hi int64) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		fe.add(name, "must be an integer")
		return 0
	}
	if n < lo || n > hi {
		fe.add(name, "must be between "+strconv.FormatInt(lo, 10)+" and "+strconv.FormatInt(hi, 10))
	}
	return n
}

// consumeStream is one consume stream's state.
type consumeStream struct {
	*stream
	group      string
	consumerID string
	invisible  time.Duration

	// Flow state, under fmu.
	fmu      sync.Mutex
	maxMsgs  int
	maxBytes int64
	out      map[string]*outEntry // outstanding deliveries by handle
	leases   outHeap              // the same, by lease end
	outBytes int64
	held     []core.Received // received but over the byte limit: sent when it allows
	avg      int64           // running mean body size, to size receives
	credit   chan struct{}   // wakes the pump when a limit may allow more

	// Settlements waiting for the settler, under fmu.
	pend     []settleItem
	settling bool
	pendCond *sync.Cond
	tasks    sync.WaitGroup // the pump and a running settler

	lastEmpty string // the reason of the last empty frame ("" after a delivery)
}

// outEntry is one outstanding delivery.
type outEntry struct {
	handle string
	bytes  int64
	until  time.Time
	idx    int // in leases
}

type outHeap []*outEntry

func (h outHeap) Len() int           { return len(h) }
func (h outHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h outHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].idx = i; h[j].idx = j }
func (h *outHeap) Push(x any)        { e := x.(*outEntry); e.idx = len(*h); *h = append(*h, e) }
func (h *outHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// settleItem is one ack, nack or extend frame waiting for the settler.
type settleItem struct {
	kind      string
	id        string
	handles   []string
	level     int
	reason    string
	invisible time.Duration
}

func (c *consumeStream) kick() {
	select {
	case c.credit <- struct{}{}:
	default:
	}
}

// removeLocked ends the outstanding delivery of handle, if it is one.
func (c *consumeStream) removeLocked(handle string) {
	e, ok := c.out[handle]
	if !ok {
		return
	}
	delete(c.out, handle)
	heap.Remove(&c.leases, e.idx)
	c.outBytes -= e.bytes
	*e = outEntry{}
	outEntries.Put(e)
}

// outEntries recycles outEntry values: one per delivery otherwise.
var outEntries = sync.Pool{New: func() any { return new(outEntry) }}

// expireLocked ends the deliveries whose lease has run out, and returns
// when the next one does (zero: none outstanding).
func (c *consumeStream) expireLocked(now time.Time) time.Time {
	for len(c.leases) > 0 {
		e := c.leases[0]
		if e.until.After(now) {
			return e.until
		}
		c.removeLocked(e.handle)
	}
	return time.Time{}
}

// fitsLocked reports whether a delivery of size may go out now; one
// larger than the byte limit goes when nothing else is outstanding.
func (c *consumeStream) fitsLocked(size int64) bool {
	if len(c.out) == 0 {
		return true
	}
	return len(c.out) < c.maxMsgs && c.outBytes+size <= c.maxBytes
}

// refillBatch is how many deliveries must be settled before the pump
// receives again: a client acking one message per frame frees one place
// at a time, and refilling each place on its own made a receive, a
// messages frame and a write per message. A quarter of the window (at
// most maxRefillBatch) goes out together instead; the client still holds
// the other three quarters meanwhile, so it never waits for the refill.
func refillBatch(maxMsgs int) int {
	return min(max(maxMsgs/4, 1), maxRefillBatch)
}

// refillLocked reports whether enough has been settled for the pump to
// receive again (the byte limit is checked apart).
func (c *consumeStream) refillLocked() bool {
	return len(c.out) <= c.maxMsgs-refillBatch(c.maxMsgs)
}

// addLocked makes m outstanding.
func (c *consumeStream) addLocked(m *core.Received) {
	size := int64(len(m.Message.Body))
	e := outEntries.Get().(*outEntry)
	*e = outEntry{handle: m.ReceiptHandle, bytes: size, until: m.InvisibleUntil}
	c.out[m.ReceiptHandle] = e
	heap.Push(&c.leases, e)
	c.outBytes += size
	if c.avg == 0 {
		c.avg = max(size, 1)
	} else {
		c.avg = max((c.avg*7+size)/8, 1)
	}
}

// pump receives while the flow limits allow and sends the deliveries.
func (c *consumeStream) pump() {
	defer c.tasks.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	wait := time.Duration(0) // the first receive answers at once: an empty stream says why from the start
	for {
		n, ok := c.waitCredit(timer)
		if !ok {
			return
		}
		if n == 0 {
			continue // held messages went out (or expired); look again
		}
		// The key's delivery limits (docs/quotas.md): a stream is paced,
		// not refused; the receive asks for what the buckets hold.
		rc, err := c.s.quotas.Paced(c.ctx, c.key.Load(), c.group, n)
		if err != nil {
			return // the stream ended while paced
		}
		if rc != nil {
			n = rc.Max
		}
		var start time.Time
		if c.s.tracer != nil {
			start = time.Now()
		}
		got, err := c.s.backend.Receive(c.ctx, c.group, core.ReceiveRequest{
			MaxMessages: n, Wait: wait, Invisible: c.invisible, ConsumerID: c.consumerID,
		})
		rc.Delivered(len(got))
		wait = streamWait
		if c.ctx.Err() != nil {
			return // nothing was leased to a stream that has gone
		}
		if err != nil {
			if !c.receiveFailed(err, timer) {
				return
			}
			continue
		}
		if len(got) == 0 {
			c.sayEmpty()
			continue
		}
		if c.s.tracer != nil {
			c.s.traceReceive(c.ctx, start, c.group, got)
		}
		c.deliver(got)
	}
}

// waitCredit waits until the limits allow a delivery; it sends held
// messages first (and returns 0 then), else returns how many to receive.
func (c *consumeStream) waitCredit(timer *time.Timer) (int, bool) {
	for {
		if !c.waitOutput(pumpOutputLimit) {
			return 0, false
		}
		c.fmu.Lock()
		next := c.expireLocked(time.Now())
		if len(c.held) > 0 {
			if batch := c.takeHeldLocked(); len(batch) > 0 || len(c.held) == 0 {
				c.fmu.Unlock()
				c.sendMessages(batch) // encoded after the lock, which the reader takes per ack frame
				return 0, true
			}
		} else if len(c.out) == 0 || (c.refillLocked() && c.outBytes < c.maxBytes) {
			n := min(gateway.MaxReceiveMessages, c.maxMsgs-len(c.out))
			if c.avg > 0 {
				// Sized to the byte limit left, and to a frame of about
				// maxFrameBodies: a stream holds at most one frame beyond
				// what its socket does.
				if len(c.out) > 0 {
					n = int(min(int64(n), max((c.maxBytes-c.outBytes)/c.avg, 1)))
				}
				n = int(min(int64(n), max(maxFrameBodies/c.avg, 1)))
			}
			c.fmu.Unlock()
			return max(n, 1), true
		}
		c.fmu.Unlock()
		var expiry <-chan time.Time
		if !next.IsZero() {
			timer.Reset(time.Until(next) + time.Millisecond)
			expiry = timer.C
		}
		select {
		case <-c.ctx.Done():
			return 0, false
		case <-c.credit:
		case <-expiry:
		}
		if expiry != nil && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// takeHeldLocked makes the held messages that fit outstanding and
// returns them, to be sent (it drops those whose lease has run out: they
// will be delivered again).
func (c *consumeStream) takeHeldLocked() []core.Received {
	now := time.Now()
	var batch []core.Received
	i := 0
	for ; i < len(c.held); i++ {
		m := &c.held[i]
		if !m.InvisibleUntil.After(now) {
			continue
		}
		if !c.fitsLocked(int64(len(m.Message.Body))) {
			break
		}
		c.addLocked(m)
		batch = append(batch, *m)
	}
	c.held = append(c.held[:0], c.held[i:]...)
	return batch
}

// deliver makes what fits outstanding and sends it; the rest is held.
func (c *consumeStream) deliver(got []core.Received) {
	c.fmu.Lock()
	i := 0
	for ; i < len(got); i++ {
		if !c.fitsLocked(int64(len(got[i].Message.Body))) {
			break
		}
		c.addLocked(&got[i])
	}
	if i < len(got) {
		c.held = append(c.held, got[i:]...)
	}
	c.lastEmpty = ""
	c.fmu.Unlock()
	if i > 0 {
		c.sendMessages(got[:i])
	}
}

func (c *consumeStream) sendMessages(got []core.Received) {
	if len(got) == 0 {
		return
	}
	b := getFrameBuf()
	// One allocation of about the frame's size, not a doubling per 2x.
	size := 64
	for i := range got {
		m := got[i].Message
		size += len(m.Body)*4/3 + 512 + len(m.Properties)*64
	}
	if cap(*b) < size {
		*b = make([]byte, 0, size)
	}
	*b = appendMessagesFrame(*b, got)
	c.send(outFrame{buf: b})
}

// sayEmpty sends why nothing came, when the reason changed.
func (c *consumeStream) sayEmpty() {
	e := c.s.emptyReceive(c.ctx, c.group, c.consumerID)
	if e == nil {
		e = &EmptyReceive{Reason: string(core.EmptyNoMessages)}
	}
	c.fmu.Lock()
	same := e.Reason == c.lastEmpty
	c.lastEmpty = e.Reason
	c.fmu.Unlock()
	if same {
		return
	}
	b := getFrameBuf()
	*b = appendJSONValue(*b, EmptyFrame{Type: FrameEmpty, Empty: *e})
	c.send(outFrame{buf: b})
}

// receiveFailed handles a receive's error: the stream ends (draining,
// the group deleted) or the pump retries after a pause.
func (c *consumeStream) receiveFailed(err error, timer *time.Timer) bool {
	switch core.ErrorCode(err) {
	case core.ENotFound:
		c.closeWith(closeGone, "the group was deleted")
		return false
	case core.EUnavailable:
		if errors.Is(err, core.ErrClosed) || c.s.shuttingDown.Load() {
			c.closeWith(closeGoingAway, "server shutting down")
			return false
		}
		c.sendError("", err)
	case core.ETooMany:
		// Streams park receives like REST long polls do and share their
		// caps; wait and try again.
	default:
		c.sendError("", err)
	}
	timer.Reset(busyRetry)
	select {
	case <-c.ctx.Done():
		timer.Stop()
		return false
	case <-timer.C:
		return true
	}
}

// reader reads and acts on the client's frames.
func (c *consumeStream) reader() {
	buf := make([]byte, 0, streamReadBuf)
	bad := 0
	for {
		c.fmu.Lock()
		if len(c.pend) >= maxPendingSettles && c.ctx.Err() == nil {
			release := c.hold()
			for len(c.pend) >= maxPendingSettles && c.ctx.Err() == nil {
				c.pendCond.Wait()
			}
			release()
		}
		c.fmu.Unlock()
		if !c.waitOutput(maxQueuedOutput) {
			return
		}
		ok, binary := c.readFrame(&buf)
		if !ok {
			return
		}
		if binary {
			c.sendError("", core.Errorf(core.EInvalid, "binary frames are not part of %s: send each frame as one text frame of JSON", StreamProtocol))
			bad++
		} else if c.handle(buf) {
			bad = 0
		} else {
			bad++
		}
		if bad >= maxBadInARow {
			c.closeWith(closePolicy, "too many malformed frames in a row")
			return
		}
	}
}

// handle acts on one frame; false when it was refused.
func (c *consumeStream) handle(b []byte) bool {
	var f clientFrame // on the stack for the fast path: no allocation per ack frame
	if !fastAckFrame(b, &f) {
		slow := new(clientFrame)
		if err := decodeFrame(b, slow); err != nil {
			c.sendError(slow.ID, err)
			return false
		}
		f = *slow
	}
	var fe fieldErrors
	item := settleItem{kind: f.Type, id: f.ID, handles: f.ReceiptHandles}
	switch f.Type {
	case FrameAck:
		c.s.checkStruct(&AckRequest{ReceiptHandles: f.ReceiptHandles}, &fe)
	case FrameNack:
		req := NackRequest{ReceiptHandles: f.ReceiptHandles}
		if f.DelayLevel != nil {
			req.DelayLevel = *f.DelayLevel
		}
		if f.Reason != nil {
			req.Reason = *f.Reason
		}
		c.s.checkStruct(&req, &fe)
		item.level, item.reason = req.DelayLevel, req.Reason
	case FrameExtend:
		req := ExtendRequest{ReceiptHandles: f.ReceiptHandles}
		if f.InvisibleSeconds != nil {
			req.InvisibleSeconds = *f.InvisibleSeconds
		}
		c.s.checkStruct(&req, &fe)
		item.invisible = time.Duration(req.InvisibleSeconds) * time.Second
	case FrameFlow:
		return c.flow(&f)
	case FramePublish:
		c.sendError(f.ID, core.FieldError("type", "publish frames go on a publish stream (GET /v1/topics/{topic}/stream), not a consume stream"))
		return false
	default:
		c.sendError(f.ID, core.FieldError("type", "must be one of ack, nack, extend, flow on a consume stream"))
		return false
	}
	if err := fe.err(); err != nil {
		c.sendError(f.ID, err)
		return false
	}
	c.fmu.Lock()
	if c.ctx.Err() != nil {
		// Closing: finish may be waiting for the settler already. The
		// frame is not answered; its leases run out.
		c.fmu.Unlock()
		return true
	}
	if f.Type != FrameExtend {
		// Acked or nacked on this stream: no longer outstanding, whatever
		// the answer.
		before := len(c.out)
		for _, h := range f.ReceiptHandles {
			c.removeLocked(h)
		}
		if len(c.out) < before && (len(c.out) == 0 || c.refillLocked()) {
			c.kick()
		}
	}
	c.pend = append(c.pend, item)
	start := !c.settling
	c.settling = true
	if start {
		c.tasks.Add(1)
	}
	c.fmu.Unlock()
	if start {
		go c.settler()
	}
	return true
}

// flow changes the limits and answers with those in force.
func (c *consumeStream) flow(f *clientFrame) bool {
	var fe fieldErrors
	if f.MaxOutstandingMessages != nil && (*f.MaxOutstandingMessages < 1 || *f.MaxOutstandingMessages > maxOutstandingMessages) {
		fe.add("maxOutstandingMessages", "must be between 1 and "+strconv.Itoa(maxOutstandingMessages))
	}
	if f.MaxOutstandingBytes != nil && (*f.MaxOutstandingBytes < minOutstandingBytes || *f.MaxOutstandingBytes > maxOutstandingBytes) {
		fe.add("maxOutstandingBytes", "must be between "+strconv.Itoa(minOutstandingBytes)+" and "+strconv.Itoa(maxOutstandingBytes))
	}
	if err := fe.err(); err != nil {
		c.sendError(f.ID, err)
		return false
	}
	c.fmu.Lock()
	if f.MaxOutstandingMessages != nil {
		c.maxMsgs = *f.MaxOutstandingMessages
	}
	if f.MaxOutstandingBytes != nil {
		c.maxBytes = *f.MaxOutstandingBytes
	}
	msgs, bytes := c.maxMsgs, c.maxBytes
	c.fmu.Unlock()
	c.kick()
	b := getFrameBuf()
	*b = appendFlowAnswer(*b, f.ID, msgs, bytes)
	c.send(outFrame{buf: b})
	return true
}

// settler settles what waits, until nothing does. Ack frames that
// arrived together go to the engine as one Ack call (up to the 100
// handles a call takes).
func (c *consumeStream) settler() {
	defer c.tasks.Done()
	ctx := context.WithoutCancel(c.ctx) // a settlement read is carried out, even as the stream closes
	var handles []string
	var items []settleItem
	var frames []outFrame
	for {
		c.fmu.Lock()
		// The two slices take turns: the reader appends to one while the
		// settler works through the other.
		items, c.pend = c.pend, clearItems(items)
		if len(items) == 0 {
			c.pend = items[:0]
			c.settling = false
			c.fmu.Unlock()
			return
		}
		c.pendCond.Broadcast()
		c.fmu.Unlock()
		for i := 0; i < len(items); {
			it := &items[i]
			if it.kind != FrameAck {
				c.settleOne(ctx, it)
				i++
				continue
			}
			// A run of ack frames, as many as fit in one call.
			j := i
			handles = handles[:0]
			for j < len(items) && items[j].kind == FrameAck && len(handles)+len(items[j].handles) <= gateway.MaxHandles {
				handles = append(handles, items[j].handles...)
				j++
			}
			var start time.Time
			if c.s.tracer != nil {
				start = time.Now()
			}
			res, err := c.s.backend.Ack(ctx, c.group, handles)
			if c.s.tracer != nil {
				c.s.traceSettle(ctx, start, c.group, "ack", "ack", res, err)
			}
			// The run's answers are queued together: one lock and one
			// wake-up of the writer, not one each.
			frames = frames[:0]
			if err != nil {
				for k := i; k < j; k++ {
					frames = append(frames, c.errorFrame(items[k].id, err))
				}
			} else {
				off := 0
				for k := i; k < j; k++ {
					n := len(items[k].handles)
					frames = append(frames, resultsFrame(items[k].id, res[off:off+n]))
					off += n
				}
			}
			c.sendAll(frames)
			clear(frames)
			i = j
		}
	}
}

// clearItems empties items for reuse (nil when it grew large).
func clearItems(items []settleItem) []settleItem {
	if cap(items) > maxPendingSettles {
		return nil
	}
	clear(items)
	return items[:0]
}

func (c *consumeStream) settleOne(ctx context.Context, it *settleItem) {
	var res []core.HandleResult
	var err error
	switch it.kind {
	case FrameNack:
		var start time.Time
		if c.s.tracer != nil {
			start = time.Now()
		}
		res, err = c.s.backend.Nack(ctx, c.group, it.handles, it.level, it.reason)
		if c.s.tracer != nil {
			c.s.traceSettle(ctx, start, c.group, "nack", nackOutcome(it.level), res, err)
		}
	case FrameExtend:
		res, err = c.s.backend.Extend(ctx, c.group, it.handles, it.invisible)
		if err == nil {
			c.fmu.Lock()
			for _, r := range res {
				if e, ok := c.out[r.ReceiptHandle]; ok && r.Status == core.HandleOK && !r.InvisibleUntil.IsZero() {
					e.until = r.InvisibleUntil
					heap.Fix(&c.leases, e.idx)
				}
			}
			c.fmu.Unlock()
		}
	}
	if err != nil {
		c.sendError(it.id, err)
		return
	}
	c.sendResults(it.id, res)
}

func (c *consumeStream) sendResults(id string, res []core.HandleResult) {
	c.send(resultsFrame(id, res))
}

func resultsFrame(id string, res []core.HandleResult) outFrame {
	b := getFrameBuf()
	*b = appendResultsFrame(*b, id, res)
	return outFrame{buf: b}
}

// finish waits for the pump and the settler once the stream is closing.
func (c *consumeStream) finish() {
	c.fmu.Lock()
	c.pendCond.Broadcast()
	c.fmu.Unlock()
	c.tasks.Wait()
}
