package embedded

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/gateway/webhook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOpenServesAndReopens: one Open gives the whole seam over one data
// directory (a publish is received, nacked with its reason and
// dead-lettered with it), Close releases it in order, and a second Open of
// the same directory finds the topic, the group and the dead letter.
func TestOpenServesAndReopens(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	b, err := Open(Options{Engine: engine.Options{Dir: dir}, TimelineEvents: 64})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutTopic(core.TopicConfig{Name: "t", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutGroup(ctx, core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t", Filter: "*"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "t", []core.PutMessage{{Body: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Receive(ctx, "g", core.ReceiveRequest{MaxMessages: 1, Wait: 5 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("receive: %d messages, %v", len(got), err)
	}
	res, err := b.Nack(ctx, "g", []string{got[0].ReceiptHandle}, -1, "bad input")
	if err != nil || res[0].Status != core.HandleOK {
		t.Fatalf("nack: %+v, %v", res, err)
	}
	id := got[0].Message.UserID()
	if evs := b.MessageEvents("g", id); len(evs) == 0 {
		t.Fatal("the timeline recorded nothing with TimelineEvents set")
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}

	b, err = Open(Options{Engine: engine.Options{Dir: dir}})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer b.Close(ctx)
	if _, err := b.Topic("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Group(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	dl, _, err := b.DLQMessages("g", "", 10)
	if err != nil || len(dl) != 1 || dl[0].SysProps[core.PropLastReason] != "bad input" {
		t.Fatalf("dead letters after reopen: %+v, %v", dl, err)
	}
}

// TestOpenFailureReleasesTheStore: an Open that fails after the engine is
// open (here: a bad webhook guard network) closes what it opened, so the
// next Open of the directory is not locked out.
func TestOpenFailureReleasesTheStore(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(Options{Engine: engine.Options{Dir: dir}, Webhook: webhook.Options{AllowCIDRs: []string{"not-a-cidr"}}})
	if err == nil || !strings.Contains(err.Error(), "webhook network guard") {
		t.Fatalf("Open with a bad CIDR: %v, want the guard's error", err)
	}
	done := make(chan error, 1)
	go func() {
		b, err := Open(Options{Engine: engine.Options{Dir: dir}})
		if err == nil {
			err = b.Close(context.Background())
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the second Open waits: the failed one left the store locked")
	}
}
