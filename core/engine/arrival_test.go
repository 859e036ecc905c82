package engine

import (
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// AfterArrival parks a function only at the queue's max offset; a publish
// to the queue (not to another one), a deletion or Close starts it once,
// on a goroutine of its own; stop cancels it.
func TestAfterArrival(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	mq := core.MessageQueue{Topic: "t", QueueID: 1}
	fired := make(chan string, 8)
	park := func(mq core.MessageQueue, offset int64, name string) func() bool {
		t.Helper()
		stop, ok := e.AfterArrival(mq, offset, func() { fired <- name })
		if !ok {
			t.Fatalf("%s: not parked at offset %d", name, offset)
		}
		return stop
	}
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-fired:
			if got != want {
				t.Fatalf("%s started, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s not started", want)
		}
	}
	none := func() {
		t.Helper()
		select {
		case got := <-fired:
			t.Fatalf("%s started", got)
		case <-time.After(30 * time.Millisecond):
		}
	}

	park(mq, 0, "a")
	cancelled := park(mq, 0, "b")
	if !cancelled() || cancelled() {
		t.Fatal("stop must report true once, for a waiter not started")
	}
	mustPut(t, e, "t", core.PutMessage{Body: []byte("x"), ShardingKey: keyForQueue(t, 2, 0)})
	none() // another queue
	mustPut(t, e, "t", core.PutMessage{Body: []byte("y"), ShardingKey: keyForQueue(t, 2, 1)})
	expect("a")
	none() // b was cancelled; a runs once

	for _, off := range []int64{0, 2} { // below max: read; beyond it: correct
		if _, ok := e.AfterArrival(mq, off, func() { fired <- "never" }); ok {
			t.Fatalf("parked at offset %d of a queue holding 1", off)
		}
	}
	if _, ok := e.AfterArrival(core.MessageQueue{Topic: "nope"}, 0, func() {}); ok {
		t.Fatal("parked on a queue of no topic")
	}

	stop := park(mq, 1, "deleted")
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	expect("deleted")
	if stop() {
		t.Fatal("stop after the waiter started reports true")
	}
	park(core.MessageQueue{Topic: core.RetryTopic("g")}, 0, "closed") // created by its first put
	e.Close()
	expect("closed")
}
