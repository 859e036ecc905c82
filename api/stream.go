package api

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/auth"
	"github.com/mqgate/mqgate/internal/corkconn"
	"github.com/mqgate/mqgate/internal/wsread"
)

// WebSocket streams (docs/streaming.md, protocol mqgate.v1): the upgrade
// checks, the registry that caps and closes streams, and the per-stream
// connection with its one writer. The consume stream is stream_consume.go,
// the publish stream stream_publish.go.
//
// The library is github.com/coder/websocket: maintained, context-aware,
// no dependencies, safe for concurrent writes, RFC 6455 with
// permessage-deflate, and it takes the http.ResponseWriter's Hijacker
// through Unwrap, so the instrumenting middleware stays in place.

// StreamOptions configures the WebSocket streams.
type StreamOptions struct {
	// Origins allows upgrades from these browser origins besides the
	// server's own: full origins (https://app.example.com), host patterns
	// (*.example.com, path.Match) or "*" for any. An upgrade with an
	// Origin header matching none is refused 403.
	Origins []string
	// MaxPerKey caps the concurrent streams of one API key (when the
	// server has API keys): 429 with Retry-After beyond it. Default 64.
	MaxPerKey int
	// Max caps the concurrent streams of the server. Default 10000.
	Max int
	// Ping is how often the server pings each stream; a stream whose pong
	// does not come within it is closed 4008. Default 30s.
	Ping time.Duration
	// PublishAhead bounds the publish frames' bytes that all publish
	// streams together have read and the store has not yet answered
	// (stream_publish.go, "Reading ahead"). Default 8 MiB.
	PublishAhead int64
}

// Stream close codes (docs/streaming.md "Errors on a stream").
const (
	closeGoingAway  = websocket.StatusGoingAway       // 1001: shutting down
	closePolicy     = websocket.StatusPolicyViolation // 1008: too many malformed frames
	closeInternal   = websocket.StatusInternalError   // 1011
	closeGone       = websocket.StatusCode(4000)      // the group or topic was deleted
	closeIdle       = websocket.StatusCode(4008)      // no pong in time
	maxBadInARow    = 100                             // malformed frames in a row before 1008
	maxQueuedOutput = 1 << 20                         // a stream's encoded frames waiting for its writer before its reader pauses
	streamReadBuf   = 8 << 10
	// streamSendBuffer is each stream's SO_SNDBUF: 512 KiB in flight once
	// the kernel doubles it, 50 MB/s at a 10 ms round trip.
	streamSendBuffer = 256 << 10
)

// Frame size limits: a consume stream's frames are settlements, as large
// as the largest REST settlement body; a publish stream's are publishes,
// as large as the largest REST publish body.
const (
	maxConsumeFrame = maxHandlesJSON
	maxPublishFrame = maxPublishJSON
)

func (o *StreamOptions) defaults() {
	if o.MaxPerKey <= 0 {
		o.MaxPerKey = 64
	}
	if o.Max <= 0 {
		o.Max = 10000
	}
	if o.Ping <= 0 {
		o.Ping = 30 * time.Second
	}
	if o.PublishAhead <= 0 {
		o.PublishAhead = 8 << 20
	}
}

// streamRegistry counts and tracks the live streams: the caps, and the
// close of every stream at shutdown.
type streamRegistry struct {
	mu      sync.Mutex
	perKey  map[string]int
	total   int
	kinds   [2]int // open streams by kind: consume, publish (the mqgate_streams_open gauge)
	live    map[*stream]struct{}
	closing bool
	done    sync.WaitGroup
	// frames counts the frames read (0) and written (1) by kind
	// (mqgate_stream_frames_total): against the messages, how much each
	// frame carries.
	frames [2][2]atomic.Uint64
}

// acquire reserves a place for a stream of key ("" without API keys).
func (g *streamRegistry) acquire(o *StreamOptions, key string, keyed bool, kind int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closing:
		return core.Errorf(core.EUnavailable, "the server is shutting down")
	case g.total >= o.Max:
		return core.Errorf(core.ETooMany, "the server has its maximum of %d streams open", o.Max)
	case keyed && g.perKey[key] >= o.MaxPerKey:
		return core.Errorf(core.ETooMany, "API key %q has its maximum of %d streams open", key, o.MaxPerKey)
	}
	if g.perKey == nil {
		g.perKey = map[string]int{}
		g.live = map[*stream]struct{}{}
	}
	g.total++
	g.kinds[kind]++
	if keyed {
		g.perKey[key]++
	}
	g.done.Add(1)
	return nil
}

func (g *streamRegistry) release(key string, keyed bool, kind int) {
	g.mu.Lock()
	g.total--
	g.kinds[kind]--
	if keyed {
		if g.perKey[key]--; g.perKey[key] <= 0 {
			delete(g.perKey, key)
		}
	}
	g.mu.Unlock()
	g.done.Done()
}

func (g *streamRegistry) add(st *stream) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.live[st] = struct{}{}
	return true
}

func (g *streamRegistry) remove(st *stream) {
	g.mu.Lock()
	delete(g.live, st)
	g.mu.Unlock()
}

// closeAll closes every stream with 1001 and waits, up to wait, for them
// to end; no new stream opens from now on.
func (g *streamRegistry) closeAll(wait time.Duration) {
	g.mu.Lock()
	g.closing = true
	for st := range g.live {
		st.closeWith(closeGoingAway, "server shutting down")
	}
	g.mu.Unlock()
	ended := make(chan struct{})
	go func() { g.done.Wait(); close(ended) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
	}
}

// Stream kinds.
const (
	kindConsume = 0
	kindPublish = 1
)

// registerMetrics adds mqgate_streams_open{kind} and
// mqgate_stream_frames_total{kind,direction}.
func (g *streamRegistry) registerMetrics(reg prometheus.Registerer) {
	for kind, name := range []string{"consume", "publish"} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "mqgate_streams_open",
			Help:        "WebSocket streams open, by kind (consume, publish).",
			ConstLabels: prometheus.Labels{"kind": name},
		}, func() float64 {
			g.mu.Lock()
			defer g.mu.Unlock()
			return float64(g.kinds[kind])
		}))
		for dir, dname := range []string{"in", "out"} {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "mqgate_stream_frames_total",
				Help:        "WebSocket data frames read from clients (in) and written to them (out), by stream kind.",
				ConstLabels: prometheus.Labels{"kind": name, "direction": dname},
			}, func() float64 { return float64(g.frames[kind][dir].Load()) }))
		}
	}
}

// streamUpgrade holds what every upgrade checks before accepting.
type streamUpgrade struct {
	key   string
	keyed bool
	kind  int
	token string // the API key presented, checked again at each ping
}

func (s *Server) releaseStream(up streamUpgrade) { s.streams.release(up.key, up.keyed, up.kind) }

// keyCheck returns the stream's check that its key still has the grant
// kind on name (nil without API keys).
func (s *Server) keyCheck(st *stream, up streamUpgrade, kind auth.Kind, name string) func() bool {
	if !up.keyed || s.keys == nil {
		return nil
	}
	return func() bool {
		k := s.keys.Authenticate(up.token)
		if k != nil {
			st.key.Store(k) // a reload's limits apply from now on
		}
		return k != nil && k.Allows(kind, name)
	}
}

// checkUpgrade answers the refusals every stream shares (503, 400, 403,
// 429) and reserves the stream's place; ok false means it answered.
func (s *Server) checkUpgrade(w http.ResponseWriter, r *http.Request, kind int) (streamUpgrade, bool) {
	up := streamUpgrade{kind: kind}
	if s.shuttingDown.Load() {
		sendProblem(w, r, newProblem(core.EUnavailable, "the server is shutting down"))
		return up, false
	}
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		sendProblem(w, r, newProblem(core.EInvalid, "this endpoint is a WebSocket upgrade (RFC 6455) with subprotocol "+StreamProtocol+"; see docs/streaming.md"))
		return up, false
	}
	if !headerHasToken(r.Header, "Sec-WebSocket-Protocol", StreamProtocol) {
		sendProblem(w, r, newProblem(core.EInvalid, "the upgrade must offer the subprotocol "+StreamProtocol+" in Sec-WebSocket-Protocol"))
		return up, false
	}
	if !s.originAllowed(r) {
		sendProblem(w, r, newProblem(core.EForbidden, "the Origin "+r.Header.Get("Origin")+" is not allowed to open streams (--stream-origins)"))
		return up, false
	}
	if k := keyFrom(r.Context()); k != nil {
		up.key, up.keyed = k.Name, true
		up.token = keyFromSubprotocol(r)
		if _, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok {
			up.token = strings.TrimSpace(t)
		}
	}
	if err := s.streams.acquire(&s.streamOpts, up.key, up.keyed, kind); err != nil {
		s.writeProblem(w, r, err)
		return up, false
	}
	return up, true
}

// originAllowed: no Origin (not a browser), the server's own, or one in
// StreamOptions.Origins.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, p := range s.streamOpts.Origins {
		p = strings.ToLower(strings.TrimSpace(p))
		target := strings.ToLower(u.Host)
		if strings.Contains(p, "://") {
			target = strings.ToLower(u.Scheme + "://" + u.Host)
		}
		if p == "*" || p == target {
			return true
		}
		if ok, err := pathMatch(p, target); err == nil && ok {
			return true
		}
	}
	return false
}

// headerHasToken reports whether a comma-separated header has token
// (case-insensitive), as RFC 6455 reads Connection, Upgrade and
// Sec-WebSocket-Protocol.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// keyFromSubprotocol returns the API key a browser offered as the
// subprotocol mqgate.key.<base64url>, or "".
func keyFromSubprotocol(r *http.Request) string {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if enc, ok := strings.CutPrefix(t, StreamKeyProtocolPrefix); ok {
				if b, err := b64url.DecodeString(enc); err == nil {
					return string(b)
				}
			}
		}
	}
	return ""
}

// stream is one accepted WebSocket: its connection, its writer and its end.
type stream struct {
	s    *Server
	id   string
	kind int // kindConsume or kindPublish
	conn *websocket.Conn
	raw  *corkconn.Conn
	log  zerolog.Logger

	ctx    context.Context // ends when the stream is to close
	cancel context.CancelFunc

	mu        sync.Mutex
	queue     []outFrame // encoded frames for the writer
	spare     []outFrame
	queued    int        // bytes in queue
	drained   *sync.Cond // signalled when the writer has written a batch
	wake      chan struct{}
	closeCode websocket.StatusCode
	closeWhy  string
	failed    bool // the connection broke (a write failed): no close handshake
	writerEnd chan struct{}
	// stopWriter is closed once nothing more will be queued.
	stopWriter chan struct{}
	// sent, when set, is called by the writer for each frame written
	// (the publish stream's unconfirmed accounting), under mu.
	sent func(f *outFrame)
	// key is the stream's API key (nil without keys), as the last check
	// found it: its limits are the key file's latest (internal/quota).
	key atomic.Pointer[auth.Key]
	// holds counts the reasons the server holds the stream's reader
	// (hold); holdsBegun counts every hold ever begun, so the pinger can
	// tell that one began while its ping waited.
	holds, holdsBegun atomic.Int64
	// allowed, when set, reports whether the stream's API key still
	// holds its grant (asked at each ping: a key removed or narrowed by a
	// reload of the key file ends the stream, 1008).
	allowed func() bool
}

// outFrame is one encoded frame waiting for the writer.
type outFrame struct {
	buf   *[]byte
	msgs  int   // publish: messages it confirms
	bytes int64 // publish: their bytes
}

var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getFrameBuf() *[]byte { b := frameBufs.Get().(*[]byte); *b = (*b)[:0]; return b }

func putFrameBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		frameBufs.Put(b)
	}
}

// accept upgrades the connection; it answers the error itself on failure.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, kind int, readLimit int64) (*stream, error) {
	hw := &hijackWriter{ResponseWriter: w}
	conn, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		Subprotocols: []string{StreamProtocol},
		// Origin is checked by checkUpgrade, answering problem+json.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(readLimit)
	base := r.Context()
	if s.tracer != nil {
		base = requestContext(r) // the upgrade's traceparent: the parent of the stream's spans
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(base))
	st := &stream{
		s: s, id: newStreamID(), kind: kind, conn: conn, raw: hw.conn,
		log:    loggerFrom(r.Context(), s.log).With().Str("path", r.URL.Path).Logger(),
		ctx:    ctx,
		cancel: cancel,
		wake:   make(chan struct{}, 1), writerEnd: make(chan struct{}), stopWriter: make(chan struct{}),
	}
	st.drained = sync.NewCond(&st.mu)
	st.key.Store(keyFrom(r.Context()))
	return st, nil
}

func newStreamID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// run serves the stream until it ends: the writer and the pings start,
// serve (the stream's reader) runs on the caller's goroutine, and the
// close runs once the stream's context ends (context.AfterFunc: no
// goroutine waits for it meanwhile): the kind's own goroutines stop
// (finish), the writer writes what is queued, then the close frame goes
// out, which ends the reader.
func (st *stream) run(serve func(), finish func()) {
	if !st.s.streams.add(st) {
		st.closeWith(closeGoingAway, "server shutting down")
	}
	go st.writer()
	stopPing := st.pinger()
	closed := make(chan struct{})
	context.AfterFunc(st.ctx, func() {
		defer close(closed)
		stopPing()
		if finish != nil {
			finish() // the kind's own goroutines end and their last frames are queued
		}
		close(st.stopWriter) // the writer writes what is queued and stops
		<-st.writerEnd
		st.mu.Lock()
		code, why, failed := st.closeCode, st.closeWhy, st.failed
		st.mu.Unlock()
		if failed || code == 0 {
			_ = st.conn.CloseNow()
		} else {
			_ = st.conn.Close(code, why)
		}
	})
	serve()
	st.cancel() // the reader has ended, so has the stream (a no-op when it ended first)
	<-closed
	st.s.streams.remove(st)
}

// closeWith ends the stream with a close frame (the first call wins).
func (st *stream) closeWith(code websocket.StatusCode, why string) {
	st.mu.Lock()
	if st.closeCode == 0 && !st.failed {
		st.closeCode, st.closeWhy = code, why
	}
	st.mu.Unlock()
	st.cancel()
}

// fail ends the stream without a close handshake (the peer has gone or
// stopped reading).
func (st *stream) fail() {
	st.mu.Lock()
	if st.closeCode == 0 {
		st.failed = true
	}
	st.mu.Unlock()
	st.cancel()
}

// send queues an encoded frame for the writer; buf is the writer's from
// now on.
func (st *stream) send(f outFrame) {
	st.mu.Lock()
	st.queue = append(st.queue, f)
	st.queued += len(*f.buf)
	st.mu.Unlock()
	st.wakeWriter()
}

// sendAll queues frames made together (the results of one settle, the
// confirms of one store) with one lock and one wake-up.
func (st *stream) sendAll(fs []outFrame) {
	if len(fs) == 0 {
		return
	}
	st.mu.Lock()
	st.queue = append(st.queue, fs...)
	for i := range fs {
		st.queued += len(*fs[i].buf)
	}
	st.mu.Unlock()
	st.wakeWriter()
}

func (st *stream) wakeWriter() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// waitOutput blocks while more than limit bytes wait for the writer (a
// client reading slowly slows what produces its frames); false when the
// stream ends.
func (st *stream) waitOutput(limit int) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	for st.queued > limit && st.ctx.Err() == nil {
		st.drained.Wait()
	}
	return st.ctx.Err() == nil
}

// writer writes queued frames, a batch per system call (corkconn), each
// batch under the write timeout: a client that stops reading is cut
// after it, and what waits for it is bounded (waitOutput).
func (st *stream) writer() {
	defer close(st.writerEnd)
	defer func() {
		st.mu.Lock()
		st.drained.Broadcast()
		st.mu.Unlock()
	}()
	last := 0 // frames in the last batch
	for {
		stopping := false
		select {
		case <-st.wake:
		case <-st.stopWriter:
			stopping = true
		}
		if last > 1 {
			// Frames come in bursts: let the other goroutines woken by
			// the same event (the confirms of one group commit, the
			// results of one settle) queue theirs, so that one write
			// carries them all. Not after a lone frame: a yield puts the
			// writer behind whatever else is runnable, which at a low
			// rate only delays the frame (publish->delivery p99).
			runtime.Gosched()
		}
		st.mu.Lock()
		batch := st.queue
		st.queue, st.spare = st.spare[:0], nil // the two slices take turns
		st.mu.Unlock()
		last = len(batch)
		if len(batch) > 0 {
			if st.failedNow() || !st.writeBatch(batch) {
				st.fail()
				st.releaseBatch(batch, false)
				st.drainQueue()
				return
			}
			st.releaseBatch(batch, true)
		}
		if stopping {
			st.mu.Lock()
			rest := len(st.queue)
			st.mu.Unlock()
			if rest == 0 {
				return
			}
		}
	}
}

func (st *stream) failedNow() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.failed
}

// drainQueue drops what is left once the connection broke.
func (st *stream) drainQueue() {
	st.mu.Lock()
	batch := st.queue
	st.queue = nil
	st.mu.Unlock()
	st.releaseBatch(batch, false)
}

func (st *stream) writeBatch(batch []outFrame) bool {
	deadline := time.Now().Add(st.s.writeTTL)
	if len(batch) == 1 {
		_ = st.raw.SetWriteDeadline(deadline)
		err := st.conn.Write(context.Background(), websocket.MessageText, *batch[0].buf)
		_ = st.raw.SetWriteDeadline(time.Time{}) // pings and the close frame keep the library's own
		return err == nil
	}
	st.raw.Cork(deadline)
	for i := range batch {
		if err := st.conn.Write(context.Background(), websocket.MessageText, *batch[i].buf); err != nil {
			st.raw.Uncork()
			return false
		}
	}
	return st.raw.Uncork() == nil
}

func (st *stream) releaseBatch(batch []outFrame, written bool) {
	if written {
		st.s.streams.frames[st.kind][1].Add(uint64(len(batch)))
	}
	st.mu.Lock()
	for i := range batch {
		st.queued -= len(*batch[i].buf)
		if st.sent != nil {
			st.sent(&batch[i])
		}
		putFrameBuf(batch[i].buf)
		batch[i] = outFrame{}
	}
	if cap(batch) <= 1024 {
		st.spare = batch[:0]
	}
	st.drained.Broadcast()
	st.mu.Unlock()
}

// hold marks the stream's reader as held by the server (at the stream's
// limits, or paced by its key's rates) until release is called. A pong
// is read by the reader, so a held stream cannot see one: the pinger
// does not ping it, and a ping that was waiting when a hold began does
// not close it. The client is not idle meanwhile; the server is.
func (st *stream) hold() (release func()) {
	st.holdsBegun.Add(1)
	st.holds.Add(1)
	return func() { st.holds.Add(-1) }
}

// pinger pings every StreamOptions.Ping; a pong that does not come within
// it closes the stream 4008 (unless the reader was held meanwhile).
func (st *stream) pinger() (stop func()) {
	every := st.s.streamOpts.Ping
	var t *time.Timer
	var mu sync.Mutex
	stopped := false
	var tick func()
	tick = func() {
		if st.allowed != nil && !st.allowed() {
			st.closeWith(closePolicy, "the API key was revoked or lost its grant")
			return
		}
		var err error
		if st.holds.Load() == 0 {
			begun := st.holdsBegun.Load()
			ctx, cancel := context.WithTimeout(st.ctx, every)
			err = st.conn.Ping(ctx)
			cancel()
			if err != nil && (st.holds.Load() > 0 || st.holdsBegun.Load() != begun) {
				err = nil // the reader was held: the pong may be behind it
			}
		}
		if err != nil {
			if st.ctx.Err() == nil {
				st.closeWith(closeIdle, "no pong within the ping interval")
			}
			return
		}
		mu.Lock()
		if !stopped {
			t.Reset(every)
		}
		mu.Unlock()
	}
	t = time.AfterFunc(every, tick)
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}

// readFrame reads the next message into buf (reused), answering a binary
// one with an error frame. ok false: the stream is over (the client
// closed, the connection broke, or a frame was over the limit, which the
// library answers with 1009).
func (st *stream) readFrame(buf *[]byte) (ok bool, binary bool) {
	typ, b, err := wsread.Message(st.conn, *buf)
	*buf = b
	if err != nil {
		if errors.Is(err, websocket.ErrMessageTooBig) {
			st.fail() // the library has sent the close frame, 1009
		} else if websocket.CloseStatus(err) != -1 {
			st.closeWith(0, "")
		} else {
			st.fail()
		}
		return false, false
	}
	st.s.streams.frames[st.kind][0].Add(1)
	return true, typ == websocket.MessageBinary
}

// sendError queues an error frame for the frame id (may be "").
func (st *stream) sendError(id string, err error) { st.send(st.errorFrame(id, err)) }

// errorFrame encodes err's error frame for the frame id, logging a
// server fault.
func (st *stream) errorFrame(id string, err error) outFrame {
	p := problemFor(err)
	if p.Status >= 500 && p.Status != 503 {
		st.log.Error().Err(err).Str("stream", st.id).Msg("internal error on a stream")
	}
	b := getFrameBuf()
	*b = appendErrorFrame(*b, id, &p)
	return outFrame{buf: b}
}

// hijackWriter hands websocket.Accept the connection wrapped in a
// corkconn.Conn, with http.Server's deadlines cleared (they were set for the
// upgrade request; a stream keeps its own).
type hijackWriter struct {
	http.ResponseWriter
	conn *corkconn.Conn
}

func (h *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	_ = c.SetDeadline(time.Time{})
	if tc, ok := c.(*net.TCPConn); ok {
		// The kernel's buffer for a stream is bounded as its own queue is:
		// a client that stops reading holds this (doubled by the kernel)
		// and one frame, not the 4 MiB autotuning would give it.
		_ = tc.SetWriteBuffer(streamSendBuffer)
	}
	h.conn = corkconn.New(c)
	return h.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(h.conn, 4<<10)), nil
}
