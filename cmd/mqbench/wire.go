package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
)

// The consumption half of API.md, as much of it as mqbench reads.

type groupSpec struct {
	Subscriptions []subscription `json:"subscriptions"`
	MessageModel  string         `json:"messageModel"`
	ConsumeMode   string         `json:"consumeMode"`
	ConsumeFrom   consumeFrom    `json:"consumeFrom"`
	Push          *pushSpec      `json:"push,omitempty"`
}

// pushSpec makes a group a push group: the gateway POSTs its messages to
// URL (API.md "Webhooks").
type pushSpec struct {
	URL            string `json:"url"`
	MaxInFlight    int    `json:"maxInFlight,omitempty"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty"`
	Secret         string `json:"secret,omitempty"`
}

type subscription struct {
	Topic  string `json:"topic"`
	Filter string `json:"filter,omitempty"`
}

type consumeFrom struct {
	Position string `json:"position"`
}

type receiveRequest struct {
	MaxMessages int `json:"maxMessages"`
	WaitSeconds int `json:"waitSeconds"`
}

// publishAnswer is what the paced publishers read of a publish's answer.
type publishAnswer struct {
	MessageID string `json:"messageId"`
}

type receiveAnswer struct {
	Messages []receivedMessage `json:"messages"`
}

// receivedMessage leaves out the body: the decoder skips it without
// allocating it.
type receivedMessage struct {
	MessageID      string            `json:"messageId"`
	Topic          string            `json:"topic"`
	QueueID        int               `json:"queueId"`
	QueueOffset    int64             `json:"queueOffset"`
	Properties     map[string]string `json:"properties"`
	ReconsumeTimes int               `json:"reconsumeTimes"`
	ReceiptHandle  string            `json:"receiptHandle"`
}

type handlesRequest struct {
	ReceiptHandles []string `json:"receiptHandles"`
}

type handleResults struct {
	Results []struct {
		ReceiptHandle string `json:"receiptHandle"`
		Status        string `json:"status"`
	} `json:"results"`
}

// ensureGroup creates (or updates) a CLUSTERING, CONCURRENTLY group on
// topic that starts from the first offset, so it sees what was published
// before it existed.
func ensureGroup(ctx context.Context, c *http.Client, base, group, topic string) error {
	return putGroup(ctx, c, base, group, topic, nil)
}

// putGroup is ensureGroup with an optional push configuration.
func putGroup(ctx context.Context, c *http.Client, base, group, topic string, push *pushSpec) error {
	spec := groupSpec{
		Push:          push,
		Subscriptions: []subscription{{Topic: topic, Filter: "*"}},
		MessageModel:  "CLUSTERING",
		ConsumeMode:   "CONCURRENTLY",
		ConsumeFrom:   consumeFrom{Position: "FIRST_OFFSET"},
	}
	if _, err := doJSON(ctx, c, http.MethodPut, groupURL(base, group), spec, nil); err != nil {
		return fmt.Errorf("create group: %w", err)
	}
	return nil
}

// deleteGroup removes a group mqbench created, best effort.
func deleteGroup(c *http.Client, base, group string) {
	ctx := context.Background()
	_, _ = doJSON(ctx, c, http.MethodDelete, groupURL(base, group), nil, nil)
}

// runID is a short random suffix that keeps each run's topic and group
// apart from earlier runs' leftovers.
func runID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
