package e2e

import "testing"

// Wire shapes as API.md fixes them, decoded independently of package api
// so a renamed field fails here.

type topic struct {
	Name           string `json:"name"`
	Queues         int    `json:"queues"`
	RetentionHours int    `json:"retentionHours"`
	CreatedAt      string `json:"createdAt"`
	Stats          *struct {
		Messages int64 `json:"messages"`
		Queues   []struct {
			QueueID   int   `json:"queueId"`
			MinOffset int64 `json:"minOffset"`
			MaxOffset int64 `json:"maxOffset"`
		} `json:"queues"`
	} `json:"stats"`
}

type publishResult struct {
	MessageID   string `json:"messageId"`
	Topic       string `json:"topic"`
	QueueID     *int   `json:"queueId"`
	QueueOffset *int64 `json:"queueOffset"`
	DeliverAt   string `json:"deliverAt"`
}

type message struct {
	MessageID      string            `json:"messageId"`
	Topic          string            `json:"topic"`
	QueueID        *int              `json:"queueId"`
	QueueOffset    *int64            `json:"queueOffset"`
	Body           *string           `json:"body"`
	BodyBase64     *string           `json:"bodyBase64"`
	Tags           string            `json:"tags"`
	Keys           []string          `json:"keys"`
	Properties     map[string]string `json:"properties"`
	ShardingKey    string            `json:"shardingKey"`
	BornAt         string            `json:"bornAt"`
	StoredAt       string            `json:"storedAt"`
	ReconsumeTimes int               `json:"reconsumeTimes"`
	DeliverAt      *string           `json:"deliverAt"`
}

type messageList struct {
	Messages   []message `json:"messages"`
	NextOffset *int64    `json:"nextOffset"`
	MinOffset  *int64    `json:"minOffset"`
	MaxOffset  *int64    `json:"maxOffset"`
}

// createTopic PUTs a topic with the queue count and fails unless 201.
func createTopic(t testing.TB, s *server, name string, queues int) topic {
	t.Helper()
	r := s.do(t, "PUT", "/v1/topics/"+name, map[string]int{"queues": queues})
	want(t, r, 201)
	var tp topic
	r.JSON(t, &tp)
	return tp
}
