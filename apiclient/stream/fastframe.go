package stream

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	json "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/apiclient"
	"github.com/mqgate/mqgate/internal/jsonscan"
)

// A fast path for the frames a stream client handles most: the server's
// messages, results and confirm frames in, ack and publish frames out.
//
// Decoding reads only the plainest spelling, the one the server's own
// encoder writes (api/stream_encode.go): known member names, strings
// without escapes or control characters, integers without fraction or
// exponent, times as 2006-01-02T15:04:05.000Z, no null. Anything else
// (an escape, an unknown member, an error frame) goes to the general
// decoder, as before, so the fast path decides nothing: on its subset it
// decodes exactly what the general decoder does. Encoding writes the
// bytes encoding/json writes for the same value (member order, HTML-safe
// escapes); a value it does not cover (deliverAt, a request holding raw
// JSON from an Unmarshal) goes to the general encoder. FuzzFastFrames and
// TestFastEncode hold both to encoding/json.
//
// It exists because the general codec was most of a benchmark client's
// CPU: PublishRequest's generated MarshalJSON goes through a map and
// encoding/json for every publish, and every results and confirm frame
// was decoded twice (the frame, then its results).

// scanner reads B from I (jsonscan); every method reports false for anything
// outside the subset (or malformed).
//
// The pointer fields of a frame's values point into slabs the scanner
// hands out a few dozen at a time, and a string equal to the one read
// before it in the same member (every delivery of a frame names the same
// topic) is that string again: a delivery's decode made an allocation
// per field, most of a stream client's garbage.
type scanner struct {
	jsonscan.Scanner
	ints  []int
	strs  []string
	topic string
}

// slabSize is how many values of a kind one slab holds.
const slabSize = 32

func (s *scanner) str() (string, bool) {
	v, ok := s.Raw()
	return string(v), ok
}

func (s *scanner) strPtr() (*string, bool) {
	v, ok := s.str()
	return s.newStr(v), ok
}

// newStr returns a pointer to a copy of v in the scanner's string slab.
func (s *scanner) newStr(v string) *string {
	if len(s.strs) == cap(s.strs) {
		s.strs = make([]string, 0, slabSize)
	}
	s.strs = append(s.strs, v)
	return &s.strs[len(s.strs)-1]
}

// newInt is newStr for an int.
func (s *scanner) newInt(v int) *int {
	if len(s.ints) == cap(s.ints) {
		s.ints = make([]int, 0, slabSize)
	}
	s.ints = append(s.ints, v)
	return &s.ints[len(s.ints)-1]
}

// topicStr reads a topic, the previous one's string when it is the same.
func (s *scanner) topicStr() (string, bool) {
	v, ok := s.Raw()
	if ok && string(v) != s.topic {
		s.topic = string(v)
	}
	return s.topic, ok
}

// integer reads an integer that fits an int, digits only.
func (s *scanner) integer() (int, bool) {
	s.WS()
	j := s.I
	if j < len(s.B) && s.B[j] == '-' {
		j++
	}
	k := j
	for k < len(s.B) && s.B[k] >= '0' && s.B[k] <= '9' {
		k++
	}
	if k == j || k-j > 1 && s.B[j] == '0' || k < len(s.B) && (s.B[k] == '.' || s.B[k] == 'e' || s.B[k] == 'E') {
		return 0, false
	}
	n, err := strconv.Atoi(string(s.B[s.I:k]))
	if err != nil {
		return 0, false
	}
	s.I = k
	return n, true
}

func (s *scanner) intPtr() (*int, bool) {
	n, ok := s.integer()
	return s.newInt(n), ok
}

func (s *scanner) boolean() (bool, bool) {
	s.WS()
	switch {
	case bytes.HasPrefix(s.B[s.I:], []byte("true")):
		s.I += 4
		return true, true
	case bytes.HasPrefix(s.B[s.I:], []byte("false")):
		s.I += 5
		return false, true
	}
	return false, false
}

// time reads a time as the server writes it, 2006-01-02T15:04:05.000Z.
func (s *scanner) time() (time.Time, bool) {
	v, ok := s.Raw()
	if !ok || len(v) != 24 || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' || v[19] != '.' || v[23] != 'Z' {
		return time.Time{}, false
	}
	num := func(a, b int) int {
		n := 0
		for _, c := range v[a:b] {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, sec, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), time.UTC)
	if t.Day() != d { // 31 April and the like: refused by the general decoder
		return time.Time{}, false
	}
	return t, true
}

func (s *scanner) timePtr() (*time.Time, bool) {
	t, ok := s.time()
	return &t, ok
}

// array calls elem for each element until it reports false.
func (s *scanner) array(elem func() bool) bool {
	if !s.Next('[') {
		return false
	}
	if s.Next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Next(',') {
			continue
		}
		return s.Next(']')
	}
}

// fastFrame decodes the server's messages, results and confirm frames
// into f (Messages, or the decoded results in f.handles or f.confirms);
// false leaves the frame to the general decoder.
func fastFrame(b []byte, f *frame) bool {
	s := scanner{Scanner: jsonscan.Scanner{B: b}}
	var out frame
	ok := s.Object(func(name []byte) bool {
		switch string(name) {
		case "type":
			v, ok := s.str()
			out.Type = v
			return ok
		case "id":
			v, ok := s.str()
			out.ID = v
			return ok
		case "messages":
			out.Messages = []apiclient.ReceivedMessage{}
			return s.array(func() bool {
				var m apiclient.ReceivedMessage
				ok := s.received(&m)
				out.Messages = append(out.Messages, m)
				return ok
			})
		case "results":
			// The frame's type may come after its results: both readings
			// are kept until the end, and the type picks one.
			start := s.I
			var hs []apiclient.HandleResult
			okH := s.array(func() bool {
				var r apiclient.HandleResult
				ok := s.handleResult(&r)
				hs = append(hs, r)
				return ok
			})
			if okH {
				out.handles, out.confirms, out.fastResults = hs, nil, true
				return true
			}
			s.I = start
			var ps []apiclient.PublishResult
			okP := s.array(func() bool {
				var r apiclient.PublishResult
				ok := s.publishResult(&r)
				ps = append(ps, r)
				return ok
			})
			out.handles, out.confirms, out.fastResults = nil, ps, okP
			return okP
		}
		return false
	})
	if !ok || !s.End() {
		return false
	}
	switch out.Type {
	case "messages":
		if out.fastResults {
			return false
		}
	case "results":
		if out.Messages != nil || (out.fastResults && out.handles == nil && len(out.confirms) > 0) {
			return false
		}
		if out.handles == nil {
			out.handles = []apiclient.HandleResult{}
		}
		out.confirms = nil
	case "confirm":
		if out.Messages != nil || (out.fastResults && out.confirms == nil && len(out.handles) > 0) {
			return false
		}
		if out.confirms == nil {
			out.confirms = []apiclient.PublishResult{}
		}
		out.handles = nil
	default:
		return false
	}
	if out.Type != "messages" && !out.fastResults {
		// No results member: the general decoder says what that means.
		return false
	}
	*f = out
	return true
}

func (s *scanner) handleResult(r *apiclient.HandleResult) bool {
	return s.Object(func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "receiptHandle":
			r.ReceiptHandle, ok = s.str()
		case "status":
			var v string
			v, ok = s.str()
			r.Status = apiclient.HandleResultStatus(v)
		case "invisibleUntil":
			r.InvisibleUntil, ok = s.timePtr()
		}
		return ok
	})
}

func (s *scanner) publishResult(r *apiclient.PublishResult) bool {
	return s.Object(func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "messageId":
			r.MessageId, ok = s.str()
		case "topic":
			r.Topic, ok = s.topicStr()
		case "queueId":
			r.QueueId, ok = s.intPtr()
		case "queueOffset":
			r.QueueOffset, ok = s.intPtr()
		case "replayed":
			var v bool
			v, ok = s.boolean()
			r.Replayed = &v
		case "deliverAt":
			r.DeliverAt, ok = s.timePtr()
		}
		return ok
	})
}

func (s *scanner) received(m *apiclient.ReceivedMessage) bool {
	return s.Object(func(name []byte) bool {
		var ok bool
		switch string(name) {
		case "messageId":
			m.MessageId, ok = s.str()
		case "topic":
			m.Topic, ok = s.topicStr()
		case "queueId":
			m.QueueId, ok = s.intPtr()
		case "queueOffset":
			m.QueueOffset, ok = s.intPtr()
		case "body":
			m.Body, ok = s.strPtr()
		case "bodyBase64":
			var v []byte
			if v, ok = s.Raw(); ok {
				dec, err := base64.StdEncoding.AppendDecode(make([]byte, 0, base64.StdEncoding.DecodedLen(len(v))), v)
				m.BodyBase64 = &dec
				ok = err == nil
			}
		case "tags":
			m.Tags, ok = s.strPtr()
		case "keys":
			keys := []string{}
			ok = s.array(func() bool {
				k, ok := s.str()
				keys = append(keys, k)
				return ok
			})
			m.Keys = &keys
		case "properties":
			props := map[string]string{}
			if m.Properties != nil {
				props = *m.Properties // a member given twice: the general decoder merges the two
			}
			ok = s.Object(func(name []byte) bool {
				v, ok := s.str()
				props[string(name)] = v
				return ok
			})
			m.Properties = &props
		case "shardingKey":
			m.ShardingKey, ok = s.strPtr()
		case "bornAt":
			m.BornAt, ok = s.time()
		case "storedAt":
			m.StoredAt, ok = s.time()
		case "reconsumeTimes":
			m.ReconsumeTimes, ok = s.integer()
		case "deliverAt":
			m.DeliverAt, ok = s.timePtr()
		case "traceparent":
			m.Traceparent, ok = s.strPtr()
		case "tracestate":
			m.Tracestate, ok = s.strPtr()
		case "receiptHandle":
			m.ReceiptHandle, ok = s.str()
		case "invisibleUntil":
			m.InvisibleUntil, ok = s.time()
		}
		return ok
	})
}

// appendString appends s as encoding/json writes it: plain text as it
// is, anything it would escape through encoding/json itself.
func appendString(b []byte, s string) []byte {
	i := plainPrefix(s)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return appendEscaped(b, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return appendEscaped(b, s)
		}
		i += size
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainPrefix is a length, a multiple of 8, of s's start that holds only
// ASCII encoding/json writes as it is (no control character, '"', '\\',
// '<', '>' or '&'), checked eight bytes at a time: a body was scanned a
// byte at a time, 7% of a benchmark publisher's CPU. Each test below
// (some byte of y is zero when (y - ones) &^ y has a high bit, "Bit
// Twiddling Hacks") can flag a byte wrongly only beside one it rightly
// flags, so the eight bytes are then left to appendString's own loop.
func plainPrefix(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(y uint64) uint64 { return (y - ones) &^ y }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		t := x | (x-0x20*ones)&^x | zero(x^'"'*ones) | zero(x^'\\'*ones) |
			zero(x^'<'*ones) | zero(x^'>'*ones) | zero(x^'&'*ones)
		if t&highs != 0 {
			break
		}
	}
	return i
}

func appendEscaped(b []byte, s string) []byte {
	out, _ := json.Marshal(s) // a string always encodes
	return append(b, out...)
}

// unionIndex is the index of PublishRequest's unexported union: raw JSON
// its UnmarshalJSON keeps and MarshalJSON merges back in, which the fast
// encoder does not know how to.
var unionIndex = func() int {
	f, ok := reflect.TypeFor[apiclient.PublishRequest]().FieldByName("union")
	if !ok || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}()

// appendPublishRequest appends m as its MarshalJSON writes it (members in
// name order); false when m is outside what it covers.
func appendPublishRequest(b []byte, m *apiclient.PublishRequest) ([]byte, bool) {
	if unionIndex < 0 || reflect.ValueOf(m).Elem().Field(unionIndex).Len() > 0 || m.DeliverAt != nil {
		return b, false
	}
	b = append(b, '{')
	first := true
	member := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	str := func(name string, v *string) {
		if v != nil {
			member(name)
			b = appendString(b, *v)
		}
	}
	num := func(name string, v *int) {
		if v != nil {
			member(name)
			b = strconv.AppendInt(b, int64(*v), 10)
		}
	}
	str("body", m.Body)
	if m.BodyBase64 != nil {
		member("bodyBase64")
		if *m.BodyBase64 == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, *m.BodyBase64)
			b = append(b, '"')
		}
	}
	str("deduplicationId", m.DeduplicationId)
	num("delayLevel", m.DelayLevel)
	num("delaySeconds", m.DelaySeconds)
	if m.Keys != nil {
		member("keys")
		if *m.Keys == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, k := range *m.Keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, k)
			}
			b = append(b, ']')
		}
	}
	if m.Properties != nil {
		member("properties")
		if *m.Properties == nil {
			b = append(b, "null"...)
		} else {
			keys := make([]string, 0, len(*m.Properties))
			for k := range *m.Properties {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = append(b, '{')
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, k)
				b = append(b, ':')
				b = appendString(b, (*m.Properties)[k])
			}
			b = append(b, '}')
		}
	}
	str("shardingKey", m.ShardingKey)
	str("tags", m.Tags)
	str("traceparent", m.Traceparent)
	str("tracestate", m.Tracestate)
	return append(b, '}'), true
}

// encodePublishFrame encodes f as json.Marshal does.
func encodePublishFrame(f *publishFrame) ([]byte, error) {
	b := make([]byte, 0, 128+publishSize(f))
	b = append(b, `{"type":`...)
	b = appendString(b, f.Type)
	b = append(b, `,"id":`...)
	b = appendString(b, f.ID)
	ok := true
	if f.Message != nil {
		b = append(b, `,"message":`...)
		b, ok = appendPublishRequest(b, f.Message)
	}
	if ok && len(f.Messages) > 0 {
		b = append(b, `,"messages":[`...)
		for i := range f.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendPublishRequest(b, &f.Messages[i]); !ok {
				break
			}
		}
		b = append(b, ']')
	}
	if !ok {
		return json.Marshal(f)
	}
	return append(b, '}'), nil
}

func publishSize(f *publishFrame) int {
	n := 0
	size := func(m *apiclient.PublishRequest) {
		if m.Body != nil {
			n += len(*m.Body) + 16
		}
		if m.BodyBase64 != nil {
			n += len(*m.BodyBase64)*4/3 + 24
		}
		if m.Properties != nil {
			n += 64 * len(*m.Properties)
		}
		n += 64
	}
	if f.Message != nil {
		size(f.Message)
	}
	for i := range f.Messages {
		size(&f.Messages[i])
	}
	return n
}

// encodeSettleFrame encodes f as json.Marshal does.
func encodeSettleFrame(f *settleFrame) []byte {
	b := make([]byte, 0, 64+len(f.Reason)+len(f.ReceiptHandles)*160)
	b = append(b, `{"type":`...)
	b = appendString(b, f.Type)
	b = append(b, `,"id":`...)
	b = appendString(b, f.ID)
	b = append(b, `,"receiptHandles":`...)
	if f.ReceiptHandles == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, h := range f.ReceiptHandles {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, h)
		}
		b = append(b, ']')
	}
	if f.DelayLevel != nil {
		b = append(b, `,"delayLevel":`...)
		b = strconv.AppendInt(b, int64(*f.DelayLevel), 10)
	}
	if f.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, f.Reason)
	}
	if f.InvisibleSeconds != 0 {
		b = append(b, `,"invisibleSeconds":`...)
		b = strconv.AppendInt(b, int64(f.InvisibleSeconds), 10)
	}
	return append(b, '}')
}
