package conformance

import (
	"slices"
	"testing"
	"time"
)

type emptyReason struct {
	Reason      string   `json:"reason"`
	BlockedKeys []string `json:"blockedKeys"`
}

// receiveEmpty is a receive expected to answer no message; it returns
// the reason given.
func (c *client) receiveEmpty(base, group string, wait int) emptyReason {
	c.t.Helper()
	var r struct {
		Messages []message    `json:"messages"`
		Empty    *emptyReason `json:"empty"`
	}
	c.must("POST", base+"/v1/groups/"+group+"/receive", map[string]any{"maxMessages": 1, "waitSeconds": wait, "invisibleSeconds": 30}, &r, 200)
	if len(r.Messages) != 0 || r.Empty == nil {
		c.t.Fatalf("receive of %s: %d messages, empty %+v; want none with a reason", group, len(r.Messages), r.Empty)
	}
	return *r.Empty
}

// rulePauseResume (API.md "Pause"): a pause through one instance holds on
// the other (GET says paused, a receive answers empty with PAUSED), and a
// resume through the first wakes a receive parked on the second.
func rulePauseResume(t *testing.T, c *client) {
	c.setup(nil)
	id := c.publish(map[string]any{"body": "held"})
	var g struct {
		Paused bool `json:"paused"`
	}
	c.must("POST", c.tg.a+"/v1/groups/"+c.p+"/pause", nil, &g, 200)
	if !g.Paused {
		t.Fatal("pause answered paused false")
	}
	c.must("GET", c.tg.b+"/v1/groups/"+c.p, nil, &g, 200)
	if !g.Paused {
		t.Fatal("the other instance does not see the pause")
	}
	if e := c.receiveEmpty(c.tg.b, c.p, 0); e.Reason != "PAUSED" {
		t.Fatalf("paused receive: reason %q, want PAUSED", e.Reason)
	}
	done := make(chan []message, 1)
	go func() {
		var r struct {
			Messages []message `json:"messages"`
		}
		c.do("POST", c.tg.b+"/v1/groups/"+c.p+"/receive", map[string]any{"maxMessages": 1, "waitSeconds": 15, "invisibleSeconds": 30}, &r)
		done <- r.Messages
	}()
	time.Sleep(300 * time.Millisecond) // let it park on the pause
	start := time.Now()
	c.must("POST", c.tg.a+"/v1/groups/"+c.p+"/resume", nil, &g, 200)
	got := <-done
	if len(got) != 1 || got[0].MessageID != id {
		t.Fatalf("receive parked across the resume: %+v, want %s", got, id)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the parked receive answered %v after the resume", d)
	}
	c.wantStatus(c.settle(c.tg.lb, "ack", got[0].ReceiptHandle, nil), "ok")
}

// ruleEmptyReceiveReasons (API.md "Receive diagnostics"): NO_MESSAGES,
// NOT_VISIBLE_YET while the one message is leased, KEYS_BLOCKED naming
// the key of an ORDERLY head in flight.
func ruleEmptyReceiveReasons(t *testing.T, c *client) {
	c.setup(map[string]any{"consumeMode": "ORDERLY"})
	conc := c.p + "-c"
	c.must("PUT", c.tg.lb+"/v1/groups/"+conc, map[string]any{"subscriptions": []map[string]any{{"topic": c.p}},
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}, nil, 201)
	if e := c.receiveEmpty(c.tg.a, conc, 0); e.Reason != "NO_MESSAGES" {
		t.Fatalf("nothing published: %q, want NO_MESSAGES", e.Reason)
	}
	c.publish(map[string]any{"body": "1", "shardingKey": "k1"})
	c.publish(map[string]any{"body": "2", "shardingKey": "k1"})

	var r struct {
		Messages []message `json:"messages"`
	}
	c.must("POST", c.tg.a+"/v1/groups/"+conc+"/receive", map[string]any{"maxMessages": 2, "waitSeconds": 5, "invisibleSeconds": 30}, &r, 200)
	for len(r.Messages) < 2 { // the second may come in a second receive
		var more struct {
			Messages []message `json:"messages"`
		}
		c.must("POST", c.tg.a+"/v1/groups/"+conc+"/receive", map[string]any{"maxMessages": 2, "waitSeconds": 5, "invisibleSeconds": 30}, &more, 200)
		if len(more.Messages) == 0 {
			t.Fatalf("CONCURRENTLY: %d of 2 messages received", len(r.Messages))
		}
		r.Messages = append(r.Messages, more.Messages...)
	}
	if e := c.receiveEmpty(c.tg.a, conc, 0); e.Reason != "NOT_VISIBLE_YET" {
		t.Fatalf("all leased: %q, want NOT_VISIBLE_YET", e.Reason)
	}

	head := c.one(c.tg.a, 5, 30)
	if e := c.receiveEmpty(c.tg.b, c.p, 1); e.Reason != "KEYS_BLOCKED" || !slices.Equal(e.BlockedKeys, []string{"k1"}) {
		t.Fatalf("ORDERLY head out: %+v, want KEYS_BLOCKED [k1]", e)
	}
	c.wantStatus(c.settle(c.tg.lb, "ack", head.ReceiptHandle, nil), "ok")
}
