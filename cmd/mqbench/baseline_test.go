package main

import (
	"context"
	"net/http"
	"testing"
)

// The baseline answers what the gateway answers for the publish calls, so
// a client that works against one works against the other.
func TestBaselineShapes(t *testing.T) {
	b := startTestBaseline(t)
	c := newClient(1, 0)
	defer closeClient(c)
	ctx := context.Background()

	var topic baselineTopic
	if _, err := doJSON(ctx, c, http.MethodPut, topicURL(b.URL(), "t1"), map[string]any{"queues": 4}, &topic); err != nil {
		t.Fatal(err)
	}
	if topic.Name != "t1" || topic.Queues != 4 {
		t.Fatalf("topic = %+v", topic)
	}

	var one baselinePublishResult
	status, err := doJSON(ctx, c, http.MethodPost, topicURL(b.URL(), "t1", "/messages"), map[string]any{"body": "hi"}, &one)
	if err != nil || status != http.StatusCreated || one.MessageID == "" || one.Topic != "t1" {
		t.Fatalf("publish: %d %v %+v", status, err, one)
	}

	var batch struct {
		Results []baselinePublishResult `json:"results"`
	}
	in := map[string]any{"messages": []map[string]any{{"body": "a"}, {"bodyBase64": "AAE="}, {"body": "c"}}}
	status, err = doJSON(ctx, c, http.MethodPost, topicURL(b.URL(), "t1", "/messages/batch"), in, &batch)
	if err != nil || status != http.StatusCreated || len(batch.Results) != 3 {
		t.Fatalf("batch: %d %v %+v", status, err, batch)
	}

	for _, c2 := range []struct {
		name string
		path string
		in   any
		want int
	}{
		{"both bodies", "/messages", map[string]any{"body": "a", "bodyBase64": "AA=="}, 400},
		{"no body", "/messages", map[string]any{"tags": "x"}, 400},
		{"unknown field", "/messages", map[string]any{"body": "a", "colour": "red"}, 400},
		{"bad base64", "/messages", map[string]any{"bodyBase64": "!!"}, 400},
		{"empty batch", "/messages/batch", map[string]any{"messages": []any{}}, 400},
	} {
		status, err := doJSON(ctx, c, http.MethodPost, topicURL(b.URL(), "t1", c2.path), c2.in, nil)
		if status != c2.want || err == nil {
			t.Errorf("%s: status %d (%v), want %d", c2.name, status, err, c2.want)
		}
	}
}
