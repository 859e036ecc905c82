package jetstream_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func groupCfg(topic string, extra map[string]any) map[string]any {
	cfg := map[string]any{
		"subscriptions": []map[string]any{{"topic": topic}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// A handle issued by instance A settles on instance B.
func TestReceiveOnAAckOnB(t *testing.T) {
	e := newEnv(t)
	a, b := e.gws[0].URL(), e.gws[1].URL()
	e.topic("ab", 4)
	e.group("ab-g", groupCfg("ab", map[string]any{"invisibleSeconds": 30}))
	id := e.publish(e.lb.URL, "ab", map[string]any{"body": "hello"})
	got := e.receive(a, "ab-g", 5, 5, 0)
	if len(got) != 1 || got[0].MessageID != id || got[0].Body != "hello" || got[0].Topic != "ab" {
		t.Fatalf("receive on A = %+v, want %s", got, id)
	}
	if st := status(e.settle(b, "ab-g", "ack", []string{got[0].ReceiptHandle}, nil)); st[0] != "ok" {
		t.Fatalf("ack on B = %v", st)
	}
	if st := status(e.settle(a, "ab-g", "ack", []string{got[0].ReceiptHandle}, nil)); st[0] != "ok" {
		t.Fatalf("second ack on A = %v, want ok", st)
	}
	if st := status(e.settle(a, "ab-g", "ack", []string{got[0].ReceiptHandle + "x"}, nil)); st[0] != "invalid" {
		t.Fatalf("forged handle = %v, want invalid", st)
	}
	if again := e.receive(b, "ab-g", 5, 1, 0); len(again) != 0 {
		t.Fatalf("acked message delivered again: %+v", again)
	}
	// A batch is atomic and every message of it arrives.
	var br struct {
		Results []struct {
			MessageID string `json:"messageId"`
		} `json:"results"`
	}
	batch := []map[string]any{}
	for i := 0; i < 10; i++ {
		batch = append(batch, map[string]any{"body": strconv.Itoa(i)})
	}
	mustDo(t, "POST", e.lb.URL+"/v1/topics/ab/messages/batch", map[string]any{"messages": batch}, &br, 201)
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 10 && time.Now().Before(deadline) {
		for _, m := range e.receive(e.lb.URL, "ab-g", 32, 2, 0) {
			seen[m.MessageID] = true
			e.settle(e.lb.URL, "ab-g", "ack", []string{m.ReceiptHandle}, nil)
		}
	}
	for _, r := range br.Results {
		if !seen[r.MessageID] {
			t.Fatalf("batch message %s not received (got %d)", r.MessageID, len(seen))
		}
	}
}

// A lease that ended answers expired, on either instance, and the message
// is delivered again.
func TestStaleHandleExpired(t *testing.T) {
	e := newEnv(t)
	a, b := e.gws[0].URL(), e.gws[1].URL()
	e.topic("stale", 2)
	e.group("stale-g", groupCfg("stale", nil))
	e.publish(a, "stale", map[string]any{"body": "x"})
	first := e.receive(a, "stale-g", 1, 5, 1)
	if len(first) != 1 {
		t.Fatal("no message")
	}
	second := e.receive(b, "stale-g", 1, 10, 30)
	if len(second) != 1 || second[0].MessageID != first[0].MessageID || second[0].ReconsumeTimes != 1 {
		t.Fatalf("redelivery = %+v", second)
	}
	if !time.Now().After(first[0].InvisibleUntil) {
		t.Fatalf("redelivered before the lease ended (%v)", first[0].InvisibleUntil)
	}
	if st := status(e.settle(a, "stale-g", "ack", []string{first[0].ReceiptHandle}, nil)); st[0] != "expired" {
		t.Fatalf("stale ack = %v, want expired", st)
	}
	if st := status(e.settle(b, "stale-g", "extend", []string{first[0].ReceiptHandle}, map[string]any{"invisibleSeconds": 5})); st[0] != "expired" {
		t.Fatalf("stale extend = %v, want expired", st)
	}
	if st := status(e.settle(a, "stale-g", "ack", []string{second[0].ReceiptHandle}, nil)); st[0] != "ok" {
		t.Fatalf("fresh ack = %v", st)
	}
}

// Extend on B keeps the message invisible past its first deadline; the ack
// afterwards is ok. A nacked handle answers expired.
func TestExtendThenAck(t *testing.T) {
	e := newEnv(t)
	a, b := e.gws[0].URL(), e.gws[1].URL()
	e.topic("ext", 2)
	e.group("ext-g", groupCfg("ext", nil))
	e.publish(a, "ext", map[string]any{"body": "x"})
	got := e.receive(a, "ext-g", 1, 5, 1)
	if len(got) != 1 {
		t.Fatal("no message")
	}
	r := e.settle(b, "ext-g", "extend", []string{got[0].ReceiptHandle}, map[string]any{"invisibleSeconds": 4})
	if r.Results[0].Status != "ok" || r.Results[0].InvisibleUntil.Before(time.Now().Add(3*time.Second)) {
		t.Fatalf("extend = %+v", r)
	}
	// Past the first deadline, nothing is delivered.
	if again := e.receive(a, "ext-g", 1, 2, 0); len(again) != 0 {
		t.Fatalf("extended message delivered again: %+v", again)
	}
	if st := status(e.settle(a, "ext-g", "ack", []string{got[0].ReceiptHandle}, nil)); st[0] != "ok" {
		t.Fatalf("ack after extend = %v", st)
	}
	// nack → the handle is spent.
	e.publish(a, "ext", map[string]any{"body": "y"})
	got = e.receive(b, "ext-g", 1, 5, 30)
	if st := status(e.settle(a, "ext-g", "nack", []string{got[0].ReceiptHandle}, map[string]any{"delayLevel": 1})); st[0] != "ok" {
		t.Fatalf("nack = %v", st)
	}
	if st := status(e.settle(b, "ext-g", "ack", []string{got[0].ReceiptHandle}, nil)); st[0] != "expired" {
		t.Fatalf("ack after nack = %v, want expired", st)
	}
}

// nack(level 1) is redelivered no earlier than level 1's delay.
func TestNackLevelNeverEarly(t *testing.T) {
	e := newEnv(t)
	a, b := e.gws[0].URL(), e.gws[1].URL()
	e.topic("nack", 2)
	e.group("nack-g", groupCfg("nack", nil))
	for i := 0; i < 5; i++ {
		e.publish(a, "nack", map[string]any{"body": strconv.Itoa(i)})
	}
	var handles []string
	for len(handles) < 5 {
		for _, m := range e.receive(a, "nack-g", 5, 5, 30) {
			handles = append(handles, m.ReceiptHandle)
		}
	}
	nackedAt := time.Now()
	e.settle(b, "nack-g", "nack", handles, map[string]any{"delayLevel": 1})
	n := 0
	for n < 5 {
		got := e.receive(b, "nack-g", 5, 5, 30)
		if len(got) == 0 {
			t.Fatalf("retries not delivered (%d of 5)", n)
		}
		if d := time.Since(nackedAt); d < testLevels[0] {
			t.Fatalf("redelivered %v after the nack, level 1 is %v", d, testLevels[0])
		}
		for _, m := range got {
			if m.ReconsumeTimes != 1 {
				t.Fatalf("reconsumeTimes = %d", m.ReconsumeTimes)
			}
			e.settle(a, "nack-g", "ack", []string{m.ReceiptHandle}, nil)
		}
		n += len(got)
	}
}

// 17 failures with maxReconsumeTimes 16 make exactly one DLQ copy; a
// redrive delivers it again to this group with reconsumeTimes reset.
func TestDLQAndRedrive(t *testing.T) {
	e := newEnv(t)
	e.topic("dlq", 1)
	e.group("dlq-g", groupCfg("dlq", map[string]any{"maxReconsumeTimes": 16}))
	e.group("dlq-other", groupCfg("dlq", nil))
	id := e.publish(e.lb.URL, "dlq", map[string]any{"body": "poison"})
	for i := 0; i < 17; i++ {
		got := e.receive(e.lb.URL, "dlq-g", 1, 5, 30)
		if len(got) != 1 || got[0].ReconsumeTimes != i {
			t.Fatalf("failure %d: got %+v", i+1, got)
		}
		// Level 5 is 100 ms in the test table.
		if st := status(e.settle(e.lb.URL, "dlq-g", "nack", []string{got[0].ReceiptHandle}, map[string]any{"delayLevel": 5})); st[0] != "ok" {
			t.Fatalf("nack %d = %v", i+1, st)
		}
	}
	if got := e.receive(e.lb.URL, "dlq-g", 1, 1, 30); len(got) != 0 {
		t.Fatalf("dead letter delivered again: %+v", got)
	}
	var dl struct {
		Messages []msg `json:"messages"`
	}
	mustDo(t, "GET", e.lb.URL+"/v1/groups/dlq-g/dlq?limit=10", nil, &dl, 200)
	if len(dl.Messages) != 1 || dl.Messages[0].MessageID != id || dl.Messages[0].ReconsumeTimes != 16 {
		t.Fatalf("DLQ = %+v, want exactly one copy of %s", dl.Messages, id)
	}
	var rd struct {
		Redriven int `json:"redriven"`
	}
	mustDo(t, "POST", e.lb.URL+"/v1/groups/dlq-g/dlq/redrive", map[string]any{}, &rd, 200)
	if rd.Redriven != 1 {
		t.Fatalf("redriven = %d", rd.Redriven)
	}
	got := e.receive(e.lb.URL, "dlq-g", 1, 5, 30)
	if len(got) != 1 || got[0].MessageID != id || got[0].ReconsumeTimes != 0 || got[0].Topic != "dlq" {
		t.Fatalf("redriven message = %+v", got)
	}
	e.settle(e.lb.URL, "dlq-g", "ack", []string{got[0].ReceiptHandle}, nil)
	// The other group saw the original once and never the redrive.
	other := e.receive(e.lb.URL, "dlq-other", 32, 2, 30)
	if len(other) != 1 || other[0].MessageID != id {
		t.Fatalf("other group got %+v", other)
	}
	mustDo(t, "GET", e.lb.URL+"/v1/groups/dlq-g/dlq?limit=10", nil, &dl, 200)
	if len(dl.Messages) != 0 {
		t.Fatalf("DLQ after redrive = %+v", dl.Messages)
	}
}

// ORDERLY with receivers on both instances: per sharding key, messages
// are consumed in publish order, each once.
func TestOrderlyAcrossInstances(t *testing.T) {
	e := newEnv(t)
	e.topic("ord", 4)
	e.group("ord-g", groupCfg("ord", map[string]any{"consumeMode": "ORDERLY", "invisibleSeconds": 30}))
	const keys, per = 8, 25
	for i := 0; i < per; i++ {
		for k := 0; k < keys; k++ {
			e.publish(e.lb.URL, "ord", map[string]any{"body": fmt.Sprintf("k%d:%d", k, i), "shardingKey": fmt.Sprintf("k%d", k)})
		}
	}
	var mu sync.Mutex
	last := map[string]int{}
	inversions, dups, total := 0, 0, 0
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		base := e.gws[w%2].URL()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, m := range e.receive(base, "ord-g", 4, 1, 30) {
					k, n, _ := strings.Cut(m.Body, ":")
					i, _ := strconv.Atoi(n)
					mu.Lock()
					prev, ok := last[k]
					switch {
					case ok && i == prev:
						dups++
					case ok && i < prev || !ok && i != 0:
						inversions++
					}
					last[k] = i
					total++
					mu.Unlock()
					// Ack on the other instance.
					e.settle(e.gws[(w+1)%2].URL(), "ord-g", "ack", []string{m.ReceiptHandle}, nil)
				}
			}
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		mu.Lock()
		n := total
		mu.Unlock()
		if n >= keys*per || time.Now().After(deadline) {
			break
		}
		<-tick.C
	}
	close(done)
	wg.Wait()
	if total < keys*per || inversions != 0 {
		t.Fatalf("received %d of %d, %d per-key inversions, %d duplicates", total, keys*per, inversions, dups)
	}
	t.Logf("orderly: %d messages, 0 inversions, %d duplicates", total, dups)
}

// A timer message is not delivered before deliverAt.
func TestDeliverAtNeverEarly(t *testing.T) {
	e := newEnv(t)
	e.topic("timer", 2)
	e.group("timer-g", groupCfg("timer", nil))
	at := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Millisecond)
	var r struct {
		MessageID string    `json:"messageId"`
		DeliverAt time.Time `json:"deliverAt"`
		QueueID   int       `json:"queueId"`
	}
	mustDo(t, "POST", e.lb.URL+"/v1/topics/timer/messages", map[string]any{"body": "later", "deliverAt": at.Format(time.RFC3339Nano)}, &r, 201)
	if !r.DeliverAt.Equal(at) {
		t.Fatalf("deliverAt = %v, want %v", r.DeliverAt, at)
	}
	got := e.receive(e.lb.URL, "timer-g", 1, 10, 30)
	if len(got) != 1 || got[0].MessageID != r.MessageID {
		t.Fatalf("timer message = %+v", got)
	}
	if now := time.Now(); now.Before(at) {
		t.Fatalf("delivered %v early", at.Sub(now))
	}
}
