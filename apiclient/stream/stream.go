package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	// The frames are most of a stream client's work: a faster drop-in for
	// encoding/json, so a benchmark's load generator is not what it measures.
	json "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/internal/corkconn"
	"github.com/mqgate/mqgate/internal/wsread"
)

// Protocol is the subprotocol this package speaks.
const Protocol = "mqgate.v1"

// Client opens streams on one server.
type Client struct {
	// BaseURL is the server, e.g. http://127.0.0.1:8080 (https for TLS).
	BaseURL string
	// Key, when set, is sent as Authorization: Bearer on the upgrade.
	Key string
	// HTTPClient makes the upgrade request (default: http.DefaultClient).
	HTTPClient *http.Client
	// Header is added to the upgrade request (e.g. User-Agent).
	Header http.Header

	once    sync.Once
	upgrade *http.Client // upgradeClient's
}

// HTTPError is a refused upgrade: the server's HTTP status and its
// problem+json body (nil when the body was not one).
type HTTPError struct {
	StatusCode int
	Problem    *apiclient.Problem
	// RetryAfter is the 429 answer's Retry-After, 0 when absent.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("stream refused: HTTP %d", e.StatusCode)
	if e.Problem != nil {
		msg += " " + e.Problem.Title
		if e.Problem.Detail != nil {
			msg += ": " + *e.Problem.Detail
		}
	}
	return msg
}

// ProblemError is the server's error frame for one frame the client sent:
// an RFC 9457 problem, as a REST call would have got. The stream goes on.
type ProblemError struct {
	Problem apiclient.Problem
}

func (e *ProblemError) Error() string {
	msg := fmt.Sprintf("%d %s", e.Problem.Status, e.Problem.Title)
	if e.Problem.Detail != nil {
		msg += ": " + *e.Problem.Detail
	}
	if e.Problem.Errors != nil {
		for _, fe := range *e.Problem.Errors {
			msg += fmt.Sprintf("; %s: %s", fe.Field, fe.Message)
		}
	}
	return msg
}

// ClosedError is how a stream ended when the client did not end it: the
// close frame's code and reason (docs/streaming.md lists them), or Code -1
// when the connection dropped without one (Err says how).
type ClosedError struct {
	Code   int
	Reason string
	Err    error
}

func (e *ClosedError) Error() string {
	if e.Code < 0 {
		return fmt.Sprintf("stream ended: %v", e.Err)
	}
	return fmt.Sprintf("stream closed by the server: %d %s", e.Code, e.Reason)
}

func (e *ClosedError) Unwrap() error { return e.Err }

// ErrClosed is the error of everything waiting on a stream the client
// closed.
var ErrClosed = errors.New("stream closed")

// ErrNotConfirmed wraps the error of a publish whose stream ended before
// its confirm: the message may or may not be stored; resend it with the
// same deduplicationId to be sure.
var ErrNotConfirmed = errors.New("publish not confirmed: it may or may not be stored; resend it with the same deduplicationId")

// Future is the answer to one frame, matched by its id.
type Future[T any] struct {
	done chan struct{}
	val  T
	err  error
}

func newFuture[T any]() *Future[T] { return &Future[T]{done: make(chan struct{})} }

func (f *Future[T]) complete(v T, err error) {
	f.val, f.err = v, err
	close(f.done)
}

// Done is closed once the answer (or the stream's end) is in.
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// Result is the answer once Done is closed (the zero value and nil before).
func (f *Future[T]) Result() (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	default:
		var zero T
		return zero, nil
	}
}

// Wait waits for the answer or for ctx. A ctx that ends only stops the
// wait: the frame was sent, and its answer still comes to the future.
func (f *Future[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// frame is every frame the server sends, both streams' fields together.
type frame struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Protocol string `json:"protocol"`
	Stream   string `json:"stream"`
	Group    string `json:"group"`
	Topic    string `json:"topic"`

	MaxOutstandingMessages int `json:"maxOutstandingMessages"`
	MaxOutstandingBytes    int `json:"maxOutstandingBytes"`
	InvisibleSeconds       int `json:"invisibleSeconds"`
	MaxUnconfirmedMessages int `json:"maxUnconfirmedMessages"`
	MaxUnconfirmedBytes    int `json:"maxUnconfirmedBytes"`
	PingSeconds            int `json:"pingSeconds"`

	Messages []apiclient.ReceivedMessage `json:"messages"`
	Empty    *struct {
		Reason string `json:"reason"`
	} `json:"empty"`
	// Results are handle results (consume) or publish results (publish).
	Results json.RawMessage    `json:"results"`
	Problem *apiclient.Problem `json:"problem"`

	// fastResults: the fast path (fastframe.go) decoded the results
	// already, into handles (a results frame) or confirms (a confirm).
	fastResults bool
	handles     []apiclient.HandleResult
	confirms    []apiclient.PublishResult
}

// conn is what both streams share: the socket, the reader goroutine and
// the answers awaited by id.
type conn struct {
	ws *websocket.Conn
	// cork is ws's socket when the upgrade dialed it (cork.go), else nil.
	cork *corkconn.Conn
	// ctx lives as long as the stream: coder/websocket closes the
	// connection when a Read's or Write's context ends, so user contexts
	// never reach those calls.
	ctx    context.Context
	cancel context.CancelFunc
	open   frame

	nextID atomic.Uint64

	mu      sync.Mutex
	pending map[string]func(*frame, error)
	closing bool
	err     error         // why the stream ended, set before done is closed
	done    chan struct{} // closed when the reader has ended
	// lastErr is the last error frame that matched no id (a malformed
	// frame's, say).
	lastErr *ProblemError

	// The writer's queue, under mu: encoded frames, their bytes, and the
	// two slices that take turns.
	queue, spare [][]byte
	queued       int
	writing      bool       // the writer holds a batch
	drained      *sync.Cond // the writer took a batch, or the stream ended
	wake         chan struct{}
	writerEnd    chan struct{}
	// Gathered acks (ackgather.go), under mu: gathers are the frames the
	// queue's placeholders (nil entries) stand for, in queue order;
	// gathering is the last of them while acks may still join it.
	gathers   []*ackGather
	gathering *ackGather

	// onFrame handles the frames that answer no id (messages, empty).
	onFrame func(*frame)
	// onEnd runs once, after every pending answer has been failed.
	onEnd func(error)
}

// dial upgrades path?query on c's server and waits for the open frame.
func (c *Client) dial(ctx context.Context, path string, q url.Values) (*conn, error) {
	u := strings.TrimRight(c.BaseURL, "/") + path
	if enc := q.Encode(); enc != "" {
		u += "?" + enc
	}
	h := http.Header{}
	for k, vs := range c.Header {
		h[k] = append([]string(nil), vs...)
	}
	if c.Key != "" {
		h.Set("Authorization", "Bearer "+c.Key)
	}
	slot := &corkSlot{}
	ws, resp, err := websocket.Dial(context.WithValue(ctx, corkSlotKey{}, slot), u, &websocket.DialOptions{
		HTTPClient: c.upgradeClient(), HTTPHeader: h, Subprotocols: []string{Protocol},
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, refused(resp)
		}
		return nil, err
	}
	if ws.Subprotocol() != Protocol {
		ws.CloseNow()
		return nil, fmt.Errorf("stream: the server chose subprotocol %q, not %s", ws.Subprotocol(), Protocol)
	}
	// Deliveries are bounded by the stream's byte limit, not by a frame
	// size this side could guess.
	ws.SetReadLimit(-1)
	// The open frame comes first; reading it under ctx would close the
	// socket when ctx ends, so the wait is on a stream-lived read.
	lctx, cancel := context.WithCancel(context.Background())
	s := &conn{ws: ws, cork: slot.get(), ctx: lctx, cancel: cancel, pending: map[string]func(*frame, error){}, done: make(chan struct{}),
		wake: make(chan struct{}, 1), writerEnd: make(chan struct{})}
	s.drained = sync.NewCond(&s.mu)
	got := make(chan error, 1)
	go func() {
		_, b, err := ws.Read(lctx)
		if err == nil {
			err = json.Unmarshal(b, &s.open)
			if err == nil && s.open.Type != "open" {
				err = fmt.Errorf("stream: first frame is %q, not open", s.open.Type)
			}
		}
		got <- err
	}()
	select {
	case err = <-got:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		ws.CloseNow()
		return nil, err
	}
	return s, nil
}

// refused turns a non-101 upgrade answer into an *HTTPError.
func refused(resp *http.Response) error {
	e := &HTTPError{StatusCode: resp.StatusCode}
	if resp.Body != nil {
		var p apiclient.Problem
		dec := json.NewDecoder(resp.Body)
		if dec.Decode(&p) == nil && p.Status != 0 {
			e.Problem = &p
		}
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// maxKeptReadBuf is the largest read buffer the reader keeps for the
// next frame.
const maxKeptReadBuf = 1 << 20

// maxQueued is about the most encoded bytes waiting for the writer; a
// send beyond it waits (the publish window bounds publishes well below).
const maxQueued = 4 << 20

// testHookBatch, when set (by tests, before a stream starts), runs on
// the writer once it holds a batch, before writing it: a test holds the
// writer busy with it.
var testHookBatch func()

// start runs the reader and the writer; onFrame and onEnd must be set.
func (s *conn) start() {
	go s.read()
	go s.writer()
}

// writer writes the queued frames, each batch in one write when the
// socket is corkable, until the stream ends.
func (s *conn) writer() {
	defer close(s.writerEnd)
	last := 0 // frames in the last batch
	for {
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			return
		}
		if last > 1 {
			// In a burst, let the goroutines woken by the same event (a
			// messages frame taken by several workers) queue theirs into
			// this batch; not after a lone frame, which the yield would
			// only delay (api/stream.go's writer does the same).
			runtime.Gosched()
		}
		s.mu.Lock()
		batch, gathers := s.queue, s.gathers
		s.queue, s.spare = s.spare[:0], nil
		s.gathers, s.gathering = nil, nil
		s.writing = len(batch) > 0
		s.mu.Unlock()
		last = len(batch)
		if len(batch) == 0 {
			continue
		}
		if len(gathers) > 0 {
			s.fillGathered(batch, gathers)
		}
		if testHookBatch != nil {
			testHookBatch()
		}
		if !s.writeBatch(batch) {
			// The library has closed the connection: the reader ends and
			// fails every pending answer.
			s.ws.CloseNow()
			s.releaseBatch(batch)
			return
		}
		s.releaseBatch(batch)
	}
}

func (s *conn) writeBatch(batch [][]byte) bool {
	// A write stuck on a peer that stopped reading must end with the
	// stream: on a corkable socket end's write deadline does that, so the
	// writes need no context (the library arms a context.AfterFunc per
	// write for one that can end); otherwise the stream's context does.
	ctx := s.ctx
	if s.cork != nil {
		ctx = context.Background()
	}
	if s.cork == nil || len(batch) == 1 {
		for _, b := range batch {
			if b != nil && s.ws.Write(ctx, websocket.MessageText, b) != nil {
				return false
			}
		}
		return true
	}
	s.cork.Cork(time.Time{})
	for _, b := range batch {
		if b == nil {
			continue // a gathered ack frame whose stream ended (fillGathered)
		}
		if s.ws.Write(ctx, websocket.MessageText, b) != nil {
			_ = s.cork.Uncork()
			return false
		}
	}
	return s.cork.Uncork() == nil
}

func (s *conn) releaseBatch(batch [][]byte) {
	s.mu.Lock()
	for i := range batch {
		s.queued -= len(batch[i])
		batch[i] = nil
	}
	if cap(batch) <= 1024 {
		s.spare = batch[:0]
	}
	s.writing = false
	s.drained.Broadcast()
	s.mu.Unlock()
}

// flush waits until the writer has written everything queued (or the
// stream ended).
func (s *conn) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for (len(s.queue) > 0 || s.writing) && s.ctx.Err() == nil {
		s.drained.Wait()
	}
}

// read reads and dispatches the server's frames until the stream ends.
// One buffer serves every frame: both decoders copy what they keep.
func (s *conn) read() {
	var err error
	var buf []byte
	for {
		var typ websocket.MessageType
		typ, buf, err = wsread.Message(s.ws, buf)
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			continue
		}
		var f frame
		ok := fastFrame(buf, &f) || json.Unmarshal(buf, &f) == nil
		if cap(buf) > maxKeptReadBuf {
			buf = nil // one large frame does not pin its buffer for the stream's life
		}
		if !ok {
			continue // not the protocol; nothing to match it to
		}
		switch f.Type {
		case "messages", "empty":
			s.onFrame(&f)
		case "results", "confirm", "flow", "error":
			s.answer(&f)
		}
	}
	s.end(err)
}

// answer completes the pending frame f answers.
func (s *conn) answer(f *frame) {
	s.mu.Lock()
	cb, ok := s.pending[f.ID]
	delete(s.pending, f.ID)
	if !ok && f.Type == "error" && f.Problem != nil {
		s.lastErr = &ProblemError{Problem: *f.Problem}
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	if f.Type == "error" {
		p := apiclient.Problem{Status: 0, Title: "error frame without a problem"}
		if f.Problem != nil {
			p = *f.Problem
		}
		cb(nil, &ProblemError{Problem: p})
		return
	}
	cb(f, nil)
}

// end records why the stream ended and fails every pending answer.
func (s *conn) end(readErr error) {
	s.mu.Lock()
	var err error
	switch {
	case s.closing:
		err = ErrClosed
	case websocket.CloseStatus(readErr) != -1:
		var ce websocket.CloseError
		errors.As(readErr, &ce)
		err = &ClosedError{Code: int(ce.Code), Reason: ce.Reason, Err: readErr}
	default:
		err = &ClosedError{Code: -1, Err: readErr}
	}
	s.err = err
	pend, gathers := s.pending, s.gathers
	s.pending = nil
	s.queue, s.gathers, s.gathering = nil, nil, nil
	s.drained.Broadcast()
	s.mu.Unlock()
	for _, cb := range pend {
		cb(nil, err)
	}
	for _, g := range gathers {
		g.fail(err) // acks gathered that the writer never took
	}
	s.onEnd(err)
	s.cancel()
	if s.cork != nil {
		// A batch write stuck on a peer that stopped reading returns now.
		_ = s.cork.Conn.SetWriteDeadline(time.Now())
	}
	<-s.writerEnd
	close(s.done)
}

// newID is the id of the next frame sent.
func (s *conn) newID() string { return strconv.FormatUint(s.nextID.Add(1), 36) }

// send registers cb under a new id, then writes the frame build(id)
// makes. cb is called exactly once: with the answer, or with the error
// that kept it from coming.
func (s *conn) send(build func(id string) any, cb func(*frame, error)) error {
	id := s.newID()
	b, err := json.Marshal(build(id))
	if err != nil {
		return err
	}
	return s.sendRaw(id, b, cb)
}

func (s *conn) sendRaw(id string, b []byte, cb func(*frame, error)) error {
	s.mu.Lock()
	if err := s.roomLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	// Answered, or failed by the reader's end if the write does not go
	// out: cb is called exactly once either way.
	s.pending[id] = cb
	s.queue = append(s.queue, b)
	s.gathering = nil // an ack after this frame does not pass it
	s.queued += len(b)
	s.mu.Unlock()
	s.wakeWriter()
	return nil
}

// roomLocked waits while the queue is over maxQueued; an error when the
// stream has ended or is closing, and nothing may be queued.
func (s *conn) roomLocked() error {
	for s.queued > maxQueued && s.pending != nil && !s.closing {
		s.drained.Wait()
	}
	if s.pending == nil {
		return s.err
	}
	if s.closing {
		return ErrClosed
	}
	return nil
}

func (s *conn) wakeWriter() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// sendSettle sends a settlement frame of its own; done gets its results.
func (s *conn) sendSettle(f settleFrame, done func([]apiclient.HandleResult, error)) error {
	id := s.newID()
	f.ID = id
	return s.sendRaw(id, encodeSettleFrame(&f), func(a *frame, err error) { done(settleResults(a, err)) })
}

// Done is closed when the stream has ended; Err then says why.
func (s *conn) Done() <-chan struct{} { return s.done }

// Err is why the stream ended (ErrClosed after Close), nil while it runs.
func (s *conn) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// close sends a normal close frame (1000), waits for the server's, and
// for the reader to end. Everything still pending fails with ErrClosed.
func (s *conn) close() error {
	s.mu.Lock()
	ended := s.pending == nil
	s.closing = true
	s.mu.Unlock()
	if ended {
		<-s.done
		return nil
	}
	s.flush() // what was sent before Close goes out before the close frame
	err := s.ws.Close(websocket.StatusNormalClosure, "")
	s.cancel()
	<-s.done
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// LastError is the last error frame that answered no frame of this
// client's (one with no id, e.g. for a frame the server could not parse).
func (s *conn) LastError() *ProblemError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// StreamID is the server's name of the stream (the open frame's stream).
func (s *conn) StreamID() string { return s.open.Stream }
