package wire

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/mqgate/mqgate/core"
)

// AppendString appends s as a JSON string exactly as encoding/json writes
// it with its defaults: <, > and & escaped (HTML-safe), other bytes below
// 0x20 as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and
// U+2029 escaped. Runs of plain ASCII are copied eight bytes at a time.
func AppendString(b []byte, s string) []byte {
	// A read-only view: appendEscaped never writes to its input.
	b, _ = appendEscaped(b, unsafe.Slice(unsafe.StringData(s), len(s)))
	return b
}

// AppendBytes is AppendString for text held in a byte slice (a body).
func AppendBytes(b, s []byte) []byte {
	b, _ = appendEscaped(b, s)
	return b
}

// appendEscaped is AppendString's loop; valid reports whether s was
// valid UTF-8 (each invalid byte was written as \ufffd).
func appendEscaped(b, s []byte) (_ []byte, valid bool) {
	valid = true
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip whole words of plain ASCII (bit tricks of "Bit Twiddling
		// Hacks": some byte of x is below n when (x - n*ones) &^ x has a
		// high bit, and equal to c when y = x^(c*ones) has a zero byte).
		for i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(s[i:])
			special := (x - 0x20*ones) &^ x
			y := x ^ '"'*ones
			special |= (y - ones) &^ y
			y = x ^ '\\'*ones
			special |= (y - ones) &^ y
			y = x ^ '<'*ones
			special |= (y - ones) &^ y
			y = x ^ '>'*ones
			special |= (y - ones) &^ y
			y = x ^ '&'*ones
			special |= (y - ones) &^ y
			if (special|x)&highs != 0 {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
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
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			valid = false
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
	return append(b, '"'), valid
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

// AppendMessageFields appends the JSON object of NewMessage(m), exactly
// as encoding/json encodes it with its defaults, without the closing
// brace, so that a caller can add fields of its own (the receive answer's
// receiptHandle and invisibleUntil) before closing it. It makes no
// Message: the body is escaped straight from m.Body. A test holds it to
// NewMessage's encoding.
func AppendMessageFields(b []byte, m *core.Message) []byte {
	b = append(b, `{"messageId":`...)
	b = AppendString(b, m.UserID())
	b = append(b, `,"topic":`...)
	topic, positioned := shownTopic(m)
	b = AppendString(b, topic)
	if positioned {
		b = append(b, `,"queueId":`...)
		b = strconv.AppendInt(b, int64(m.QueueID), 10)
		b = append(b, `,"queueOffset":`...)
		b = strconv.AppendInt(b, m.QueueOffset, 10)
	}
	text := false
	if m.BodyIsText {
		n := len(b)
		b = append(b, `,"body":`...)
		// One pass both escapes the body and checks that it is UTF-8,
		// where utf8.Valid first read every body twice (7% of encoding
		// a 1 KiB delivery, BenchmarkAppendMessageFields); a body that
		// is not UTF-8 goes as base64.
		if b, text = appendEscaped(b, m.Body); !text {
			b = b[:n]
		}
	}
	if !text {
		b = append(b, `,"bodyBase64":"`...)
		b = base64.StdEncoding.AppendEncode(b, m.Body)
		b = append(b, '"')
	}
	if m.Tags != "" {
		b = append(b, `,"tags":`...)
		b = AppendString(b, m.Tags)
	}
	if len(m.Keys) > 0 {
		b = append(b, `,"keys":[`...)
		for i, k := range m.Keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
		}
		b = append(b, ']')
	}
	if len(m.Properties) > 0 {
		// encoding/json writes a map's members sorted by key.
		var buf [16]string
		keys := buf[:0]
		for k := range m.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, `,"properties":{`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			b = AppendString(b, m.Properties[k])
		}
		b = append(b, '}')
	}
	if m.ShardingKey != "" {
		b = append(b, `,"shardingKey":`...)
		b = AppendString(b, m.ShardingKey)
	}
	b = append(b, `,"bornAt":`...)
	b = AppendTime(b, m.BornAt)
	b = append(b, `,"storedAt":`...)
	b = AppendTime(b, m.StoredAt)
	b = append(b, `,"reconsumeTimes":`...)
	b = strconv.AppendInt(b, int64(m.ReconsumeTimes), 10)
	if v := m.SysProps[core.PropDeliverAt]; v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			b = append(b, `,"deliverAt":`...)
			b = AppendTime(b, time.UnixMilli(ms))
		}
	}
	if v := m.SysProps[core.PropTraceParent]; v != "" {
		b = append(b, `,"traceparent":`...)
		b = AppendString(b, v)
		if st := m.SysProps[core.PropTraceState]; st != "" {
			b = append(b, `,"tracestate":`...)
			b = AppendString(b, st)
		}
	}
	return b
}

// AppendTime appends FormatTime(t) as a JSON string, without making
// the string.
func AppendTime(b []byte, t time.Time) []byte {
	if d, ok := timeDigits(t); ok && !t.IsZero() {
		b = append(b, '"')
		b = append(b, d[:]...)
		return append(b, '"')
	}
	return AppendString(b, FormatTime(t))
}
