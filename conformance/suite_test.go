package conformance

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mqgate/mqgate/backend/jetstream/jstest"
)

var cluster *jstest.Cluster

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mqgate-conf-*")
	if err != nil {
		panic(err)
	}
	cluster, err = jstest.Start(dir, 3)
	if err != nil {
		panic(err)
	}
	code := m.Run()
	cluster.Shutdown()
	os.RemoveAll(dir)
	os.Exit(code)
}

// embeddedOnly names the rules that hold on the embedded backend only, and why.
var embeddedOnly = map[string]string{
	"AckAfterLeaseEnds": "embedded remembers every ack (tombstones); JetStream answers ok after the lease only once the ack floor passed the message",
	"OffsetsRetryRow":   "JetStream retries stay on the group's consumer (NAK with delay): there is no %RETRY% queue to list",
}

type rule struct {
	name string
	run  func(t *testing.T, c *client)
}

var rules = []rule{
	{"PublishReceiveAckAcrossInstances", rulePublishReceiveAck},
	{"ForgedHandleInvalid", ruleForgedHandle},
	{"StaleHandleExpired", ruleStaleHandle},
	{"ExtendThenAck", ruleExtendThenAck},
	{"NackThenAckExpired", ruleNackThenAck},
	{"NackLevelNeverEarly", ruleNackNeverEarly},
	{"DLQAfterMaxReconsumeAndRedrive", ruleDLQ},
	{"DeliverAtNeverEarly", ruleDeliverAt},
	{"BatchAllDelivered", ruleBatch},
	{"TagFilter", ruleTagFilter},
	{"ReceiveValidation", ruleValidation},
	{"LookupByIDAndKey", ruleLookupByID},
	{"AckAfterLeaseEnds", ruleAckAfterLeaseEnds},
	{"OffsetsRetryRow", ruleOffsetsRetryRow},
	{"DelayLevelAboveLastIsLast", ruleLevelAboveLast},
	{"OffsetsReset", ruleOffsetsReset},
	{"OrderlyAcrossGrowth", ruleOrderlyAcrossGrowth},
	{"IdempotentPublish", ruleIdempotentPublish},
	{"NackReasonInDLQ", ruleNackReasonInDLQ},
	{"BlockedKeys", ruleBlockedKeys},
	{"PauseResume", rulePauseResume},
	{"EmptyReceiveReasons", ruleEmptyReceiveReasons},
	{"FilterJobs", ruleFilterJobs},
}

func TestConformance(t *testing.T) {
	targets := []struct {
		name  string
		start func(t *testing.T) target
	}{
		{"embedded", startEmbedded},
		{"jetstream", func(t *testing.T) target { return startJetStream(t, cluster) }},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			target := tg.start(t)
			for _, r := range rules {
				t.Run(r.name, func(t *testing.T) {
					if why, ok := embeddedOnly[r.name]; ok && target.name != "embedded" {
						t.Skip("embedded only: " + why)
					}
					r.run(t, &client{t: t, tg: target, p: r.name})
				})
			}
		})
	}
}

// client speaks the HTTP API to one target; p prefixes every name.
type client struct {
	t  *testing.T
	tg target
	p  string
}

func (c *client) do(method, u string, body, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, u, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("decode %s: %v", raw, err)
		}
	}
	return resp.StatusCode
}

func (c *client) must(method, u string, body, out any, want ...int) {
	c.t.Helper()
	st := c.do(method, u, body, out)
	for _, w := range want {
		if st == w {
			return
		}
	}
	c.t.Fatalf("%s %s → %d, want %v", method, u, st, want)
}

type message struct {
	MessageID      string    `json:"messageId"`
	Topic          string    `json:"topic"`
	Body           string    `json:"body"`
	Tags           string    `json:"tags"`
	ReconsumeTimes int       `json:"reconsumeTimes"`
	ReceiptHandle  string    `json:"receiptHandle"`
	InvisibleUntil time.Time `json:"invisibleUntil"`
}

// setup makes the rule's topic (one queue) and group.
func (c *client) setup(group map[string]any) {
	c.must("PUT", c.tg.lb+"/v1/topics/"+c.p, map[string]any{"queues": 1}, nil, 201)
	cfg := map[string]any{"subscriptions": []map[string]any{{"topic": c.p}},
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}
	for k, v := range group {
		cfg[k] = v
	}
	c.must("PUT", c.tg.lb+"/v1/groups/"+c.p, cfg, nil, 201)
}

func (c *client) publish(body map[string]any) string {
	var r struct {
		MessageID string `json:"messageId"`
	}
	c.must("POST", c.tg.lb+"/v1/topics/"+c.p+"/messages", body, &r, 201)
	return r.MessageID
}

func (c *client) receive(base string, max, wait, invisible int) []message {
	var r struct {
		Messages []message `json:"messages"`
	}
	body := map[string]any{"maxMessages": max, "waitSeconds": wait}
	if invisible > 0 {
		body["invisibleSeconds"] = invisible
	}
	c.must("POST", base+"/v1/groups/"+c.p+"/receive", body, &r, 200)
	return r.Messages
}

func (c *client) one(base string, wait, invisible int) message {
	c.t.Helper()
	got := c.receive(base, 1, wait, invisible)
	if len(got) != 1 {
		c.t.Fatalf("receive: %d messages, want 1", len(got))
	}
	return got[0]
}

type result struct {
	Status         string    `json:"status"`
	InvisibleUntil time.Time `json:"invisibleUntil"`
}

func (c *client) settle(base, op, h string, extra map[string]any) result {
	body := map[string]any{"receiptHandles": []string{h}}
	for k, v := range extra {
		body[k] = v
	}
	var r struct {
		Results []result `json:"results"`
	}
	c.must("POST", base+"/v1/groups/"+c.p+"/"+op, body, &r, 200)
	return r.Results[0]
}

func (c *client) wantStatus(r result, want string) {
	c.t.Helper()
	if r.Status != want {
		c.t.Fatalf("status %q, want %q", r.Status, want)
	}
}

func rulePublishReceiveAck(t *testing.T, c *client) {
	c.setup(nil)
	id := c.publish(map[string]any{"body": "hello"})
	m := c.one(c.tg.a, 5, 0)
	if m.MessageID != id || m.Body != "hello" || m.Topic != c.p || m.ReconsumeTimes != 0 {
		t.Fatalf("got %+v", m)
	}
	c.wantStatus(c.settle(c.tg.b, "ack", m.ReceiptHandle, nil), "ok")
	c.wantStatus(c.settle(c.tg.a, "ack", m.ReceiptHandle, nil), "ok")
	if got := c.receive(c.tg.lb, 1, 1, 0); len(got) != 0 {
		t.Fatalf("acked message again: %+v", got)
	}
}

func ruleForgedHandle(t *testing.T, c *client) {
	c.setup(nil)
	c.publish(map[string]any{"body": "x"})
	m := c.one(c.tg.a, 5, 0)
	c.wantStatus(c.settle(c.tg.b, "ack", m.ReceiptHandle[:len(m.ReceiptHandle)-2]+"AA", nil), "invalid")
	c.wantStatus(c.settle(c.tg.b, "ack", "not-a-handle", nil), "invalid")
	c.wantStatus(c.settle(c.tg.b, "ack", m.ReceiptHandle, nil), "ok")
}

func ruleStaleHandle(t *testing.T, c *client) {
	c.setup(nil)
	c.publish(map[string]any{"body": "x"})
	first := c.one(c.tg.a, 5, 1)
	second := c.one(c.tg.b, 10, 30)
	if second.MessageID != first.MessageID || second.ReconsumeTimes != 1 {
		t.Fatalf("redelivery %+v", second)
	}
	if time.Now().Before(first.InvisibleUntil) {
		t.Fatal("redelivered before the lease ended")
	}
	c.wantStatus(c.settle(c.tg.a, "ack", first.ReceiptHandle, nil), "expired")
	c.wantStatus(c.settle(c.tg.b, "ack", second.ReceiptHandle, nil), "ok")
}

func ruleExtendThenAck(t *testing.T, c *client) {
	c.setup(nil)
	c.publish(map[string]any{"body": "x"})
	m := c.one(c.tg.a, 5, 1)
	r := c.settle(c.tg.b, "extend", m.ReceiptHandle, map[string]any{"invisibleSeconds": 4})
	c.wantStatus(r, "ok")
	if r.InvisibleUntil.Before(time.Now().Add(3 * time.Second)) {
		t.Fatalf("invisibleUntil %v", r.InvisibleUntil)
	}
	if got := c.receive(c.tg.a, 1, 2, 0); len(got) != 0 {
		t.Fatalf("extended message delivered: %+v", got)
	}
	c.wantStatus(c.settle(c.tg.a, "ack", m.ReceiptHandle, nil), "ok")
}

func ruleNackThenAck(t *testing.T, c *client) {
	c.setup(nil)
	c.publish(map[string]any{"body": "x"})
	m := c.one(c.tg.a, 5, 30)
	c.wantStatus(c.settle(c.tg.b, "nack", m.ReceiptHandle, map[string]any{"delayLevel": 1}), "ok")
	c.wantStatus(c.settle(c.tg.a, "ack", m.ReceiptHandle, nil), "expired")
}

func ruleNackNeverEarly(t *testing.T, c *client) {
	c.setup(nil)
	c.publish(map[string]any{"body": "x"})
	m := c.one(c.tg.a, 5, 30)
	at := time.Now()
	c.wantStatus(c.settle(c.tg.b, "nack", m.ReceiptHandle, map[string]any{"delayLevel": 2}), "ok")
	r := c.one(c.tg.lb, 10, 30)
	if d := time.Since(at); d < levels[1] {
		t.Fatalf("redelivered after %v, level 2 is %v", d, levels[1])
	}
	if r.ReconsumeTimes != 1 || r.MessageID != m.MessageID {
		t.Fatalf("retry %+v", r)
	}
	c.wantStatus(c.settle(c.tg.lb, "ack", r.ReceiptHandle, nil), "ok")
}

func ruleDLQ(t *testing.T, c *client) {
	c.setup(map[string]any{"maxReconsumeTimes": 2})
	id := c.publish(map[string]any{"body": "poison"})
	for i := 0; i < 3; i++ {
		m := c.one(c.tg.lb, 10, 30)
		if m.ReconsumeTimes != i {
			t.Fatalf("failure %d: reconsumeTimes %d", i+1, m.ReconsumeTimes)
		}
		c.wantStatus(c.settle(c.tg.lb, "nack", m.ReceiptHandle, map[string]any{"delayLevel": 5}), "ok")
	}
	var dl struct {
		Messages []message `json:"messages"`
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(dl.Messages) == 0 && time.Now().Before(deadline) {
		c.must("GET", c.tg.lb+"/v1/groups/"+c.p+"/dlq?limit=10", nil, &dl, 200)
		if len(dl.Messages) == 0 {
			<-tick.C
		}
	}
	if len(dl.Messages) != 1 || dl.Messages[0].MessageID != id {
		t.Fatalf("DLQ %+v", dl.Messages)
	}
	var rd struct {
		Redriven int `json:"redriven"`
	}
	c.must("POST", c.tg.lb+"/v1/groups/"+c.p+"/dlq/redrive", map[string]any{}, &rd, 200)
	if rd.Redriven != 1 {
		t.Fatalf("redriven %d", rd.Redriven)
	}
	m := c.one(c.tg.lb, 10, 30)
	if m.MessageID != id || m.ReconsumeTimes != 0 || m.Topic != c.p {
		t.Fatalf("redriven %+v", m)
	}
	c.wantStatus(c.settle(c.tg.lb, "ack", m.ReceiptHandle, nil), "ok")
}

func ruleDeliverAt(t *testing.T, c *client) {
	c.setup(nil)
	at := time.Now().Add(1200 * time.Millisecond).UTC().Truncate(time.Millisecond)
	c.publish(map[string]any{"body": "later", "deliverAt": at.Format(time.RFC3339Nano)})
	c.one(c.tg.lb, 10, 30)
	if time.Now().Before(at) {
		t.Fatal("timer message delivered early")
	}
}

func ruleBatch(t *testing.T, c *client) {
	c.setup(nil)
	var msgs []map[string]any
	for i := 0; i < 20; i++ {
		msgs = append(msgs, map[string]any{"body": strconv.Itoa(i)})
	}
	var br struct {
		Results []struct {
			MessageID string `json:"messageId"`
		} `json:"results"`
	}
	c.must("POST", c.tg.lb+"/v1/topics/"+c.p+"/messages/batch", map[string]any{"messages": msgs}, &br, 201)
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 20 && time.Now().Before(deadline) {
		for _, m := range c.receive(c.tg.lb, 32, 2, 30) {
			seen[m.MessageID] = true
			c.settle(c.tg.lb, "ack", m.ReceiptHandle, nil)
		}
	}
	for _, r := range br.Results {
		if !seen[r.MessageID] {
			t.Fatalf("%s not received", r.MessageID)
		}
	}
}

func ruleTagFilter(t *testing.T, c *client) {
	c.must("PUT", c.tg.lb+"/v1/topics/"+c.p, map[string]any{"queues": 1}, nil, 201)
	c.must("PUT", c.tg.lb+"/v1/groups/"+c.p, map[string]any{"subscriptions": []map[string]any{{"topic": c.p, "filter": "a"}},
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}, nil, 201)
	c.publish(map[string]any{"body": "b1", "tags": "b"})
	c.publish(map[string]any{"body": "a1", "tags": "a"})
	m := c.one(c.tg.lb, 5, 30)
	if m.Body != "a1" || m.Tags != "a" {
		t.Fatalf("filter let through %+v", m)
	}
	c.settle(c.tg.lb, "ack", m.ReceiptHandle, nil)
	if got := c.receive(c.tg.lb, 1, 1, 0); len(got) != 0 {
		t.Fatalf("filtered message delivered %+v", got)
	}
}

func ruleValidation(t *testing.T, c *client) {
	c.setup(nil)
	if st := c.do("POST", c.tg.lb+"/v1/groups/"+c.p+"/receive", map[string]any{"maxMessages": 33}, nil); st != 400 {
		t.Fatalf("maxMessages 33 → %d", st)
	}
	if st := c.do("POST", c.tg.lb+"/v1/groups/nope-"+c.p+"/receive", map[string]any{"maxMessages": 1}, nil); st != 404 {
		t.Fatalf("unknown group → %d", st)
	}
	if st := c.do("POST", c.tg.lb+"/v1/groups/"+c.p+"/ack", map[string]any{"receiptHandles": []string{}}, nil); st != 400 {
		t.Fatalf("no handles → %d", st)
	}
}

func ruleLookupByID(t *testing.T, c *client) {
	c.setup(nil)
	id := c.publish(map[string]any{"body": "x", "keys": []string{"k1", "order 17/ä"}})
	c.publish(map[string]any{"body": "y", "keys": []string{"k2"}})
	id3 := c.publish(map[string]any{"body": "z", "keys": []string{"k1"}})
	var m message
	c.must("GET", c.tg.lb+"/v1/topics/"+c.p+"/messages/"+id, nil, &m, 200)
	if m.MessageID != id || m.Body != "x" {
		t.Fatalf("lookup %+v", m)
	}
	if st := c.do("GET", c.tg.lb+"/v1/topics/"+c.p+"/messages/"+"0000000000000000000000000000FFFF", nil, nil); st != 404 {
		t.Fatalf("unknown id → %d", st)
	}
	var byKey struct {
		Messages []message `json:"messages"`
	}
	c.must("GET", c.tg.lb+"/v1/topics/"+c.p+"/messages?key=k1", nil, &byKey, 200)
	if len(byKey.Messages) != 2 || byKey.Messages[0].MessageID != id || byKey.Messages[1].MessageID != id3 {
		t.Fatalf("by key k1: %+v", byKey.Messages)
	}
	c.must("GET", c.tg.lb+"/v1/topics/"+c.p+"/messages?key="+url.QueryEscape("order 17/ä"), nil, &byKey, 200)
	if len(byKey.Messages) != 1 || byKey.Messages[0].MessageID != id {
		t.Fatalf("by key with odd characters: %+v", byKey.Messages)
	}
}

func ruleAckAfterLeaseEnds(t *testing.T, c *client) {
	c.setup(nil)
	c.publish(map[string]any{"body": "x"})
	m := c.one(c.tg.a, 5, 1)
	c.wantStatus(c.settle(c.tg.a, "ack", m.ReceiptHandle, nil), "ok")
	deadline := time.Now().Add(5 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(m.InvisibleUntil.Add(100 * time.Millisecond)) {
		if time.Now().After(deadline) {
			t.Fatal("clock")
		}
		<-tick.C
	}
	c.wantStatus(c.settle(c.tg.a, "ack", m.ReceiptHandle, nil), "ok")
}

func ruleOffsetsRetryRow(t *testing.T, c *client) {
	c.setup(nil)
	c.publish(map[string]any{"body": "x"})
	m := c.one(c.tg.a, 5, 30)
	c.settle(c.tg.a, "nack", m.ReceiptHandle, map[string]any{"delayLevel": 5})
	var off struct {
		Offsets []struct {
			Topic string `json:"topic"`
		} `json:"offsets"`
	}
	deadline := time.Now().Add(5 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		c.must("GET", c.tg.lb+"/v1/groups/"+c.p+"/offsets", nil, &off, 200)
		for _, o := range off.Offsets {
			if o.Topic == "%RETRY%"+c.p {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retry row in %+v", off.Offsets)
		}
		<-tick.C
	}
}

// A delay level above the table's last is the last (policy.LevelIndex),
// for a publish and for a nack alike.
func ruleLevelAboveLast(t *testing.T, c *client) {
	c.setup(nil)
	at := time.Now()
	id := c.publish(map[string]any{"body": "x", "delayLevel": len(levels) + 7})
	m := c.one(c.tg.lb, 10, 30)
	if m.MessageID != id || time.Since(at) < levels[len(levels)-1] {
		t.Fatalf("delayed %+v after %v", m, time.Since(at))
	}
	c.wantStatus(c.settle(c.tg.a, "nack", m.ReceiptHandle, map[string]any{"delayLevel": len(levels) + 7}), "ok")
	r := c.one(c.tg.lb, 10, 30)
	if r.MessageID != id || r.ReconsumeTimes != 1 {
		t.Fatalf("retry %+v", r)
	}
	c.wantStatus(c.settle(c.tg.b, "ack", r.ReceiptHandle, nil), "ok")
}

// Reset to FIRST_OFFSET delivers the acknowledged messages again; reset
// to LAST_OFFSET skips what is pending.
func ruleOffsetsReset(t *testing.T, c *client) {
	c.setup(nil)
	ids := map[string]bool{c.publish(map[string]any{"body": "1"}): true, c.publish(map[string]any{"body": "2"}): true}
	drain := func(base string, want map[string]bool) {
		t.Helper()
		got := map[string]bool{}
		for len(got) < len(want) {
			for _, m := range c.receive(base, 2, 5, 30) {
				if !want[m.MessageID] {
					t.Fatalf("unexpected %+v", m)
				}
				got[m.MessageID] = true
				c.wantStatus(c.settle(c.tg.lb, "ack", m.ReceiptHandle, nil), "ok")
			}
		}
	}
	drain(c.tg.a, ids)
	var off struct {
		Offsets []struct {
			Topic           string `json:"topic"`
			CommittedOffset int64  `json:"committedOffset"`
			Lag             int64  `json:"lag"`
		} `json:"offsets"`
	}
	c.must("POST", c.tg.lb+"/v1/groups/"+c.p+"/offsets/reset", map[string]any{"topic": c.p, "position": "FIRST_OFFSET"}, &off, 200)
	if len(off.Offsets) == 0 || off.Offsets[0].Lag != 2 {
		t.Fatalf("after reset to FIRST_OFFSET: %+v", off.Offsets)
	}
	drain(c.tg.b, ids) // on the other instance: the reset is the group's, not one instance's
	if got := c.receive(c.tg.lb, 2, 1, 30); len(got) != 0 {
		t.Fatalf("delivered again after the reset's redelivery: %+v", got)
	}
	// Pending messages, then a reset to LAST_OFFSET: they are skipped.
	c.publish(map[string]any{"body": "3"})
	c.must("POST", c.tg.lb+"/v1/groups/"+c.p+"/offsets/reset", map[string]any{"topic": c.p, "position": "LAST_OFFSET"}, &off, 200)
	if len(off.Offsets) == 0 || off.Offsets[0].Lag != 0 {
		t.Fatalf("after reset to LAST_OFFSET: %+v", off.Offsets)
	}
	if got := c.receive(c.tg.lb, 2, 1, 30); len(got) != 0 {
		t.Fatalf("delivered after a reset to LAST_OFFSET: %+v", got)
	}
	// A config change after a reset is accepted and keeps the position
	// (on JetStream an existing consumer's start cannot be updated: it
	// answered 500).
	c.must("PUT", c.tg.b+"/v1/groups/"+c.p, map[string]any{"subscriptions": []map[string]any{{"topic": c.p}},
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"}, "maxReconsumeTimes": 5}, nil, 200)
	drain(c.tg.lb, map[string]bool{c.publish(map[string]any{"body": "4"}): true})
}

// SPEC §8.8: per-key order survives topic growth. A key that moves to a
// new queue when the topic grows from 1 to 4 queues is delivered in
// publish order: nothing of the new layout before the old backlog.
func ruleOrderlyAcrossGrowth(t *testing.T, c *client) {
	c.setup(map[string]any{"consumeMode": "ORDERLY"})
	key := ""
	for i := 0; key == ""; i++ {
		h := fnv.New32a()
		k := "moving-" + strconv.Itoa(i)
		h.Write([]byte(k))
		if h.Sum32()%4 != 0 {
			key = k // queue 0 of 1, another queue of 4
		}
	}
	var order []string
	for i := 0; i < 3; i++ {
		order = append(order, c.publish(map[string]any{"body": "old" + strconv.Itoa(i), "shardingKey": key}))
	}
	c.must("PUT", c.tg.lb+"/v1/topics/"+c.p, map[string]any{"queues": 4}, nil, 200)
	for i := 0; i < 3; i++ {
		order = append(order, c.publish(map[string]any{"body": "new" + strconv.Itoa(i), "shardingKey": key}))
	}
	for i := 0; i < len(order); {
		got := c.receive(c.tg.lb, 1, 5, 30)
		if len(got) == 0 {
			t.Fatalf("after %d of %d: nothing", i, len(order))
		}
		if got[0].MessageID != order[i] {
			t.Fatalf("message %d: got %s (%s), want %s: out of order across the growth", i, got[0].MessageID, got[0].Body, order[i])
		}
		c.wantStatus(c.settle(c.tg.lb, "ack", got[0].ReceiptHandle, nil), "ok")
		i++
	}
}
