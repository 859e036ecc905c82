package jetstream_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A receive that has answered leaves no waiting pull behind to take the
// next message to its instance: a receive waiting on the other instance
// gets it. (A parked pull asked for the receive's whole batch and stayed
// first in the consumer's queue of waiting pulls after its receive had
// answered; the next message went to its instance's stash, and the
// receive waiting on the other instance waited out its long poll: the
// publish-to-receive tail through two gateways.)
func TestWaitingReceiveOnOtherInstance(t *testing.T) {
	e := newEnv(t)
	e.topic("parkt", 1)
	e.group("parkg", map[string]any{"subscriptions": []map[string]any{{"topic": "parkt"}},
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"}})
	a, b := e.gws[0].URL(), e.gws[1].URL()

	// The waiting pulls the instances park, as the servers see them (a
	// plain subscriber on the API subject gets a copy of each request).
	mon, err := nats.Connect(cluster.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	reqs, err := mon.SubscribeSync("$JS.API.CONSUMER.MSG.NEXT.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := mon.Flush(); err != nil {
		t.Fatal(err)
	}
	parked := func() {
		t.Helper()
		for {
			m, err := reqs.NextMsg(10 * time.Second)
			if err != nil {
				t.Fatalf("no waiting pull parked: %v", err)
			}
			var r struct {
				NoWait bool `json:"no_wait"`
			}
			if json.Unmarshal(m.Data, &r) == nil && !r.NoWait {
				return
			}
		}
	}
	receive := func(base string) <-chan []msg {
		got := make(chan []msg, 1)
		go func() { got <- e.receive(base, "parkg", 32, 5, 0) }()
		return got
	}

	first := receive(a)
	parked()
	e.publish(a, "parkt", map[string]any{"body": "one"})
	if ms := <-first; len(ms) != 1 || ms[0].Body != "one" {
		t.Fatalf("the receive on instance A got %+v, want the message one", ms)
	}

	second := receive(b)
	parked()
	start := time.Now()
	e.publish(a, "parkt", map[string]any{"body": "two"})
	ms := <-second
	if len(ms) != 1 || ms[0].Body != "two" {
		t.Fatalf("the receive waiting on instance B got %+v after %v, want the message two at once", ms, time.Since(start))
	}
}
