package jetstream_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/backend/jetstream/jstest"
)

// BROADCASTING: every consumerId gets every message, whichever instance
// it asks.
func TestBroadcastingAcrossInstances(t *testing.T) {
	e := newEnv(t)
	a, b := e.gws[0].URL(), e.gws[1].URL()
	e.topic("bc", 2)
	e.group("bc-g", groupCfg("bc", map[string]any{"messageModel": "BROADCASTING"}))
	ids := map[string]bool{}
	for i := 0; i < 3; i++ {
		ids[e.publish(a, "bc", map[string]any{"body": "x"})] = true
	}
	for _, cid := range []string{"c1", "c2"} {
		seen := map[string]bool{}
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; len(seen) < 3 && time.Now().Before(deadline); i++ {
			base := []string{a, b}[i%2] // alternate instances
			var r struct {
				Messages []msg `json:"messages"`
			}
			mustDo(t, "POST", base+"/v1/groups/bc-g/receive", map[string]any{"maxMessages": 3, "waitSeconds": 1, "consumerId": cid}, &r, 200)
			for _, m := range r.Messages {
				seen[m.MessageID] = true
				if st := status(e.settle([]string{b, a}[i%2], "bc-g", "ack", []string{m.ReceiptHandle}, nil)); st[0] != "ok" {
					t.Fatalf("%s ack = %v", cid, st)
				}
			}
		}
		for id := range ids {
			if !seen[id] {
				t.Fatalf("consumer %s missed %s", cid, id)
			}
		}
	}
	// Without a consumerId: 400.
	if st := do(t, "POST", a+"/v1/groups/bc-g/receive", map[string]any{"maxMessages": 1}, nil); st != 400 {
		t.Fatalf("receive without consumerId = %d", st)
	}
}

// Ready fails once the NATS connection is gone (what /readyz reports).
func TestReadyFollowsConnection(t *testing.T) {
	dir, err := os.MkdirTemp("", "mqgate-ready-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	single, err := jstest.Start(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer single.Shutdown()
	nc, err := nats.Connect(single.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b, err := jetstream.Open(context.Background(), jetstream.Options{Conn: nc, Key: testKey, Replicas: 1, RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	if err := b.Ready(context.Background()); err != nil {
		t.Fatalf("ready: %v", err)
	}
	single.Kill(0)
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for b.Ready(context.Background()) == nil {
		if time.Now().After(deadline) {
			t.Fatal("still ready without a server")
		}
		<-tick.C
	}
}
