package api

import (
	"strconv"
	"unicode/utf8"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway"
)

// The answers of the hottest requests — publish and batch publish
// results, ack/nack/extend's HandleResults — are appended by hand into writeJSON's
// pooled buffer: the general encoder's type lookup, the result structs
// (two pointers per publish result) and the `any` conversion cost an ack
// request more than building the few bytes. The output is encoding/json's,
// byte for byte, newline included (TestHandAnswersMatchStdlib, with the
// types' own encoding as the reference); the types stay the documented
// shapes.

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it: <, > and & escaped (HTML-safe), other bytes below 0x20 as
// \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes encoding/json writes as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		switch c {
		case '"', '\\', '<', '>', '&':
		default:
			t[c] = true
		}
	}
	return t
}()

// appendPublishResult appends newPublishResult(*r) as encoding/json's
// Encoder writes it.
func appendPublishResult(b []byte, r *core.PutResult) []byte {
	return append(appendPublishObject(b, r), '\n')
}

// appendPublishBatchResult appends the PublishBatchResult of rs as
// encoding/json's Encoder writes it.
func appendPublishBatchResult(b []byte, rs []core.PutResult) []byte {
	b = append(b, `{"results":[`...)
	for i := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPublishObject(b, &rs[i])
	}
	return append(b, "]}\n"...)
}

func appendPublishObject(b []byte, r *core.PutResult) []byte {
	b = append(b, `{"messageId":`...)
	b = appendJSONString(b, r.MessageID)
	b = append(b, `,"topic":`...)
	b = appendJSONString(b, r.Topic)
	if r.DeliverAt.IsZero() {
		b = append(b, `,"queueId":`...)
		b = strconv.AppendInt(b, int64(r.QueueID), 10)
		b = append(b, `,"queueOffset":`...)
		b = strconv.AppendInt(b, r.QueueOffset, 10)
	} else {
		b = append(b, `,"deliverAt":`...)
		b = appendJSONString(b, formatTime(r.DeliverAt))
	}
	if r.Replayed {
		b = append(b, `,"replayed":true`...)
	}
	return append(b, '}')
}

// appendHandleResults appends newHandleResults(rs) as encoding/json's
// Encoder writes it.
func appendHandleResults(b []byte, rs []gateway.HandleResult) []byte {
	b = append(b, `{"results":[`...)
	for i := range rs {
		r := &rs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"receiptHandle":`...)
		b = appendJSONString(b, r.ReceiptHandle)
		b = append(b, `,"status":`...)
		b = appendJSONString(b, string(r.Status))
		if !r.InvisibleUntil.IsZero() {
			b = append(b, `,"invisibleUntil":`...)
			b = appendJSONString(b, formatTime(r.InvisibleUntil))
		}
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}
