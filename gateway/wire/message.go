package wire

import (
	"encoding/base64"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mqgate/mqgate/core"
)

// TimeLayout is RFC 3339 with milliseconds, as API.md fixes for every time.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime renders t in UTC with milliseconds; the zero time is "".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if b, ok := timeDigits(t); ok {
		return string(b[:])
	}
	return t.UTC().Format(TimeLayout)
}

// timeDigits is FormatTime of a non-zero t of the years 0..9999, the
// layout by hand: time.Format parses its layout on every call, and a
// receive answer formats three times per message.
func timeDigits(t time.Time) (b [24]byte, ok bool) {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return b, false
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	put := func(at, v, width int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, int(month), 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = 'T'
	put(11, hour, 2)
	b[13] = ':'
	put(14, minute, 2)
	b[16] = ':'
	put(17, sec, 2)
	b[19] = '.'
	put(20, ms, 3)
	b[23] = 'Z'
	return b, true
}

// Message is a stored message as a consumer sees it. The field comments
// for users live on api.Message, which swag documents.
type Message struct {
	MessageID      string            `json:"messageId"`
	Topic          string            `json:"topic"`
	QueueID        *int              `json:"queueId,omitempty"`
	QueueOffset    *int64            `json:"queueOffset,omitempty"`
	Body           *string           `json:"body,omitempty"`
	BodyBase64     *string           `json:"bodyBase64,omitempty"`
	Tags           string            `json:"tags,omitempty"`
	Keys           []string          `json:"keys,omitempty"`
	Properties     map[string]string `json:"properties,omitempty"`
	ShardingKey    string            `json:"shardingKey,omitempty"`
	BornAt         string            `json:"bornAt"`
	StoredAt       string            `json:"storedAt"`
	ReconsumeTimes int               `json:"reconsumeTimes"`
	DeliverAt      string            `json:"deliverAt,omitempty"`
	TraceParent    string            `json:"traceparent,omitempty"`
	TraceState     string            `json:"tracestate,omitempty"`
}

// shownTopic is the topic a consumer sees m under and whether m is shown
// with its queue position: a message still waiting on the schedule topic
// is shown under its real topic and has none yet; any other under its
// user topic (the original one of a retry or dead-letter copy).
func shownTopic(m *core.Message) (topic string, positioned bool) {
	if real := m.SysProps[core.PropRealTopic]; m.Topic == core.ScheduleTopic && real != "" {
		return real, false
	}
	return m.UserTopic(), true
}

// NewMessage renders a stored message. The id shown is the user-facing
// one (ORIGIN_MESSAGE_ID for a retry or dead-letter copy) and the topic
// the original one (RocketMQ resetRetryAndNamespace), so a consumer sees
// the same message id on every attempt and can deduplicate on it. A
// message still waiting on the schedule topic is shown under its real
// topic, without a queue position. A body published as text is shown as
// `body`, one published as bytes as `bodyBase64`.
func NewMessage(m *core.Message) Message {
	out := Message{
		MessageID:      m.UserID(),
		Tags:           m.Tags,
		Keys:           m.Keys,
		Properties:     m.Properties,
		ShardingKey:    m.ShardingKey,
		BornAt:         FormatTime(m.BornAt),
		StoredAt:       FormatTime(m.StoredAt),
		ReconsumeTimes: m.ReconsumeTimes,
	}
	topic, positioned := shownTopic(m)
	out.Topic = topic
	if positioned {
		qid, off := m.QueueID, m.QueueOffset
		out.QueueID, out.QueueOffset = &qid, &off
	}
	if m.BodyIsText && utf8.Valid(m.Body) {
		s := string(m.Body)
		out.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(m.Body)
		out.BodyBase64 = &s
	}
	// (Tested for presence first: a failed ParseInt allocates its error.)
	if v := m.SysProps[core.PropDeliverAt]; v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			out.DeliverAt = FormatTime(time.UnixMilli(ms))
		}
	}
	out.TraceParent, out.TraceState = m.TraceParent(), m.TraceState()
	return out
}
