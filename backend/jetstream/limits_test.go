package jetstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/core"
)

// Long polls beyond MaxWaitingPerGroup answer ETooMany (429).
func TestWaitingLimit(t *testing.T) {
	nc, err := nats.Connect(strings.Split(cluster.URLs(), ",")[0])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b, err := jetstream.Open(context.Background(), jetstream.Options{Conn: nc, Key: testKey, MaxWaitingPerGroup: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	ctx := context.Background()
	if _, _, err := b.PutTopic(core.TopicConfig{Name: "lim", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutGroup(ctx, core.GroupConfig{Name: "lim-g", Subscriptions: []core.Subscription{{Topic: "lim"}}}); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Receive(rctx, "lim-g", core.ReceiveRequest{MaxMessages: 1, Wait: 20 * time.Second})
	}()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := b.GroupStatus(ctx, "lim-g")
		if err == nil && st.Waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("first receive never parked")
		}
		<-tick.C
	}
	_, err = b.Receive(ctx, "lim-g", core.ReceiveRequest{MaxMessages: 1, Wait: time.Second})
	if core.ErrorCode(err) != core.ETooMany {
		t.Fatalf("second long poll: %v, want too_many", err)
	}
	if _, err := b.Receive(ctx, "lim-g", core.ReceiveRequest{MaxMessages: 1}); err != nil {
		t.Fatalf("a receive that does not wait is not limited: %v", err)
	}
	cancel()
	<-done
}
