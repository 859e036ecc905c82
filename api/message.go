package api

import (
	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/wire"
)

// Message is a stored message as the API shows it (API.md "Message"), the
// same struct as wire.Message with the comments and examples swag shows.
// A message published as text has `body`, one published as bytes has
// `bodyBase64`; never both.
type Message struct {
	// MessageID is the id shown to users; it stays the same across retries.
	MessageID string `json:"messageId" example:"0A1B2C3D4E5F60718293A4B5"`
	// Topic is the topic the message was published to (also for retries).
	Topic string `json:"topic" example:"orders"`
	// QueueID is the queue the message is in; absent while it is delayed.
	QueueID *int `json:"queueId,omitempty" example:"3"`
	// QueueOffset is the message's position in its queue; absent while it
	// is delayed.
	QueueOffset *int64 `json:"queueOffset,omitempty" example:"42"`
	// Body is the UTF-8 text body of a message published with `body`.
	Body *string `json:"body,omitempty" example:"order 17 created"`
	// BodyBase64 is the body (standard base64) of a message published with
	// `bodyBase64`.
	BodyBase64 *string `json:"bodyBase64,omitempty" format:"byte" example:"AAEC/w=="`
	// Tags is the message's tag, matched by subscription filters.
	Tags string `json:"tags,omitempty" example:"created"`
	// Keys are the message's lookup keys.
	Keys []string `json:"keys,omitempty" example:"order-17"`
	// Properties are the user properties.
	Properties map[string]string `json:"properties,omitempty"`
	// ShardingKey chose the message's queue (same key, same queue).
	ShardingKey string `json:"shardingKey,omitempty" example:"customer-9"`
	// BornAt is when the gateway accepted the message.
	BornAt string `json:"bornAt" format:"date-time" example:"2026-01-02T15:04:05.000Z"`
	// StoredAt is when the transaction holding this copy committed.
	StoredAt string `json:"storedAt" format:"date-time" example:"2026-01-02T15:04:05.003Z"`
	// ReconsumeTimes counts earlier failed deliveries.
	ReconsumeTimes int `json:"reconsumeTimes" example:"0"`
	// DeliverAt is when a delayed message becomes (or became) deliverable;
	// absent for messages that were not delayed.
	DeliverAt string `json:"deliverAt,omitempty" format:"date-time" example:"2026-01-02T15:05:05.000Z"`
	// TraceParent is the W3C traceparent of the message's creation: the
	// one it was published with or, when the server traces, that of its
	// publish span. It stays the same across retries and dead-lettering;
	// a consumer links its processing span to it. Absent when the message
	// has none.
	TraceParent string `json:"traceparent,omitempty" example:"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
	// TraceState is the W3C tracestate that came with traceparent.
	TraceState string `json:"tracestate,omitempty" example:"vendor=value"`
}

// newMessage renders a stored message: wire.NewMessage owns the shape
// (the webhook body carries the same one); Message is that struct with the
// annotations swag documents, so the conversion stops compiling if the two
// drift apart.
func newMessage(m *core.Message) Message { return Message(wire.NewMessage(m)) }

// MessageList is the answer of a key query or a queue browse.
type MessageList struct {
	// Messages found, in queue order for a browse.
	Messages []Message `json:"messages"`
	// NextOffset is where the next browse of this queue starts (browse only).
	NextOffset *int64 `json:"nextOffset,omitempty" example:"42"`
	// MinOffset is the queue's oldest kept offset (browse only).
	MinOffset *int64 `json:"minOffset,omitempty" example:"0"`
	// MaxOffset is the offset the queue's next message will get (browse only).
	MaxOffset *int64 `json:"maxOffset,omitempty" example:"150"`
}

func newMessageList(ms []*core.Message) MessageList {
	out := MessageList{Messages: make([]Message, 0, len(ms))}
	for _, m := range ms {
		out.Messages = append(out.Messages, newMessage(m))
	}
	return out
}
