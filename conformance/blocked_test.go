package conformance

import (
	"slices"
	"testing"
	"time"
)

type blockedEntry struct {
	ShardingKey string `json:"shardingKey"`
	MessageID   string `json:"messageId"`
	Attempts    int    `json:"attempts"`
	LastReason  string `json:"lastReason"`
	State       string `json:"state"`
}

func (c *client) blocked(base string) []blockedEntry {
	var r struct {
		Blocked []blockedEntry `json:"blocked"`
	}
	c.must("GET", base+"/v1/groups/"+c.p+"/blocked", nil, &r, 200)
	return r.Blocked
}

// eventually retries check (every 100 ms, at most 10 s) until it reports
// true: a suspended head, a dead letter and a redelivery arrive on their
// own time on either backend.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *client) dlqIDs() []string {
	var r struct {
		Messages []struct {
			MessageID  string `json:"messageId"`
			LastReason string `json:"lastReason"`
		} `json:"messages"`
	}
	c.must("GET", c.tg.lb+"/v1/groups/"+c.p+"/dlq?limit=20", nil, &r, 200)
	var ids []string
	for _, m := range r.Messages {
		ids = append(ids, m.MessageID+" "+m.LastReason)
	}
	return ids
}

// ruleBlockedKeys (docs/stuck-consumers.md): an ORDERLY queue whose head
// was nacked is listed BLOCKED with its attempts and reason; skip sends
// the head to the DLQ ("skipped by operator; last: …") and the queue
// continues; park sends the key's messages to the DLQ as they reach the
// head while other keys continue; resume redelivers them in order.
func ruleBlockedKeys(t *testing.T, c *client) {
	c.setup(map[string]any{"consumeMode": "ORDERLY", "maxReconsumeTimes": 10})
	a1 := c.publish(map[string]any{"body": "a1", "shardingKey": "a"})
	a2 := c.publish(map[string]any{"body": "a2", "shardingKey": "a"})
	m := c.one(c.tg.a, 10, 30)
	if m.MessageID != a1 {
		t.Fatalf("head %s, want %s", m.MessageID, a1)
	}
	c.settle(c.tg.b, "nack", m.ReceiptHandle, map[string]any{"delayLevel": 4, "reason": "boom"})
	eventually(t, "a1 listed as blocked", func() bool {
		got := c.blocked(c.tg.b)
		return len(got) == 1 && got[0].State == "BLOCKED" && got[0].MessageID == a1 && got[0].ShardingKey == "a" &&
			got[0].Attempts >= 1 && got[0].LastReason == "boom"
	})
	c.must("POST", c.tg.lb+"/v1/groups/"+c.p+"/blocked/skip", map[string]any{"topic": c.p, "shardingKey": "nope"}, nil, 404)
	var e blockedEntry
	c.must("POST", c.tg.a+"/v1/groups/"+c.p+"/blocked/skip", map[string]any{"topic": c.p, "shardingKey": "a"}, &e, 200)
	if e.State != "SKIPPED" || e.MessageID != a1 {
		t.Fatalf("skip: %+v", e)
	}
	eventually(t, "a1 dead-lettered", func() bool {
		return slices.Equal(c.dlqIDs(), []string{a1 + " skipped by operator; last: boom"})
	})
	var next message
	eventually(t, "a2 after the skip", func() bool {
		got := c.receive(c.tg.lb, 1, 1, 30)
		if len(got) > 0 {
			next = got[0]
		}
		return len(got) > 0
	})
	if next.MessageID != a2 {
		t.Fatalf("after skip: %s, want %s", next.MessageID, a2)
	}

	// Park while a2 is leased: a2 and a3 go to the DLQ, b1 is delivered.
	c.must("POST", c.tg.b+"/v1/groups/"+c.p+"/blocked/park", map[string]any{"topic": c.p, "shardingKey": "a"}, &e, 200)
	if e.State != "PARKED" {
		t.Fatalf("park: %+v", e)
	}
	a3 := c.publish(map[string]any{"body": "a3", "shardingKey": "a"})
	b1 := c.publish(map[string]any{"body": "b1", "shardingKey": "b"})
	eventually(t, "b1 past the parked key", func() bool {
		for _, m := range c.receive(c.tg.lb, 1, 1, 30) {
			if m.MessageID != b1 {
				t.Fatalf("delivered %s (%s) of a parked key", m.MessageID, m.Body)
			}
			c.wantStatus(c.settle(c.tg.lb, "ack", m.ReceiptHandle, nil), "ok")
			return true
		}
		return false
	})
	eventually(t, "a listed as parked with a2, a3", func() bool {
		got := c.blocked(c.tg.a)
		return len(got) == 1 && got[0].State == "PARKED" && got[0].Attempts == 2 && got[0].MessageID == a2
	})
	c.must("POST", c.tg.a+"/v1/groups/"+c.p+"/blocked/resume", map[string]any{"topic": c.p, "shardingKey": "a"}, &e, 200)
	if e.State != "RESUMED" || e.Attempts != 2 {
		t.Fatalf("resume: %+v", e)
	}
	for _, want := range []string{a2, a3} {
		var got message
		eventually(t, "a released message", func() bool {
			ms := c.receive(c.tg.lb, 1, 1, 30)
			if len(ms) > 0 {
				got = ms[0]
			}
			return len(ms) > 0
		})
		if got.MessageID != want {
			t.Fatalf("after resume: %s (%s), want %s", got.MessageID, got.Body, want)
		}
		c.wantStatus(c.settle(c.tg.lb, "ack", got.ReceiptHandle, nil), "ok")
	}
	if got := c.blocked(c.tg.b); len(got) != 0 {
		t.Fatalf("blocked after resume: %+v", got)
	}
	c.must("POST", c.tg.lb+"/v1/groups/"+c.p+"/blocked/resume", map[string]any{"topic": c.p, "shardingKey": "a"}, nil, 404)
}
