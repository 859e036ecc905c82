package api

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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

// parsePublishFast parses b into req when b is a JSON object whose members
// are all among body, bodyBase64, tags, shardingKey, keys, properties,
// delayLevel and delaySeconds, each at most once, named exactly, with
// strings free of escapes and control characters (valid UTF-8), arrays and
// objects of such strings and plain integers; whitespace around tokens. That
// is what clients send. For those bodies encoding/json (DisallowUnknownFields,
// one value) yields exactly this result; for anything else this returns
// false and the caller decodes with encoding/json.
func parsePublishFast(b []byte, req *PublishRequest) bool {
	p := fastParser{b: b}
	if !p.skip('{') {
		return false
	}
	var seen uint8
	if !p.peek('}') {
		for {
			name, ok := p.str()
			if !ok || !p.skip(':') {
				return false
			}
			bit, ok := publishFields[string(name)] // no allocation: map lookup of string(bytes)
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			switch bit {
			case fBody, fBodyBase64, fTags, fShardingKey:
				v, ok := p.str()
				if !ok {
					return false
				}
				s := string(v)
				switch bit {
				case fBody:
					req.Body = &s
				case fBodyBase64:
					req.BodyBase64 = &s
				case fTags:
					req.Tags = s
				default:
					req.ShardingKey = s
				}
			case fKeys:
				if req.Keys, ok = p.strArray(); !ok {
					return false
				}
			case fProperties:
				if req.Properties, ok = p.strObject(); !ok {
					return false
				}
			case fDelayLevel:
				n, ok := p.integer(9) // fits an int on every platform
				if !ok {
					return false
				}
				v := int(n)
				req.DelayLevel = &v
			case fDelaySeconds:
				n, ok := p.integer(18)
				if !ok {
					return false
				}
				req.DelaySeconds = &n
			}
			if p.skip(',') {
				continue
			}
			break
		}
	}
	if !p.skip('}') {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

const (
	fBody uint8 = 1 << iota
	fBodyBase64
	fTags
	fShardingKey
	fKeys
	fProperties
	fDelayLevel
	fDelaySeconds
)

var publishFields = map[string]uint8{
	"body": fBody, "bodyBase64": fBodyBase64, "tags": fTags, "shardingKey": fShardingKey,
	"keys": fKeys, "properties": fProperties, "delayLevel": fDelayLevel, "delaySeconds": fDelaySeconds,
}

// fastParser is parsePublishFast's cursor. Every method skips leading
// whitespace and reports false on anything it does not handle.
type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek reports whether the next token is c, without consuming it.
func (p *fastParser) peek(c byte) bool {
	p.ws()
	return p.i < len(p.b) && p.b[p.i] == c
}

// skip consumes the next token if it is c.
func (p *fastParser) skip(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

// str reads a string token without escapes or control characters; it
// returns the raw bytes between the quotes (valid UTF-8, so encoding/json
// would return them unchanged).
func (p *fastParser) str() ([]byte, bool) {
	if !p.skip('"') {
		return nil, false
	}
	start, ascii := p.i, true
	// Eight bytes at a time while none is special (bodies are long).
	for p.i+8 <= len(p.b) && !specialWord(binary.LittleEndian.Uint64(p.b[p.i:])) {
		p.i += 8
	}
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, ascii || utf8.Valid(s)
		case c == '\\', c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// specialWord reports whether any byte of w is one str must look at: a
// quote, a backslash, a control character or a non-ASCII byte (SWAR: a
// byte below n sets its high bit in (w - n*lo) &^ w, for n <= 0x80).
func specialWord(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	below := func(x uint64, n uint64) uint64 { return (x - n*lo) &^ x & hi }
	return (w&hi | below(w, 0x20) | below(w^('"'*lo), 1) | below(w^('\\'*lo), 1)) != 0
}

// strArray reads an array of strings; [] gives an empty, non-nil slice as
// encoding/json does.
func (p *fastParser) strArray() ([]string, bool) {
	if !p.skip('[') {
		return nil, false
	}
	out := []string{}
	if p.skip(']') {
		return out, true
	}
	for {
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		out = append(out, string(s))
		if p.skip(',') {
			continue
		}
		return out, p.skip(']')
	}
}

// strObject reads an object of string values; a repeated name keeps the
// last value, and {} gives an empty, non-nil map, as encoding/json does.
func (p *fastParser) strObject() (map[string]string, bool) {
	if !p.skip('{') {
		return nil, false
	}
	out := map[string]string{}
	if p.skip('}') {
		return out, true
	}
	for {
		k, ok := p.str()
		if !ok || !p.skip(':') {
			return nil, false
		}
		v, ok := p.str()
		if !ok {
			return nil, false
		}
		out[string(k)] = string(v)
		if p.skip(',') {
			continue
		}
		return out, p.skip('}')
	}
}

// integer reads a JSON integer of at most digits digits (no fraction, no
// exponent: encoding/json refuses those for integer fields anyway, with an
// error the fallback words).
func (p *fastParser) integer(digits int) (int64, bool) {
	p.ws()
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	start := p.i
	var n int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	d := p.i - start
	if d == 0 || d > digits || (d > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}
