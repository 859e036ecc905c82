package conformance

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// publishKey publishes body with an Idempotency-Key through base: the
// status, the Idempotent-Replayed header and the answer's fields.
func (c *client) publishKey(base, key string, body any) (int, string, map[string]any) {
	c.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+"/v1/topics/"+c.p+"/messages", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var r map[string]any
	_ = json.Unmarshal(out, &r)
	return resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), r
}

// ruleIdempotentPublish: a repeat of an Idempotency-Key, on the other
// instance, answers the original result replayed and stores nothing;
// another body under the key answers 422.
func ruleIdempotentPublish(t *testing.T, c *client) {
	c.setup(nil)
	st, rep, first := c.publishKey(c.tg.a, "k-1", map[string]any{"body": "one"})
	if st != 201 || rep != "" {
		t.Fatalf("first: %d %q %v", st, rep, first)
	}
	st, rep, again := c.publishKey(c.tg.b, "k-1", map[string]any{"body": "one"})
	if st != 201 || rep != "true" || again["replayed"] != true || again["messageId"] != first["messageId"] ||
		again["queueId"] != first["queueId"] || again["queueOffset"] != first["queueOffset"] {
		t.Fatalf("repeat: %d %q %v, want the replay of %v", st, rep, again, first)
	}
	if st, _, _ := c.publishKey(c.tg.a, "k-1", map[string]any{"body": "two"}); st != 422 {
		t.Fatalf("other body: %d, want 422", st)
	}
	got := c.receive(c.tg.lb, 32, 2, 30)
	if len(got) != 1 || got[0].MessageID != first["messageId"] {
		t.Fatalf("received %+v, want the one message", got)
	}
	c.wantStatus(c.settle(c.tg.lb, "ack", got[0].ReceiptHandle, nil), "ok")
}

// ruleNackReasonInDLQ: a nack's reason is the DLQ copy's lastReason.
func ruleNackReasonInDLQ(t *testing.T, c *client) {
	c.setup(nil)
	id := c.publish(map[string]any{"body": "poison"})
	m := c.one(c.tg.a, 10, 30)
	c.wantStatus(c.settle(c.tg.b, "nack", m.ReceiptHandle, map[string]any{"delayLevel": -1, "reason": "bad payload"}), "ok")
	var dl struct {
		Messages []struct {
			MessageID  string `json:"messageId"`
			LastReason string `json:"lastReason"`
		} `json:"messages"`
	}
	// The embedded backend moves a dead letter asynchronously.
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(dl.Messages) == 0 && time.Now().Before(deadline) {
		c.must("GET", c.tg.lb+"/v1/groups/"+c.p+"/dlq?limit=10", nil, &dl, 200)
		if len(dl.Messages) == 0 {
			<-tick.C
		}
	}
	if len(dl.Messages) != 1 || dl.Messages[0].MessageID != id || dl.Messages[0].LastReason != "bad payload" {
		t.Fatalf("DLQ %+v, want %s with lastReason", dl.Messages, id)
	}
}
