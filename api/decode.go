package api

import (
	jsonv2 "github.com/go-json-experiment/json"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

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

// decodeJSON reads one JSON value from r's body into dst: unknown fields
// and trailing data are rejected, and a body over limit answers 413.
// allowEmpty lets a missing body decode as {} (PUT /v1/topics/{topic}).
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any, allowEmpty bool) error {
	return decodeJSONFrom(http.MaxBytesReader(w, r.Body, limit), dst, allowEmpty)
}

// decodeJSONFrom is decodeJSON over any reader of the body.
func decodeJSONFrom(body io.Reader, dst any, allowEmpty bool) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if errors.Is(err, io.EOF) {
			if allowEmpty {
				return nil
			}
			return core.Errorf(core.EInvalid, "the request body is empty; a JSON object is required")
		}
		return jsonError(err)
	}
	// Exactly one value: anything but whitespace after it is an error.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return core.Errorf(core.ETooLarge, "the request body exceeds %d bytes", mbe.Limit)
		}
		return core.Errorf(core.EInvalid, "unexpected data after the JSON value")
	}
	return nil
}

// jsonError turns a decoding error into a domain error a client can act on.
func jsonError(err error) error {
	var (
		mbe  *http.MaxBytesError
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		perr *core.Error
	)
	switch {
	case errors.As(err, &mbe):
		return core.Errorf(core.ETooLarge, "the request body exceeds %d bytes", mbe.Limit)
	case errors.As(err, &perr):
		return perr
	case errors.As(err, &syn):
		return core.Errorf(core.EInvalid, "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return core.Errorf(core.EInvalid, "the request body must be a JSON object")
		}
		return core.FieldError(field, "must be %s", jsonTypeName(typ.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return core.Errorf(core.EInvalid, "malformed JSON: unexpected end of input")
	}
	// encoding/json reports unknown fields only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return core.FieldError(strings.Trim(name, `"`), "unknown field")
	}
	var terr *time.ParseError
	if errors.As(err, &terr) {
		return core.Errorf(core.EInvalid, "malformed time %s: use RFC 3339, e.g. 2026-01-02T15:04:05.000Z", terr.Value)
	}
	return core.Errorf(core.EInvalid, "malformed JSON: %v", err)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return fmt.Sprintf("of type %s", kind)
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

// bodyBufs recycles request-body buffers of the publish path. Buffers that
// grew past maxPooledBody (large batches, big binary bodies) are dropped
// rather than pinned in the pool.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 10

// decodePublish decodes a single-message publish body. It reads the body
// once into a pooled buffer and parses the common shape (parsePublishFast)
// without reflection; any other body goes to encoding/json over the very
// same bytes followed by the very same read error, so every answer, error
// wording and precedence included, is decodeJSON's.
func decodePublish(w http.ResponseWriter, r *http.Request, limit int64, req *PublishRequest) error {
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
	_, rerr := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	if rerr == nil && parsePublishFast(buf.Bytes(), req) {
		return nil
	}
	*req = PublishRequest{} // the fast parser may have filled part of it
	tail := io.Reader(eofReader{})
	if rerr != nil {
		tail = errReader{rerr}
	}
	return decodeJSONFrom(io.MultiReader(bytes.NewReader(buf.Bytes()), tail), req, false)
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// parsePublishFast decodes b into req with the encoding/json/v2 prototype
// (github.com/go-json-experiment/json), about twice as fast as
// encoding/json on publish bodies. It is strict where encoding/json is
// lenient (member names matched exactly, duplicates and invalid UTF-8
// rejected, unknown members rejected), so every body it accepts decodes
// to the same result under encoding/json; it reports false on anything
// else and the caller decodes with encoding/json, whose answers (error
// wording included) the API keeps.
func parsePublishFast(b []byte, req *PublishRequest) bool {
	return jsonv2.Unmarshal(b, req, jsonv2.RejectUnknownMembers(true)) == nil
}
