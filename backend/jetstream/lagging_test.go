package jetstream_test

import (
	"testing"

	"github.com/nats-io/nats.go"
)

// A nack that dead-letters reads the message from the stream leader: a
// replica that is still catching up answers a direct get with 404, which
// must not be taken for "removed by retention" (TERM with no DLQ copy, a
// loss). The lagging replica is stood in for by a responder on the
// topic stream's direct-get subject that answers every request 404 at
// once, as a rejoining replica does; every dead letter must still reach
// the DLQ.
func TestDeadLetterWhileReplicaLags(t *testing.T) {
	e := newEnv(t)
	e.topic("lag", 1)
	e.group("lag-g", groupCfg("lag", nil))
	nc, err := nats.Connect(cluster.Servers()[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.Subscribe("$JS.API.DIRECT.GET.MQ_lag", func(m *nats.Msg) {
		r := nats.NewMsg(m.Reply)
		r.Header.Set("Status", "404")
		r.Header.Set("Description", "Message Not Found")
		_ = nc.PublishMsg(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := 0; i < n; i++ {
		e.publish(e.lb.URL, "lag", map[string]any{"body": "poison"})
	}
	var handles []string
	for try := 0; len(handles) < n; try++ {
		if try == 20 {
			t.Fatalf("received %d of %d", len(handles), n)
		}
		// Both instances: a waiting pull's late messages are kept on
		// the instance that pulled them.
		for _, m := range e.receive(e.gws[try%2].URL(), "lag-g", n, 1, 30) {
			handles = append(handles, m.ReceiptHandle)
		}
	}
	// delayLevel -1: straight to the DLQ.
	for _, h := range handles {
		if st := status(e.settle(e.gws[0].URL(), "lag-g", "nack", []string{h}, map[string]any{"delayLevel": -1})); st[0] != "ok" {
			t.Fatalf("nack = %v", st)
		}
	}
	var dl struct {
		Messages []msg `json:"messages"`
	}
	mustDo(t, "GET", e.lb.URL+"/v1/groups/lag-g/dlq?limit=100", nil, &dl, 200)
	if len(dl.Messages) != n {
		t.Fatalf("%d dead letters in the DLQ, want %d", len(dl.Messages), n)
	}
}
