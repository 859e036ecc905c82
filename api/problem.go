package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/core"
)

// Problem is an RFC 9457 problem details answer; every error mqgate
// returns has this shape and the content type application/problem+json.
type Problem struct {
	// Type is a URI naming the kind of problem (urn:mqgate:problem:<code>).
	Type string `json:"type" example:"urn:mqgate:problem:invalid"`
	// Title is a short, fixed summary of the kind of problem.
	Title string `json:"title" example:"Invalid request"`
	// Status is the HTTP status code of this answer.
	Status int `json:"status" example:"400"`
	// Detail explains this occurrence of the problem.
	Detail string `json:"detail,omitempty" example:"the request has invalid fields"`
	// Instance is the request path.
	Instance string `json:"instance,omitempty" example:"/v1/topics/orders/messages"`
	// RequestID matches the X-Request-Id header and the server's log line.
	RequestID string `json:"requestId,omitempty" example:"7f3c9a1e2b4d5f60"`
	// Errors lists the offending fields of a 400 answer.
	Errors []FieldProblem `json:"errors,omitempty"`
	// ViolatedPolicies names the API-key limits a 429 (or 413) answer
	// exceeded, as in its RateLimit-Policy header (docs/quotas.md).
	ViolatedPolicies []string `json:"violatedPolicies,omitempty" example:"pub"`
}

// FieldProblem is one invalid request field.
type FieldProblem struct {
	// Field is the JSON path of the field (e.g. messages[2].body) or the
	// name of the query or path parameter.
	Field string `json:"field" example:"maxMessages"`
	// Message says what is wrong with it.
	Message string `json:"message" example:"must be ≤ 32"`
}

// problemKind is one row of the code → status table.
type problemKind struct {
	status int
	title  string
}

// problemKinds maps each core error code (and the few HTTP-only codes) to
// its status and title; it is the only place that decides statuses.
// ECorrupt is a 500: the server's copy of the message is damaged, the
// request is fine and retrying cannot help (docs/errors.md).
var problemKinds = map[string]problemKind{
	core.EInvalid:       {http.StatusBadRequest, "Invalid request"},
	codeUnauthorized:    {http.StatusUnauthorized, "Unauthorized"},
	core.EForbidden:     {http.StatusForbidden, "Forbidden"},
	core.ENotFound:      {http.StatusNotFound, "Not found"},
	codeNoMethod:        {http.StatusMethodNotAllowed, "Method not allowed"},
	core.EConflict:      {http.StatusConflict, "Conflict"},
	core.ETooLarge:      {http.StatusRequestEntityTooLarge, "Content too large"},
	core.EUnprocessable: {http.StatusUnprocessableEntity, "Unprocessable content"},
	codeMediaType:       {http.StatusUnsupportedMediaType, "Unsupported media type"},
	codeTimeout:         {http.StatusRequestTimeout, "Request timeout"},
	core.ETooMany:       {http.StatusTooManyRequests, "Too many requests"},
	codeRateLimited:     {http.StatusTooManyRequests, "Rate limit exceeded"},
	core.EInternal:      {http.StatusInternalServerError, "Internal error"},
	core.ECorrupt:       {http.StatusInternalServerError, "Stored message is corrupt"},
	core.EUnavailable:   {http.StatusServiceUnavailable, "Service unavailable"},
	core.EUnsupported:   {http.StatusServiceUnavailable, "Not available on this backend"},
}

// Error codes that only the HTTP layer produces.
const (
	codeUnauthorized = "unauthorized"
	codeNoMethod     = "method_not_allowed"
	codeMediaType    = "unsupported_media_type"
	codeTimeout      = "request_timeout"
)

// errBodyTimeout answers a request whose body did not arrive within the
// body read deadline (Options.BodyReadTimeout): 408.
var errBodyTimeout = core.Errorf(codeTimeout, "the request body did not arrive in time")

// invalidError is a 400 carrying every offending field at once, so a
// client fixes its request in one round.
type invalidError struct {
	detail string
	fields []FieldProblem
}

func (e *invalidError) Error() string {
	s := "invalid: " + e.detail
	for _, f := range e.fields {
		s += "; " + f.Field + ": " + f.Message
	}
	return s
}

// fieldErrors collects field problems while a request is checked.
type fieldErrors []FieldProblem

// set makes msg the problem of field, replacing an earlier one.
func (fe *fieldErrors) set(field, msg string) {
	for i, f := range *fe {
		if f.Field == field {
			(*fe)[i].Message = msg
			return
		}
	}
	*fe = append(*fe, FieldProblem{Field: field, Message: msg})
}

func (fe *fieldErrors) add(field, msg string) {
	for _, f := range *fe {
		if f.Field == field {
			return // the first problem with a field is the one to fix
		}
	}
	*fe = append(*fe, FieldProblem{Field: field, Message: msg})
}

// err returns nil when nothing was added.
func (fe fieldErrors) err() error {
	if len(fe) == 0 {
		return nil
	}
	return &invalidError{detail: "the request has invalid fields", fields: fe}
}

// problemFor turns any error into the Problem to send. Domain errors keep
// their message; anything else is internal and gets a generic one.
func problemFor(err error) Problem {
	var inv *invalidError
	if errors.As(err, &inv) {
		p := newProblem(core.EInvalid, inv.detail)
		p.Errors = inv.fields
		return p
	}
	var de *core.Error
	if errors.As(err, &de) {
		if _, ok := problemKinds[de.Code]; ok && de.Code != core.EInternal {
			msg := de.Message
			if de.Code == core.EUnavailable {
				// "the store could not commit: write /data/mqgate.db: no
				// space left on device": the cause is for the log, never
				// for clients (no file paths).
				msg, _, _ = strings.Cut(msg, ": ")
				msg += "; retry later"
			}
			p := newProblem(de.Code, msg)
			if de.Field != "" {
				p.Detail = "the request has invalid fields"
				p.Errors = []FieldProblem{{Field: de.Field, Message: de.Message}}
			}
			return p
		}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return newProblem(core.ETooLarge, "the request body exceeds the limit")
	}
	return newProblem(core.EInternal, "an internal error occurred; quote the request id when reporting it")
}

func newProblem(code, detail string) Problem {
	k, ok := problemKinds[code]
	if !ok {
		code, k = core.EInternal, problemKinds[core.EInternal]
	}
	return Problem{Type: "urn:mqgate:problem:" + code, Title: k.title, Status: k.status, Detail: detail}
}

// writeProblem answers err as problem+json. Internal errors are logged
// with the request id (the log line is the only place their text goes).
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	p := problemFor(err)
	switch {
	case p.Status == http.StatusServiceUnavailable:
		// The cause (which may name files) goes to the log only.
		log := loggerFrom(r.Context(), s.log)
		log.Warn().Err(err).Str("method", r.Method).Str("path", r.URL.Path).Msg("unavailable")
	case p.Status >= 500:
		log := loggerFrom(r.Context(), s.log)
		log.Error().Err(err).Str("method", r.Method).Str("path", r.URL.Path).Msg("internal error")
	case p.Status == http.StatusRequestTimeout:
		w.Header().Set("Connection", "close") // the rest of the body may still come
	}
	sendProblem(w, r, p)
}

// unsupportedType is the problem type of a capability the backend does
// not offer (core.Unsupported): 503 without Retry-After.
const unsupportedType = "urn:mqgate:problem:" + core.EUnsupported

// retryAfterSeconds is the Retry-After of a 429 or 503: long polls and a
// store that cannot commit are both worth retrying after a short pause.
const retryAfterSeconds = "1"

// sendProblem writes p; it is also used by middleware that has no Server.
func sendProblem(w http.ResponseWriter, r *http.Request, p Problem) {
	p.Instance = r.URL.Path
	p.RequestID = requestIDFrom(r.Context())
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("X-Content-Type-Options", "nosniff")
	if (p.Status == http.StatusTooManyRequests || p.Status == http.StatusServiceUnavailable) && h.Get("Retry-After") == "" &&
		p.Type != unsupportedType { // retrying a missing capability does not help
		h.Set("Retry-After", retryAfterSeconds) // RFC 9110 §10.2.3: when to try again
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeUpsert answers a PUT that creates or replaces: 201 when it
// created the resource, 200 when it replaced one.
func writeUpsert(w http.ResponseWriter, created bool, v any) {
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, v)
}

// writeJSON answers v with status. The body is encoded into a pooled
// buffer first and written with its Content-Length in one Write: encoding
// straight into the ResponseWriter sent a 32-message receive answer
// (about 40 KiB) as a dozen chunked writes, each a syscall.
//
// The encoder is github.com/segmentio/encoding/json, a drop-in
// replacement for encoding/json with the same output byte for byte
// (TestAnswerEncodingMatchesStdlib): it escapes strings several bytes at
// a time, and message bodies are most of what mqgate encodes; a receive
// answer encodes about 3x faster than with encoding/json.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := encodeBufs.Get().(*bytes.Buffer)
	defer putEncodeBuf(buf)
	buf.Reset()
	if err := fastjson.NewEncoder(buf).Encode(v); err != nil {
		// Our own DTOs always encode; this is a bug, not a client error.
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(newProblem(core.EInternal, "the answer could not be encoded"))
		return
	}
	writeEncoded(w, status, buf.Bytes())
}

// writeAppended answers with status and the JSON body that appendBody
// appends (answer.go): writeJSON for the answers encoded by hand.
func writeAppended[T any](w http.ResponseWriter, status int, appendBody func([]byte, T) []byte, v T) {
	buf := encodeBufs.Get().(*bytes.Buffer)
	defer putEncodeBuf(buf)
	buf.Reset()
	buf.Write(appendBody(buf.AvailableBuffer(), v))
	writeEncoded(w, status, buf.Bytes())
}

// writeEncoded writes an encoded JSON answer in one Write, with its
// Content-Length.
func writeEncoded(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	// Both values and the length's digits share one allocation (Set and
	// Itoa made three per answer, the ack's hot path). The slices are
	// capped, so an Add elsewhere copies instead of writing into them.
	jh := new(jsonHeaders)
	d := strconv.AppendInt(jh.digits[:0], int64(len(body)), 10)
	jh.vals = [2]string{"application/json", unsafe.String(&d[0], len(d))} // digits never change after
	h["Content-Type"] = jh.vals[0:1:1]
	h["Content-Length"] = jh.vals[1:2:2]
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// jsonHeaders backs writeEncoded's two header values.
type jsonHeaders struct {
	vals   [2]string
	digits [20]byte
}

// encodeBufs recycles writeJSON's buffers. A buffer grown past
// maxPooledBuf (a large browse or receive answer) is dropped rather than
// pinned in the pool.
var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuf = 1 << 20

func putEncodeBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuf {
		encodeBufs.Put(b)
	}
}
