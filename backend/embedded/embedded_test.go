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
	b = closeAndReopen(t, b, dir)
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

// TestNacksAnsweredBeforeCloseSurvive: nacks answered "ok" just before a
// graceful Close reach their dead-letter copies, every one. (The push
// consumer queues a nack's send-back before it answers and stores it in
// the background; a Close that dropped the queue undid those nacks: the
// messages came back from the committed offset instead of the DLQ.)
func TestNacksAnsweredBeforeCloseSurvive(t *testing.T) {
	const n = 256
	dir := t.TempDir()
	ctx := context.Background()
	b, err := Open(Options{Engine: engine.Options{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutTopic(core.TopicConfig{Name: "t", Queues: 4}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.PutGroup(ctx, core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t", Filter: "*"}}}); err != nil {
		t.Fatal(err)
	}
	msgs := make([]core.PutMessage, n)
	for i := range msgs {
		msgs[i] = core.PutMessage{Body: []byte{byte(i)}}
	}
	if _, err := b.Put(ctx, "t", msgs); err != nil {
		t.Fatal(err)
	}
	nacked := 0
	for nacked < n {
		got, err := b.Receive(ctx, "g", core.ReceiveRequest{MaxMessages: core.MaxReceiveMessages, Wait: 5 * time.Second})
		if err != nil || len(got) == 0 {
			t.Fatalf("receive after %d nacked: %d messages, %v", nacked, len(got), err)
		}
		handles := make([]string, len(got))
		for i, m := range got {
			handles[i] = m.ReceiptHandle
		}
		res, err := b.Nack(ctx, "g", handles, -1, "poison")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Status != core.HandleOK {
				t.Fatalf("nack: %+v", r)
			}
		}
		nacked += len(got)
	}
	b = closeAndReopen(t, b, dir)
	defer b.Close(ctx)
	dead, cursor := 0, ""
	for {
		page, next, err := b.DLQMessages("g", cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		dead += len(page)
		if next == "" || len(page) == 0 {
			break
		}
		cursor = next
	}
	if dead != n {
		t.Errorf("%d dead letters after reopen, want the %d nacked", dead, n)
	}
	again, err := b.Receive(ctx, "g", core.ReceiveRequest{MaxMessages: core.MaxReceiveMessages, Wait: time.Second})
	if err != nil || len(again) != 0 {
		t.Errorf("after reopen the group received %d messages (%v), want none: every one was dead-lettered", len(again), err)
	}
}

// closeAndReopen closes b (a graceful shutdown) and opens its directory again.
func closeAndReopen(t *testing.T, b *Backend, dir string) *Backend {
	t.Helper()
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := Open(Options{Engine: engine.Options{Dir: dir}})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	return b
}
