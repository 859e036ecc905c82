package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestPublishTextAndRead(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 4)

	before := time.Now().UTC().Add(-time.Second)
	r := s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{
		"body": "order 17 created ✓", "tags": "created", "keys": []string{"order-17", "customer-9"},
		"properties": map[string]string{"region": "eu"},
	})
	want(t, r, 201)
	var pr publishResult
	r.JSON(t, &pr)
	if pr.MessageID == "" || len(pr.MessageID) > 64 || pr.Topic != "orders" || pr.QueueID == nil || pr.QueueOffset == nil || pr.DeliverAt != "" {
		t.Fatalf("publish result %s", r.Body)
	}
	if url.PathEscape(pr.MessageID) != pr.MessageID {
		t.Fatalf("message id %q is not URL-safe", pr.MessageID)
	}

	r = s.do(t, "GET", "/v1/topics/orders/messages/"+pr.MessageID, nil)
	want(t, r, 200)
	var m message
	r.JSON(t, &m)
	if m.MessageID != pr.MessageID || m.Topic != "orders" || m.Body == nil || *m.Body != "order 17 created ✓" || m.BodyBase64 != nil {
		t.Fatalf("message %s", r.Body)
	}
	if m.Tags != "created" || len(m.Keys) != 2 || m.Properties["region"] != "eu" || *m.QueueID != *pr.QueueID || *m.QueueOffset != *pr.QueueOffset {
		t.Fatalf("message %s", r.Body)
	}
	if !rfc3339ms.MatchString(m.BornAt) || !rfc3339ms.MatchString(m.StoredAt) || m.DeliverAt != nil {
		t.Fatalf("times in %s: want RFC 3339 UTC with ms and no deliverAt", r.Body)
	}
	if born, _ := time.Parse(time.RFC3339, m.BornAt); born.Before(before) {
		t.Fatalf("bornAt %s is before the publish", m.BornAt)
	}

	// By key, from either key.
	for _, key := range []string{"order-17", "customer-9"} {
		r = s.do(t, "GET", "/v1/topics/orders/messages?key="+key, nil)
		want(t, r, 200)
		var ml messageList
		r.JSON(t, &ml)
		if len(ml.Messages) != 1 || ml.Messages[0].MessageID != pr.MessageID {
			t.Fatalf("by key %s: %s", key, r.Body)
		}
	}
	r = s.do(t, "GET", "/v1/topics/orders/messages?key=nobody", nil)
	want(t, r, 200)
	var ml messageList
	r.JSON(t, &ml)
	if len(ml.Messages) != 0 {
		t.Fatalf("unknown key: %s", r.Body)
	}
	wantProblem(t, s.do(t, "GET", "/v1/topics/orders/messages/NOSUCHID", nil), 404)
}

func TestPublishBinary(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "blobs", 2)
	// Not UTF-8, with NULs: must come back byte for byte as bodyBase64.
	body := []byte{0, 1, 2, 0xff, 0xfe, 0x80, 'a', 0}
	for i := range 1000 {
		body = append(body, byte(i*7))
	}
	enc := base64.StdEncoding.EncodeToString(body)
	r := s.do(t, "POST", "/v1/topics/blobs/messages", map[string]any{"bodyBase64": enc})
	want(t, r, 201)
	var pr publishResult
	r.JSON(t, &pr)
	r = s.do(t, "GET", "/v1/topics/blobs/messages/"+pr.MessageID, nil)
	want(t, r, 200)
	var m message
	r.JSON(t, &m)
	if m.Body != nil || m.BodyBase64 == nil {
		t.Fatalf("binary message came back as %s", r.Body)
	}
	got, err := base64.StdEncoding.DecodeString(*m.BodyBase64)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("body differs: %v", err)
	}

	// A text body that happens to be valid base64 stays text.
	r = s.do(t, "POST", "/v1/topics/blobs/messages", map[string]any{"body": "AAAA"})
	want(t, r, 201)
	r.JSON(t, &pr)
	r = s.do(t, "GET", "/v1/topics/blobs/messages/"+pr.MessageID, nil)
	r.JSON(t, &m)
	if m.Body == nil || *m.Body != "AAAA" {
		t.Fatalf("text message came back as %s", r.Body)
	}
}

func TestPublishBatchAndBrowse(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "events", 1)

	var msgs []map[string]any
	for i := range 10 {
		m := map[string]any{"body": fmt.Sprintf("event %d", i), "keys": []string{"batch-key"}}
		if i%2 == 1 {
			m = map[string]any{"bodyBase64": base64.StdEncoding.EncodeToString([]byte{byte(i), 0xff}), "tags": "odd"}
		}
		msgs = append(msgs, m)
	}
	r := s.do(t, "POST", "/v1/topics/events/messages/batch", map[string]any{"messages": msgs})
	want(t, r, 201)
	var br struct{ Results []publishResult }
	r.JSON(t, &br)
	if len(br.Results) != 10 {
		t.Fatalf("batch results %s", r.Body)
	}
	for i, pr := range br.Results {
		// One queue: the batch lands in order at offsets 0..9.
		if pr.QueueID == nil || *pr.QueueID != 0 || pr.QueueOffset == nil || *pr.QueueOffset != int64(i) {
			t.Fatalf("result %d: %+v", i, pr)
		}
	}

	// Browse the whole queue, then in pages.
	r = s.do(t, "GET", "/v1/topics/events/messages?queueId=0&offset=0&limit=100", nil)
	want(t, r, 200)
	var ml messageList
	r.JSON(t, &ml)
	if len(ml.Messages) != 10 || *ml.NextOffset != 10 || *ml.MaxOffset != 10 || *ml.MinOffset != 0 {
		t.Fatalf("browse %s", r.Body)
	}
	for i, m := range ml.Messages {
		if m.MessageID != br.Results[i].MessageID || *m.QueueOffset != int64(i) {
			t.Fatalf("browse message %d: %+v", i, m)
		}
		if (i%2 == 0) != (m.Body != nil) {
			t.Fatalf("browse message %d has the wrong body field: %+v", i, m)
		}
	}
	var seen []string
	next := int64(0)
	for range 10 {
		r = s.do(t, "GET", fmt.Sprintf("/v1/topics/events/messages?queueId=0&offset=%d&limit=3", next), nil)
		want(t, r, 200)
		ml = messageList{}
		r.JSON(t, &ml)
		for _, m := range ml.Messages {
			seen = append(seen, m.MessageID)
		}
		if len(ml.Messages) == 0 {
			break
		}
		next = *ml.NextOffset
	}
	if len(seen) != 10 {
		t.Fatalf("paged browse saw %d messages", len(seen))
	}

	// Filtered browse: only the odd ones.
	r = s.do(t, "GET", "/v1/topics/events/messages?queueId=0&limit=100&filter=odd", nil)
	want(t, r, 200)
	ml = messageList{}
	r.JSON(t, &ml)
	if len(ml.Messages) != 5 {
		t.Fatalf("filtered browse %s", r.Body)
	}

	// The batch shares a key.
	r = s.do(t, "GET", "/v1/topics/events/messages?key=batch-key", nil)
	ml = messageList{}
	r.JSON(t, &ml)
	if len(ml.Messages) != 5 {
		t.Fatalf("by key: %d messages, want 5", len(ml.Messages))
	}
}

func TestShardingKeySameQueue(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 8)
	queues := map[string]int{}
	last := map[string]int64{}
	for i := range 40 {
		key := fmt.Sprintf("customer-%d", i%4)
		r := s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint(i), "shardingKey": key})
		want(t, r, 201)
		var pr publishResult
		r.JSON(t, &pr)
		if q, ok := queues[key]; ok {
			if q != *pr.QueueID {
				t.Fatalf("%s went to queue %d and %d", key, q, *pr.QueueID)
			}
			if *pr.QueueOffset <= last[key] {
				t.Fatalf("%s: offset %d after %d", key, *pr.QueueOffset, last[key])
			}
		}
		queues[key], last[key] = *pr.QueueID, *pr.QueueOffset
	}
	// Without a key, messages spread round-robin over the queues.
	used := map[int]bool{}
	for i := range 16 {
		r := s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": fmt.Sprint(i)})
		var pr publishResult
		r.JSON(t, &pr)
		used[*pr.QueueID] = true
	}
	if len(used) != 8 {
		t.Fatalf("round-robin used %d of 8 queues", len(used))
	}
}

func TestPublishDelayed(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "later", 2)
	r := s.do(t, "POST", "/v1/topics/later/messages", map[string]any{"body": "soon", "delaySeconds": 3600})
	if r.Status == 400 && strings.Contains(string(r.Body), "not supported yet") {
		t.Skipf("the engine does not support delayed messages yet: %s", r.Body)
	}
	want(t, r, 201)
	var pr publishResult
	r.JSON(t, &pr)
	if pr.DeliverAt == "" || !rfc3339ms.MatchString(pr.DeliverAt) || pr.QueueID != nil || pr.QueueOffset != nil {
		t.Fatalf("delayed publish result %s: want deliverAt and no queue position", r.Body)
	}
}
