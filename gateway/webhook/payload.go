package webhook

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/mqgate/mqgate/core"
)

// wireMessage is a Message as API.md shows it to consumers, without the
// receipt handle and lease (a webhook is answered by its status code).
// Body is either text (published as `body`) or base64 (`bodyBase64`).
type wireMessage struct {
	MessageID      string            `json:"messageId"`
	Topic          string            `json:"topic"`
	QueueID        int               `json:"queueId"`
	QueueOffset    int64             `json:"queueOffset"`
	Body           *string           `json:"body,omitempty"`
	BodyBase64     *string           `json:"bodyBase64,omitempty"`
	Tags           string            `json:"tags,omitempty"`
	Keys           []string          `json:"keys,omitempty"`
	Properties     map[string]string `json:"properties,omitempty"`
	ShardingKey    string            `json:"shardingKey,omitempty"`
	BornAt         string            `json:"bornAt"`
	StoredAt       string            `json:"storedAt"`
	ReconsumeTimes int               `json:"reconsumeTimes"`
}

// Payload is the request body of one push: {"messages": [...]}. Receivers
// may decode into it.
type Payload struct {
	Messages []json.RawMessage `json:"messages"`
}

// timeLayout is RFC 3339 in UTC with milliseconds (API.md).
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// encodeMessages builds the body of one request. The id shown is the
// user-facing one (ORIGIN_MESSAGE_ID for a retry copy) and the topic the
// original one (RocketMQ resetRetryAndNamespace), so a receiver sees the
// same message id on every attempt and can deduplicate on it.
func encodeMessages(msgs []*core.Message) ([]byte, error) {
	wire := struct {
		Messages []wireMessage `json:"messages"`
	}{Messages: make([]wireMessage, len(msgs))}
	for i, m := range msgs {
		w := wireMessage{
			MessageID:      m.UserID(),
			Topic:          m.UserTopic(),
			QueueID:        m.QueueID,
			QueueOffset:    m.QueueOffset,
			Tags:           m.Tags,
			Keys:           m.Keys,
			Properties:     m.Properties,
			ShardingKey:    m.ShardingKey,
			BornAt:         formatTime(m.BornAt),
			StoredAt:       formatTime(m.StoredAt),
			ReconsumeTimes: m.ReconsumeTimes,
		}
		if m.BodyIsText {
			s := string(m.Body)
			w.Body = &s
		} else {
			s := base64.StdEncoding.EncodeToString(m.Body)
			w.BodyBase64 = &s
		}
		wire.Messages[i] = w
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Bodies are user text: keep <, > and & as they are (the receiver is
	// not a browser), which also keeps the signed bytes readable.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(wire); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
