package api

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

// contextKey is an unexported pointer type, so no other package can read
// or clash with our context values.
type contextKey struct{ name string }

// requestKey holds the request's *requestState: one context value (and
// one allocation) per request for everything the middleware tracks.
var requestKey = &contextKey{"request"}

// requestState is what instrument keeps per request: the id, and the
// recorder of what the handler wrote. They share one allocation, which is
// also the request's context: it embeds the parent and answers requestKey
// itself, so no context.WithValue is allocated per request.
type requestState struct {
	context.Context
	rec statusRecorder
	id  string
	// idHeader is X-Request-Id's value slice, in the same allocation.
	idHeader [1]string
	key      string // the API key's name once authorize accepted it ("" when keys are off)
	// bodyTimeout bounds reading the request body (Options.BodyReadTimeout).
	bodyTimeout time.Duration
}

// Value answers requestKey with st, anything else from the parent.
func (st *requestState) Value(key any) any {
	if key == requestKey {
		return st
	}
	return st.Context.Value(key)
}

// requestIDFrom returns the request id set by instrument, or "".
func requestIDFrom(ctx context.Context) string {
	if st, ok := ctx.Value(requestKey).(*requestState); ok {
		return st.id
	}
	return ""
}

// loggerFrom returns a logger carrying the request id, built on demand
// from fallback (the server's logger): only error paths log besides the
// request line, so most requests never pay for a child logger.
func loggerFrom(ctx context.Context, fallback zerolog.Logger) *zerolog.Logger {
	if id := requestIDFrom(ctx); id != "" {
		l := fallback.With().Str("request_id", id).Logger()
		return &l
	}
	return &fallback
}

// validRequestID accepts a caller's X-Request-Id only when it is short and
// made of safe characters, so it can go into logs and headers verbatim.
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns 24 random hex digits. Request ids need to be
// unique, not secret: math/rand/v2's per-thread ChaCha8 source costs no
// system call and no lock, unlike crypto/rand.
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	var out [24]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}

// statusRecorder remembers what a handler wrote, for the log line, the
// metrics and the recoverer. Unwrap lets http.ResponseController reach
// the real writer (flush, per-request deadlines for long polls).
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		f.Flush()
	}
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument is the outermost middleware: it assigns the request id, sets
// X-Request-Id before anything else can write, recovers panics into a 500
// problem, then logs the request and records its metrics. It is on every
// request's path, so it allocates once (requestState, also the context)
// besides the request copy WithContext makes.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &requestState{Context: r.Context(), rec: statusRecorder{ResponseWriter: w}, bodyTimeout: s.bodyTimeout}
		st.id = r.Header.Get("X-Request-Id")
		if !validRequestID(st.id) {
			st.id = newRequestID()
		}
		// Assigned, not Set, and the value slice is part of st: Set
		// would allocate a fresh one-element slice per request.
		st.idHeader[0] = st.id
		w.Header()["X-Request-Id"] = st.idHeader[:]
		r = r.WithContext(st)
		rec := &st.rec

		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v) // net/http's way to abort a response; not a bug
				}
				loggerFrom(r.Context(), s.log).Error().Interface("panic", v).Bytes("stack", debug.Stack()).
					Str("method", r.Method).Str("path", r.URL.Path).Msg("handler panicked")
				if rec.status == 0 {
					sendProblem(rec, r, newProblem(core.EInternal, "an internal error occurred; quote the request id when reporting it"))
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			route := "unmatched"
			if rc := chi.RouteContext(r.Context()); rc != nil {
				if p := routePattern(rc); p != "" { // joins strings: once
					route = p
				}
			}
			elapsed := time.Since(start)
			s.metrics.observeRequest(r.Method, route, status, elapsed)
			if s.noAccess && status < 500 {
				return // --access-log=false: only failures are logged
			}
			ev := s.log.Info()
			if status >= 500 {
				ev = s.log.Warn()
			}
			// request_id first, where a child logger's context would put it.
			if st.key != "" {
				ev = ev.Str("key", st.key) // the key's name, never its secret
			}
			ev.Str("request_id", st.id).Str("method", r.Method).Str("path", r.URL.Path).Str("route", route).
				Int("status", status).Int64("bytes", rec.bytes).
				Dur("duration_ms", elapsed).Str("remote", r.RemoteAddr).Msg("request")
		}()
		next.ServeHTTP(rec, r)
	})
}

// requireJSON answers 415 to a POST, PUT or PATCH whose non-empty body is
// not declared as JSON, or that has a Content-Encoding other than identity. An empty body passes (PUT /v1/topics/{topic}
// takes an optional one); the handler decides whether it needs one.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			if r.ContentLength != 0 && !isJSONContentType(r.Header.Get("Content-Type")) {
				sendProblem(w, r, newProblem(codeMediaType, "the request body must be application/json"))
				return
			}
			// No compressed bodies: a gzip body is not "malformed JSON",
			// it is a coding this server does not take (RFC 9110 §15.5.16).
			if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
				w.Header().Set("Accept-Encoding", "identity")
				sendProblem(w, r, newProblem(codeMediaType, "Content-Encoding "+ce+" is not supported; send the body uncompressed"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// routePattern is rc.RoutePattern() without its allocations on every
// request (a join and a wildcard replace; 1.3% of an ack's server CPU):
// the joined pattern is kept by the patterns it joins, which are the
// route tree's, so the cache is as bounded as the routes.
func routePattern(rc *chi.Context) string {
	var k routeKey
	if len(rc.RoutePatterns) > len(k) {
		return rc.RoutePattern()
	}
	copy(k[:], rc.RoutePatterns)
	if p, ok := routePatterns.Load(k); ok {
		return p.(string)
	}
	p := rc.RoutePattern()
	routePatterns.Store(k, p)
	return p
}

// routeKey holds a request's chi route patterns (RoutePatterns), which
// are at most 2 deep in routes(); deeper ones are joined each time.
type routeKey [3]string

// routePatterns maps routeKey to the joined pattern (sync.Map: written
// once per route, read on every request).
var routePatterns sync.Map
