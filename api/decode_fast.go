package api

import (
	"slices"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/internal/jsonscan"
)

// A fast path for the hottest bodies (publish, batch publish, ack). It
// reads only the plainest spelling of them: the known member names, no
// escapes, strings of valid UTF-8 without control characters, string
// members, the keys array and the properties object, no null, no numbers,
// no duplicates, nothing after the value. On that subset the strict
// decoder (strictJSON) decodes exactly the same value, so the fast path
// decides nothing: any other body — anything with an escape, a number,
// deliverAt, an error of any kind — goes to the strict decoder as before,
// which also words every error. FuzzFastDecode holds the two together.
//
// It exists because the general decoder's per-value reflection and the
// null scan cost a batch of 100 publishes about 16% of the server's CPU
// (github.com/go-json-experiment/json.Unmarshal 12.5%, bytes.Contains 3.9%)
// and an ack request about 5%.

// fastDecode decodes b into dst when dst is one of the fast path's types
// and b is in its subset, and reports whether it did. When it reports
// false, dst is unchanged.
func fastDecode(b []byte, dst any) bool {
	s := fastScanner{Scanner: jsonscan.Scanner{B: b}}
	switch v := dst.(type) {
	case *PublishRequest:
		var req PublishRequest
		if !s.publish(&req) || !s.End() {
			return false
		}
		*v = req
	case *PublishBatchRequest:
		var req PublishBatchRequest
		if !s.batch(&req) || !s.End() {
			return false
		}
		*v = req
	case *AckRequest:
		var req AckRequest
		if !s.ack(&req) || !s.End() {
			return false
		}
		*v = req
	default:
		return false
	}
	return true
}

// fastScanner reads B from I (jsonscan). Every method reports false for anything
// outside the fast path's subset (or malformed), never an error.
type fastScanner struct {
	jsonscan.Scanner
	// short remembers the last short string value read, which the next
	// batch entry's tags or key usually repeat: one copy, not one each.
	short string
	// text is b as a string, made at the first body read: every body is a
	// substring of it, so a batch's bodies cost one copy and allocation,
	// not one per message. Only bodies use it: they do not outlive the
	// request (the store encodes a record of its own), where an id or a
	// tag kept by the engine would pin the whole request.
	text string
	// bodies holds the strings that PublishRequest.Body and BodyBase64
	// point to, a batch's at once (est).
	bodies []string
	// est guesses how many entries the batch has (1 until its first
	// entry is read).
	est int
}

// str reads a string value (a copy, or the same short string as the
// last one).
func (s *fastScanner) str() (string, bool) {
	v, ok := s.Raw()
	if len(v) > 32 {
		return string(v), ok
	}
	if string(v) != s.short {
		s.short = string(v)
	}
	return s.short, ok
}

// body reads a body string (body or bodyBase64) as a substring of text,
// returning a pointer to it.
func (s *fastScanner) body() (*string, bool) {
	v, ok := s.Raw()
	if !ok {
		return nil, false
	}
	if s.text == "" {
		s.text = string(s.B)
	}
	// raw moved past the white space, the opening quote, v and the closing one.
	end := s.I - 1
	if len(s.bodies) == cap(s.bodies) {
		s.bodies = make([]string, 0, max(1, s.est))
	}
	s.bodies = append(s.bodies, s.text[end-len(v):end])
	return &s.bodies[len(s.bodies)-1], true
}

// strs reads an array of strings; [] is an empty, non-nil slice, as
// the strict decoder makes it.
func (s *fastScanner) strs() ([]string, bool) {
	if !s.Next('[') {
		return nil, false
	}
	out := []string{}
	if s.Next(']') {
		return out, true
	}
	for {
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if s.Next(',') {
			continue
		}
		return out, s.Next(']')
	}
}

// Member bits of a publish entry, to refuse duplicates.
const (
	seenBody = 1 << iota
	seenBodyBase64
	seenTags
	seenKeys
	seenProperties
	seenShardingKey
	seenDeduplicationID
	seenTraceParent
	seenTraceState
)

// publish reads a publish request (or batch entry) of string members,
// keys and properties.
func (s *fastScanner) publish(req *PublishRequest) bool {
	seen := 0
	once := func(bit int) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	return s.Object(func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "body":
			req.Body, ok = s.body()
			return ok && once(seenBody)
		case "bodyBase64":
			req.BodyBase64, ok = s.body()
			return ok && once(seenBodyBase64)
		case "tags":
			req.Tags, ok = s.str()
			return ok && once(seenTags)
		case "shardingKey":
			req.ShardingKey, ok = s.str()
			return ok && once(seenShardingKey)
		case "deduplicationId":
			req.DeduplicationID, ok = s.str()
			return ok && once(seenDeduplicationID)
		case "traceparent":
			req.TraceParent, ok = s.str()
			return ok && once(seenTraceParent)
		case "tracestate":
			req.TraceState, ok = s.str()
			return ok && once(seenTraceState)
		case "keys":
			req.Keys, ok = s.strs()
			return ok && once(seenKeys)
		case "properties":
			if !once(seenProperties) {
				return false
			}
			req.Properties = map[string]string{}
			return s.Object(func(k []byte) bool {
				if _, dup := req.Properties[string(k)]; dup {
					return false
				}
				v, ok := s.str()
				req.Properties[string(k)] = v
				return ok
			})
		}
		return false
	})
}

// batch reads {"messages": [entry, ...]}.
func (s *fastScanner) batch(req *PublishBatchRequest) bool {
	seen := false
	return s.Object(func(name []byte) bool {
		if string(name) != "messages" || seen || !s.Next('[') {
			return false
		}
		seen = true
		req.Messages = []PublishRequest{}
		if s.Next(']') {
			return true
		}
		for {
			start := s.I
			req.Messages = append(req.Messages, PublishRequest{})
			if !s.publish(&req.Messages[len(req.Messages)-1]) {
				return false
			}
			if len(req.Messages) == 1 {
				// Entries of a batch are usually alike: size the
				// entries and their bodies from the first one's length,
				// instead of growing them by doubling.
				s.est = min(core.MaxBatch, 1+(len(s.B)-s.I)/(s.I-start+1))
				req.Messages = slices.Grow(req.Messages, s.est-1)
			}
			if s.Next(',') {
				continue
			}
			return s.Next(']')
		}
	})
}

// ack reads {"receiptHandles": [...]}.
func (s *fastScanner) ack(req *AckRequest) bool {
	seen := false
	return s.Object(func(name []byte) bool {
		if string(name) != "receiptHandles" || seen {
			return false
		}
		seen = true
		var ok bool
		req.ReceiptHandles, ok = s.strs()
		return ok
	})
}
