package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mqgate/mqgate/core"
)

// Body limits. A message body may be 4 MiB of bytes (core.MaxMessageSize);
// sent as bodyBase64 it grows by 4/3, so the JSON limit leaves room for a
// full-size base64 body plus the envelope. The decoded sizes are checked
// against core.MaxMessageSize separately.
const (
	maxJSONOverhead = 1 << 20
	maxPublishJSON  = core.MaxMessageSize/3*4 + 4 + maxJSONOverhead
	maxSmallJSON    = 64 << 10 // topic config and other small bodies
)

// strictJSON is the one set of decoding rules every request body goes
// through (github.com/go-json-experiment/json, the encoding/json/v2
// prototype), configured once:
//   - member names match exactly (no case folding: {"BODY":…} is an
//     unknown member, not body);
//   - unknown members, duplicate names, invalid UTF-8 (lone surrogates
//     included) and anything after the value are errors;
//   - JSON null is refused except where the type says a field is nullable
//     (a pointer without omitempty, e.g. consumeFrom.timestamp), checked by
//     rejectNulls before decoding.
//
// What this accepts the OpenAPI document describes
// (additionalProperties: false on every request schema; see
// openapi_rules_test.go).
var strictJSON = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsonv2.MatchCaseInsensitiveNames(false),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)

// decodeJSON reads one JSON value from r's body into dst under strictJSON.
// A body over limit answers 413, one that stops arriving 408 (the body
// read deadline), one shorter than its Content-Length 400. allowEmpty
// lets a missing body decode as {} (PUT /v1/topics/{topic}).
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any, allowEmpty bool) error {
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBufs.Put(buf)
		}
	}()
	buf.Reset()
	if n := r.ContentLength; n > 0 && n < limit {
		buf.Grow(int(n) + bytes.MinRead) // one read, and room to see EOF
	}
	// The body read deadline: a body that stops arriving answers 408 in
	// bounded time; cleared once read, so a long poll's wait is not cut.
	deadline := false
	if st, ok := r.Context().Value(requestKey).(*requestState); ok && st.bodyTimeout > 0 && r.ContentLength != 0 {
		deadline = setReadDeadline(w, time.Now().Add(st.bodyTimeout))
	}
	// A declared length within the limit is already a bound (net/http's
	// body stops there); the MaxBytesReader, an allocation and a layer
	// of reads, guards the bodies without one and those declared larger.
	body := r.Body
	if r.ContentLength < 0 || r.ContentLength > limit {
		body = http.MaxBytesReader(w, r.Body, limit)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		abandonBody(w)
		return bodyReadError(err)
	}
	if deadline {
		setReadDeadline(w, time.Time{})
	}
	return decodeBytes(buf.Bytes(), dst, allowEmpty)
}

// decodePublish decodes a single-message publish body: decodeJSON, named
// for the hot path it is (no reflection-heavy fallback any more; one
// decoder serves every body).
func decodePublish(w http.ResponseWriter, r *http.Request, limit int64, req *PublishRequest) error {
	return decodeJSON(w, r, limit, req, false)
}

// decodeBytes decodes a whole body b into dst, a zero value, under
// strictJSON; the plainest publish and ack bodies take the fast path
// (decode_fast.go), which decodes them exactly as strictJSON would.
func decodeBytes(b []byte, dst any, allowEmpty bool) error {
	if len(bytes.TrimLeft(b, " \t\r\n")) == 0 {
		if allowEmpty {
			return nil
		}
		return core.Errorf(core.EInvalid, "the request body is empty; a JSON object is required")
	}
	if fastDecode(b, dst) {
		return nil
	}
	// Most bodies have no null at all: one memchr-speed search spares them
	// the token scan.
	if bytes.Contains(b, nullLiteral) {
		if err := rejectNulls(b, nullablePaths(reflect.TypeOf(dst))); err != nil {
			return err
		}
	}
	if err := jsonv2.Unmarshal(b, dst, strictJSON); err != nil {
		return jsonError(err)
	}
	return nil
}

var nullLiteral = []byte("null")

// setReadDeadline is http.ResponseController's SetReadDeadline without
// its allocation on the publish path: it unwraps w (statusRecorder and any
// other middleware writer) down to net/http's writer, HTTP/1 or HTTP/2,
// and sets the connection's read deadline. It reports false when no
// writer on the way supports deadlines (httptest.ResponseRecorder).
func setReadDeadline(w http.ResponseWriter, t time.Time) bool {
	for {
		switch x := w.(type) {
		case interface{ SetReadDeadline(time.Time) error }:
			return x.SetReadDeadline(t) == nil
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return false
		}
	}
}

// abandonBody gives up on a request body that failed to read (too slow,
// too large, cut short): the connection closes after the answer, and its
// read deadline is left in the past. net/http reads what is left of an
// unread body after the handler, to reuse the connection; with no
// deadline that read waited for a stalled client forever, so the
// connection outlived its 408 and the idle timeout, and held up a
// graceful shutdown until --shutdown-timeout. An expired deadline makes
// that read fail at once, and Connection: close ends the connection.
func abandonBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	setReadDeadline(w, time.Unix(1, 0))
}

// bodyReadError turns a failed body read into the answer: 413 over the
// limit, 408 when the body read deadline passed, 400 when the body ended
// before its Content-Length.
func bodyReadError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return core.Errorf(core.ETooLarge, "the request body exceeds %d bytes", mbe.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errBodyTimeout
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return core.Errorf(core.EInvalid, "the request body ended before its Content-Length")
	}
	return core.Errorf(core.EInvalid, "reading the request body: the connection failed")
}

// jsonError turns a decoding error into a domain error a client can act
// on, naming the field (as a path like messages[2].body) where there is one.
func jsonError(err error) error {
	var (
		syn *jsontext.SyntacticError
		sem *jsonv2.SemanticError
	)
	switch {
	case errors.As(err, &syn):
		field := fieldFromPointer(syn.JSONPointer)
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			return core.FieldError(field, "appears more than once")
		case strings.Contains(syn.Err.Error(), "surrogate"),
			strings.Contains(syn.Err.Error(), "invalid UTF-8"):
			if field == "" {
				return core.Errorf(core.EInvalid, "the request body is not valid UTF-8")
			}
			return core.FieldError(field, "is not valid UTF-8 (lone surrogates included)")
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			return core.Errorf(core.EInvalid, "malformed JSON: unexpected end of input")
		}
		return core.Errorf(core.EInvalid, "malformed JSON at byte %d: %v", syn.ByteOffset, syn.Err)
	case errors.As(err, &sem):
		field := fieldFromPointer(sem.JSONPointer)
		switch {
		case errors.Is(sem.Err, jsonv2.ErrUnknownName):
			return core.FieldError(field, "unknown field (names are case-sensitive)")
		case field == "":
			return core.Errorf(core.EInvalid, "the request body must be a JSON object")
		case sem.GoType == reflect.TypeFor[time.Time]():
			return core.FieldError(field, "must be an RFC 3339 time, e.g. 2026-01-02T15:04:05.000Z")
		case sem.GoType != nil:
			return core.FieldError(field, "must be %s", jsonTypeName(sem.GoType))
		}
		return core.FieldError(field, "is invalid")
	}
	return core.Errorf(core.EInvalid, "malformed JSON: %v", err)
}

// fieldFromPointer turns a JSON pointer (/messages/2/body) into the field
// path the API reports (messages[2].body).
func fieldFromPointer(p jsontext.Pointer) string {
	var sb strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && sb.Len() > 0 {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(tok)
	}
	return sb.String()
}

func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return fmt.Sprintf("of type %s", t.Kind())
}

// rejectNulls scans b for JSON nulls and refuses the first one whose
// place (a path with array indices as *) is not in allowed.
func rejectNulls(b []byte, allowed map[string]bool) error {
	dec := jsontext.NewDecoder(bytes.NewReader(b), strictJSON)
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil // syntax errors are the decoder's to report, with its wording
		}
		if tok.Kind() != 'n' {
			continue
		}
		ptr := dec.StackPointer()
		if allowed[wildcardPath(ptr)] {
			continue
		}
		field := fieldFromPointer(ptr)
		if field == "" {
			return core.Errorf(core.EInvalid, "the request body must be a JSON object")
		}
		return core.FieldError(field, "must not be null")
	}
}

// wildcardPath is fieldFromPointer with every array index as *.
func wildcardPath(p jsontext.Pointer) string {
	var parts []string
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil {
			tok = "*"
		}
		parts = append(parts, tok)
	}
	return strings.Join(parts, ".")
}

// nullablePaths lists the places in a request type where JSON null is
// allowed: pointer fields without omitempty (the server itself sends null
// there, e.g. consumeFrom.timestamp), as dotted paths with * for array
// elements. Computed once per type.
func nullablePaths(t reflect.Type) map[string]bool {
	if v, ok := nullableCache.Load(t); ok {
		return v.(map[string]bool)
	}
	out := map[string]bool{}
	walkNullable(t, "", out, 0)
	nullableCache.Store(t, out)
	return out
}

var nullableCache sync.Map // reflect.Type → map[string]bool

func walkNullable(t reflect.Type, prefix string, out map[string]bool, depth int) {
	if depth > 8 {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		walkNullable(t.Elem(), join(prefix, "*"), out, depth+1)
		return
	case reflect.Struct:
	default:
		return
	}
	for _, f := range reflect.VisibleFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || f.Anonymous {
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := join(prefix, name)
		if f.Type.Kind() == reflect.Pointer && !strings.Contains(opts, "omitempty") {
			out[path] = true
		}
		walkNullable(f.Type, path, out, depth+1)
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// isJSONContentType reports whether a Content-Type names JSON
// (application/json or any application/*+json, parameters allowed).
func isJSONContentType(ct string) bool {
	if ct == "application/json" {
		return true // what nearly every client sends: no parsing (ParseMediaType allocates)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// bodyBufs recycles request-body buffers. Buffers that grew past
// maxPooledBody (large batches, big binary bodies) are dropped rather than
// pinned in the pool. The bound keeps the common batch, 100 messages of
// 1 KiB (about 105 KiB of JSON), in the pool: at 64 KiB every such batch
// allocated its buffer anew (1.5% of a batch publish's server CPU).
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 256 << 10
