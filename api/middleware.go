package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"

	"github.com/mqgate/mqgate/core"
)

// contextKey is an unexported pointer type, so no other package can read
// or clash with our context values.
type contextKey struct{ name string }

var (
	requestIDKey = &contextKey{"request-id"}
	loggerKey    = &contextKey{"logger"}
)

// requestIDFrom returns the request id set by withRequestID, or "".
func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// loggerFrom returns the request-scoped logger (carrying the request id),
// or fallback outside a request.
func loggerFrom(ctx context.Context, fallback zerolog.Logger) *zerolog.Logger {
	if l, ok := ctx.Value(loggerKey).(*zerolog.Logger); ok {
		return l
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

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
// problem, then logs the request and records its metrics.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		log := s.log.With().Str("request_id", id).Logger()
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		ctx = context.WithValue(ctx, loggerKey, &log)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}

		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v) // net/http's way to abort a response; not a bug
				}
				log.Error().Interface("panic", v).Bytes("stack", debug.Stack()).
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
			if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
				route = rc.RoutePattern()
			}
			elapsed := time.Since(start)
			s.metrics.observeRequest(r.Method, route, status, elapsed)
			ev := log.Info()
			if status >= 500 {
				ev = log.Warn()
			}
			ev.Str("method", r.Method).Str("path", r.URL.Path).Str("route", route).
				Int("status", status).Int64("bytes", rec.bytes).
				Dur("duration_ms", elapsed).Str("remote", r.RemoteAddr).Msg("request")
		}()
		next.ServeHTTP(rec, r)
	})
}

// requireJSON answers 415 to a POST, PUT or PATCH whose non-empty body is
// not declared as JSON. An empty body passes (PUT /v1/topics/{topic}
// takes an optional one); the handler decides whether it needs one.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			if r.ContentLength != 0 && !isJSONContentType(r.Header.Get("Content-Type")) {
				sendProblem(w, r, newProblem(codeMediaType, "the request body must be application/json"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
