package jetstream_test

import (
	"slices"
	"testing"
	"time"
)

type blockedKey struct {
	Topic       string `json:"topic"`
	QueueID     int    `json:"queueId"`
	ShardingKey string `json:"shardingKey"`
	MessageID   string `json:"messageId"`
	Attempts    int    `json:"attempts"`
	LastReason  string `json:"lastReason"`
	State       string `json:"state"`
}

func (e *env) blocked(base, group string) []blockedKey {
	var r struct {
		Blocked []blockedKey `json:"blocked"`
	}
	mustDo(e.t, "GET", base+"/v1/groups/"+group+"/blocked", nil, &r, 200)
	return r.Blocked
}

// receiveOne receives until one message comes (a fetch may answer
// nothing while a redelivery is on its way), alternating instances.
func (e *env) receiveOne(group string, within time.Duration) msg {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for i := 0; time.Now().Before(deadline); i++ {
		if got := e.receive(e.gws[i%2].URL(), group, 1, 1, 30); len(got) > 0 {
			return got[0]
		}
	}
	e.t.Fatalf("%s: nothing received in %v", group, within)
	return msg{}
}

// Blocked keys on JetStream, through two instances: a nacked ORDERLY head
// is listed the same by both, skip dead-letters it with the embedded
// reason, park dead-letters the key's head and later messages while other
// keys continue, and resume redrives them in order.
func TestBlockedKeysAcrossInstances(t *testing.T) {
	e := newEnv(t)
	e.topic("blk", 1)
	e.group("blk-g", groupCfg("blk", map[string]any{"consumeMode": "ORDERLY", "maxReconsumeTimes": 10}))
	a1 := e.publish(e.lb.URL, "blk", map[string]any{"body": "a1", "shardingKey": "a"})
	a2 := e.publish(e.lb.URL, "blk", map[string]any{"body": "a2", "shardingKey": "a"})
	a3 := e.publish(e.lb.URL, "blk", map[string]any{"body": "a3", "shardingKey": "a"})

	if got := e.blocked(e.gws[0].URL(), "blk-g"); len(got) != 0 {
		t.Fatalf("blocked before any failure: %+v", got)
	}
	m := e.receiveOne("blk-g", 10*time.Second)
	if m.MessageID != a1 {
		t.Fatalf("head = %s, want %s", m.MessageID, a1)
	}
	e.settle(e.gws[0].URL(), "blk-g", "nack", []string{m.ReceiptHandle}, map[string]any{"delayLevel": 4, "reason": "boom"})
	for _, g := range e.gws { // the same answer from both instances
		got := e.blocked(g.URL(), "blk-g")
		if len(got) != 1 || got[0].State != "BLOCKED" || got[0].ShardingKey != "a" || got[0].MessageID != a1 ||
			got[0].Attempts != 1 || got[0].LastReason != "boom" || got[0].Topic != "blk" || got[0].QueueID != 0 {
			t.Fatalf("%s: blocked = %+v, want a1 BLOCKED after 1 attempt (boom)", g.URL(), got)
		}
	}
	// Not blocked on that key: 404; not ORDERLY: 409.
	mustDo(t, "POST", e.lb.URL+"/v1/groups/blk-g/blocked/skip", map[string]any{"topic": "blk", "shardingKey": "zz"}, nil, 404)
	e.group("blk-c", groupCfg("blk", nil))
	mustDo(t, "GET", e.lb.URL+"/v1/groups/blk-c/blocked", nil, nil, 409)

	// Skip through the other instance: a1 goes to the DLQ, a2 comes next.
	var sk blockedKey
	mustDo(t, "POST", e.gws[1].URL()+"/v1/groups/blk-g/blocked/skip", map[string]any{"topic": "blk", "shardingKey": "a"}, &sk, 200)
	if sk.State != "SKIPPED" || sk.MessageID != a1 {
		t.Fatalf("skip = %+v", sk)
	}
	var dl deadLetters
	mustDo(t, "GET", e.lb.URL+"/v1/groups/blk-g/dlq?limit=10", nil, &dl, 200)
	if len(dl.Messages) != 1 || dl.Messages[0].MessageID != a1 || dl.Messages[0].LastReason != "skipped by operator; last: boom" {
		t.Fatalf("DLQ after skip = %+v", dl.Messages)
	}
	m = e.receiveOne("blk-g", 10*time.Second)
	if m.MessageID != a2 || m.ReconsumeTimes != 0 {
		t.Fatalf("after skip: %+v, want %s", m, a2)
	}
	if got := e.blocked(e.lb.URL, "blk-g"); len(got) != 0 {
		t.Fatalf("blocked after skip = %+v", got)
	}

	// Park "a" while a2 is leased: a2 goes to the DLQ now (its handle is
	// expired), a3 when it reaches the head; b1 is delivered.
	var pk blockedKey
	mustDo(t, "POST", e.gws[0].URL()+"/v1/groups/blk-g/blocked/park", map[string]any{"topic": "blk", "shardingKey": "a"}, &pk, 200)
	if pk.State != "PARKED" || pk.MessageID != a2 || pk.Attempts != 1 {
		t.Fatalf("park = %+v, want a2 parked", pk)
	}
	if st := status(e.settle(e.lb.URL, "blk-g", "ack", []string{m.ReceiptHandle}, nil)); st[0] != "expired" {
		t.Fatalf("ack of the parked head: %v, want expired", st)
	}
	b1 := e.publish(e.lb.URL, "blk", map[string]any{"body": "b1", "shardingKey": "b"})
	m = e.receiveOne("blk-g", 10*time.Second)
	if m.MessageID != b1 {
		t.Fatalf("after park: %+v, want %s (a3 parked)", m, b1)
	}
	e.settle(e.lb.URL, "blk-g", "ack", []string{m.ReceiptHandle}, nil)
	for _, g := range e.gws {
		got := e.blocked(g.URL(), "blk-g")
		if len(got) != 1 || got[0].State != "PARKED" || got[0].Attempts != 2 || got[0].MessageID != a2 {
			t.Fatalf("%s: blocked = %+v, want a parked with a2, a3", g.URL(), got)
		}
	}
	mustDo(t, "GET", e.lb.URL+"/v1/groups/blk-g/dlq?limit=10", nil, &dl, 200)
	var ids []string
	for _, d := range dl.Messages {
		ids = append(ids, d.MessageID)
	}
	if !slices.Equal(ids, []string{a1, a2, a3}) {
		t.Fatalf("DLQ = %v, want a1 a2 a3", ids)
	}

	// Resume through the other instance: a2 then a3, in order.
	var rs blockedKey
	mustDo(t, "POST", e.gws[1].URL()+"/v1/groups/blk-g/blocked/resume", map[string]any{"topic": "blk", "shardingKey": "a"}, &rs, 200)
	if rs.State != "RESUMED" || rs.Attempts != 2 {
		t.Fatalf("resume = %+v", rs)
	}
	for _, want := range []string{a2, a3} {
		m = e.receiveOne("blk-g", 10*time.Second)
		if m.MessageID != want {
			t.Fatalf("after resume: %+v, want %s", m, want)
		}
		e.settle(e.lb.URL, "blk-g", "ack", []string{m.ReceiptHandle}, nil)
	}
	if got := e.blocked(e.lb.URL, "blk-g"); len(got) != 0 {
		t.Fatalf("blocked after resume = %+v", got)
	}
	mustDo(t, "POST", e.lb.URL+"/v1/groups/blk-g/blocked/resume", map[string]any{"topic": "blk", "shardingKey": "a"}, nil, 404)
	mustDo(t, "GET", e.lb.URL+"/v1/groups/blk-g/dlq?limit=10", nil, &dl, 200)
	if len(dl.Messages) != 1 {
		t.Fatalf("DLQ after resume = %+v, want a1 only", dl.Messages)
	}
}

// A BROADCASTING ORDERLY group: skip drops the head for its consumer
// only (no DLQ copy); park answers 409; consumerId is required.
func TestBlockedKeysBroadcast(t *testing.T) {
	e := newEnv(t)
	e.topic("blkb", 1)
	e.group("blkb-g", groupCfg("blkb", map[string]any{"consumeMode": "ORDERLY", "messageModel": "BROADCASTING", "maxReconsumeTimes": 10}))
	x1 := e.publish(e.lb.URL, "blkb", map[string]any{"body": "x1", "shardingKey": "x"})
	x2 := e.publish(e.lb.URL, "blkb", map[string]any{"body": "x2", "shardingKey": "x"})
	recv := func(cid string) msg {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			var r struct {
				Messages []msg `json:"messages"`
			}
			mustDo(t, "POST", e.lb.URL+"/v1/groups/blkb-g/receive", map[string]any{"maxMessages": 1, "waitSeconds": 1, "consumerId": cid}, &r, 200)
			if len(r.Messages) > 0 {
				return r.Messages[0]
			}
		}
		t.Fatalf("%s: nothing", cid)
		return msg{}
	}
	m := recv("c1")
	e.settle(e.lb.URL, "blkb-g", "nack", []string{m.ReceiptHandle}, map[string]any{"delayLevel": 4, "reason": "c1 failed"})
	mustDo(t, "GET", e.lb.URL+"/v1/groups/blkb-g/blocked", nil, nil, 400)
	var r struct {
		Blocked []blockedKey `json:"blocked"`
	}
	mustDo(t, "GET", e.gws[1].URL()+"/v1/groups/blkb-g/blocked?consumerId=c1", nil, &r, 200)
	if len(r.Blocked) != 1 || r.Blocked[0].MessageID != x1 || r.Blocked[0].LastReason != "c1 failed" {
		t.Fatalf("c1 blocked = %+v", r.Blocked)
	}
	mustDo(t, "GET", e.gws[1].URL()+"/v1/groups/blkb-g/blocked?consumerId=c2", nil, &r, 200)
	if len(r.Blocked) != 0 {
		t.Fatalf("c2 blocked = %+v", r.Blocked)
	}
	mustDo(t, "POST", e.lb.URL+"/v1/groups/blkb-g/blocked/park", map[string]any{"topic": "blkb", "shardingKey": "x", "consumerId": "c1"}, nil, 409)
	mustDo(t, "POST", e.gws[0].URL()+"/v1/groups/blkb-g/blocked/skip", map[string]any{"topic": "blkb", "shardingKey": "x", "consumerId": "c1"}, nil, 200)
	if m := recv("c1"); m.MessageID != x2 {
		t.Fatalf("c1 after skip: %+v, want %s", m, x2)
	}
	if m := recv("c2"); m.MessageID != x1 {
		t.Fatalf("c2: %+v, want %s (untouched)", m, x1)
	}
	var dl deadLetters
	mustDo(t, "GET", e.lb.URL+"/v1/groups/blkb-g/dlq?limit=10", nil, &dl, 200)
	if len(dl.Messages) != 0 {
		t.Fatalf("broadcast skip made a DLQ copy: %+v", dl.Messages)
	}
}

// A head whose lease ran out is listed as blocked from its next
// delivery, with the lease's reason, on both instances.
func TestBlockedAfterLeaseExpiry(t *testing.T) {
	e := newEnv(t)
	e.topic("blke", 1)
	e.group("blke-g", groupCfg("blke", map[string]any{"consumeMode": "ORDERLY", "invisibleSeconds": 1}))
	x := e.publish(e.lb.URL, "blke", map[string]any{"body": "x", "shardingKey": "x"})
	if got := e.receive(e.gws[0].URL(), "blke-g", 1, 5, 1); len(got) != 1 || got[0].MessageID != x || got[0].ReconsumeTimes != 0 {
		t.Fatalf("first delivery: %+v", got)
	}
	// After the lease ran out. A redelivery that reached a waiting pull
	// after its receive answered, and waited in the stash longer than
	// half the ack wait, is sent round once more: at least 1.
	m := e.receiveOne("blke-g", 10*time.Second)
	if m.MessageID != x || m.ReconsumeTimes < 1 {
		t.Fatalf("redelivery: %+v", m)
	}
	for _, g := range e.gws {
		got := e.blocked(g.URL(), "blke-g")
		if len(got) != 1 || got[0].MessageID != x || got[0].Attempts != m.ReconsumeTimes || got[0].LastReason != "lease expired without ack or nack" {
			t.Fatalf("%s: blocked = %+v", g.URL(), got)
		}
	}
	e.settle(e.lb.URL, "blke-g", "ack", []string{m.ReceiptHandle}, nil)
	if got := e.blocked(e.lb.URL, "blke-g"); len(got) != 0 {
		t.Fatalf("blocked after the ack: %+v", got)
	}
}

// A failing head's record names its message: after the topic is deleted
// and made again, the new head at the same sequence is not listed as
// the old one.
func TestBlockedNotStaleAfterTopicRecreated(t *testing.T) {
	e := newEnv(t)
	e.topic("blkr", 1)
	e.group("blkr-g", groupCfg("blkr", map[string]any{"consumeMode": "ORDERLY"}))
	e.publish(e.lb.URL, "blkr", map[string]any{"body": "x", "shardingKey": "x"})
	m := e.receiveOne("blkr-g", 10*time.Second)
	e.settle(e.lb.URL, "blkr-g", "nack", []string{m.ReceiptHandle}, map[string]any{"delayLevel": 4})
	if got := e.blocked(e.lb.URL, "blkr-g"); len(got) != 1 {
		t.Fatalf("blocked = %+v, want x", got)
	}
	mustDo(t, "DELETE", e.lb.URL+"/v1/topics/blkr", nil, nil, 204, 200)
	e.topic("blkr", 1)
	y := e.publish(e.lb.URL, "blkr", map[string]any{"body": "y", "shardingKey": "y"})
	if m := e.receiveOne("blkr-g", 10*time.Second); m.MessageID != y {
		t.Fatalf("after the topic was made again: %+v, want %s", m, y)
	}
	if got := e.blocked(e.lb.URL, "blkr-g"); len(got) != 0 {
		t.Fatalf("blocked after the topic was made again = %+v, want none", got)
	}
}
