package engine

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// ladderLevels are 18 short levels so the default ladder (3+reconsumeTimes)
// runs in milliseconds.
var ladderLevels = func() []time.Duration {
	d := make([]time.Duration, 18)
	for i := range d {
		d[i] = time.Duration(10+i) * time.Millisecond
	}
	return d
}()

func sameContent(t testing.TB, got *core.Message, want core.PutMessage, id, topic string) {
	t.Helper()
	if got.UserID() != id || got.UserTopic() != topic || got.Tags != want.Tags || string(got.Body) != string(want.Body) ||
		!slices.Equal(got.Keys, want.Keys) || !maps.Equal(got.Properties, want.Properties) {
		t.Fatalf("message %+v (user id %s, topic %s) lost its original content/id/topic (%s, %s)", got, got.UserID(), got.UserTopic(), id, topic)
	}
}

// TestSendBackLadderToDLQ walks one message through the retry ladder:
// each failure sends it back, it comes back on %RETRY%g with
// reconsumeTimes+1 and its original id and topic, until the last failure
// dead-letters it, exactly once, with reconsumeTimes == max.
func TestSendBackLadderToDLQ(t *testing.T) {
	e := openTest(t, Options{DelayLevels: ladderLevels})
	mustTopic(t, e, "orders", 2)
	in := core.PutMessage{Body: []byte("pay"), Tags: "created", Keys: []string{"o-1", "c-9"},
		Properties: map[string]string{"region": "eu", "n": "1"}}
	res := mustPut(t, e, "orders", in)[0]
	msg := readAll(t, e, core.MessageQueue{Topic: "orders", QueueID: res.QueueID})[0]
	orig := msg
	const max = 3
	retry := core.MessageQueue{Topic: core.RetryTopic("g")}
	for i := range max {
		if msg.ReconsumeTimes != i {
			t.Fatalf("delivery %d has reconsumeTimes %d", i, msg.ReconsumeTimes)
		}
		sent := time.Now()
		if err := e.SendMessageBack(t.Context(), "g", msg, 0, max); err != nil {
			t.Fatalf("SendMessageBack %d: %v", i, err)
		}
		got := waitCount(t, e, retry, i+1, 5*time.Second)
		msg = got[i]
		if wait := msg.StoredAt.Sub(sent); wait < ladderLevels[2+i]-time.Millisecond {
			t.Fatalf("retry %d came back after %v, want level %d (%v)", i+1, wait, 3+i, ladderLevels[2+i])
		}
		if msg.ReconsumeTimes != i+1 || msg.ID == res.MessageID || msg.SysProps[core.PropOriginMessageID] != res.MessageID ||
			msg.SysProps[core.PropRetryTopic] != "orders" || msg.SysProps[core.PropDelay] != "" || msg.SysProps[core.PropRealTopic] != "" {
			t.Fatalf("retry %d: %+v", i+1, msg)
		}
		sameContent(t, msg, in, res.MessageID, "orders")
		if !msg.BornAt.Equal(orig.BornAt) {
			t.Fatalf("bornAt changed: %v", msg.BornAt)
		}
	}
	if err := e.SendMessageBack(t.Context(), "g", msg, 0, max); err != nil {
		t.Fatal(err)
	}
	dlq, next, err := e.DLQMessages("g", "", 10)
	if err != nil || len(dlq) != 1 || next != "" {
		t.Fatalf("DLQ: %d messages, next %q, %v", len(dlq), next, err)
	}
	d := dlq[0]
	if d.Topic != core.DLQTopic("g") || d.ReconsumeTimes != max {
		t.Fatalf("dead letter %+v", d)
	}
	sameContent(t, d, in, res.MessageID, "orders")
	if n := len(readAll(t, e, retry)); n != max {
		t.Fatalf("%d retries, want %d", n, max)
	}
	if depth, _ := e.DLQDepth("g"); depth != 1 {
		t.Fatalf("DLQ depth %d", depth)
	}
	c := e.Counters()
	if c.Retried != max || c.DeadLettered != 1 {
		t.Fatalf("counters %+v", c)
	}
}

func TestSendBackDelayLevels(t *testing.T) {
	e := openTest(t, Options{DelayLevels: []time.Duration{10 * time.Millisecond, 400 * time.Millisecond}})
	mustTopic(t, e, "t", 1)
	mustPut(t, e, "t", text("x"))
	msg := readAll(t, e, core.MessageQueue{Topic: "t"})[0]
	// Level -1 dead-letters at once, whatever reconsumeTimes says.
	if err := e.SendMessageBack(t.Context(), "g", msg, -1, 16); err != nil {
		t.Fatal(err)
	}
	if dlq, _, _ := e.DLQMessages("g", "", 0); len(dlq) != 1 || dlq[0].ReconsumeTimes != 0 || dlq[0].UserID() != msg.ID {
		t.Fatalf("delayLevel -1: %+v", dlq)
	}
	// Caller's level 1 is honoured (default 3+0 would be capped at 400ms).
	sent := time.Now()
	if err := e.SendMessageBack(t.Context(), "g", msg, 1, 16); err != nil {
		t.Fatal(err)
	}
	got := waitCount(t, e, core.MessageQueue{Topic: core.RetryTopic("g")}, 1, 5*time.Second)
	if took := got[0].StoredAt.Sub(sent); took > 300*time.Millisecond {
		t.Fatalf("level 1 retry took %v", took)
	}
	// Level 0 with 3+0 beyond the last level → the last level.
	sent = time.Now()
	if err := e.SendMessageBack(t.Context(), "g", msg, 0, 16); err != nil {
		t.Fatal(err)
	}
	got = waitCount(t, e, core.MessageQueue{Topic: core.RetryTopic("g")}, 2, 5*time.Second)
	if took := got[1].StoredAt.Sub(sent); took < 399*time.Millisecond {
		t.Fatalf("capped level retry took %v", took)
	}
	wantCode(t, e.SendMessageBack(t.Context(), "bad group", msg, 0, 1), core.EInvalid)
}

// TestSendBackWithoutStoredOriginal falls back to the delivered message when
// retention removed the original while it was out (its topic still exists:
// a message of a deleted topic is dropped instead,
// TestRetriesOfADeletedTopicAreNotDelivered); a message that never was in
// the topic's current incarnation is dropped.
func TestSendBackWithoutStoredOriginal(t *testing.T) {
	e := openTest(t, Options{DelayLevels: ladderLevels})
	if _, _, err := e.PutTopic(core.TopicConfig{Name: "t", Queues: 1, RetentionHours: 1}); err != nil {
		t.Fatal(err)
	}
	id := mustPut(t, e, "t", text("b"))[0].MessageID
	m := readAll(t, e, core.MessageQueue{Topic: "t"})[0]
	if err := e.clean(time.Now().Add(2 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	m.ReconsumeTimes = 5 // the delivered copy's count
	if err := e.SendMessageBack(t.Context(), "g", m, 0, 5); err != nil {
		t.Fatal(err)
	}
	dlq, _, err := e.DLQMessages("g", "", 0)
	if err != nil || len(dlq) != 1 || dlq[0].UserID() != id || dlq[0].UserTopic() != "t" || dlq[0].ReconsumeTimes != 5 {
		t.Fatalf("dead letter from the delivered copy: %v %+v", err, dlq)
	}
	ghost := &core.Message{ID: "never-here", Topic: "t", QueueOffset: 7, CommitLogOffset: 1 << 40, Body: []byte("b"), ReconsumeTimes: 5}
	if err := e.SendMessageBack(t.Context(), "g", ghost, 0, 5); err != nil {
		t.Fatal(err)
	}
	if dlq, _, err := e.DLQMessages("g", "", 0); err != nil || len(dlq) != 1 {
		t.Fatalf("a message of no current incarnation was dead-lettered: %v %+v", err, dlq)
	}
}

// TestSendBackConcurrent sends many messages back
// at once and checks every retry arrives exactly once.
func TestSendBackConcurrent(t *testing.T) {
	e := openTest(t, Options{DelayLevels: ladderLevels})
	mustTopic(t, e, "t", 4)
	const n = 400
	batch := make([]core.PutMessage, n)
	for i := range batch {
		batch[i] = core.PutMessage{Body: []byte(fmt.Sprint(i))}
	}
	mustPut(t, e, "t", batch...)
	var msgs []*core.Message
	for q := range 4 {
		msgs = append(msgs, readAll(t, e, core.MessageQueue{Topic: "t", QueueID: q})...)
	}
	errs := make(chan error, len(msgs))
	for _, m := range msgs {
		go func() { errs <- e.SendMessageBack(t.Context(), "g", m, 1, 16) }()
	}
	for range msgs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got := waitCount(t, e, core.MessageQueue{Topic: core.RetryTopic("g")}, n, 10*time.Second)
	seen := map[string]bool{}
	for _, m := range got {
		if seen[m.UserID()] {
			t.Fatalf("retry of %s twice", m.UserID())
		}
		seen[m.UserID()] = true
	}
}
