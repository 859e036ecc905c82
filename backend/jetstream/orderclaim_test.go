package jetstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/backend/jetstream/jstest"
	"github.com/mqgate/mqgate/core"
)

// orderlyQueue makes topic name (one queue) and its ORDERLY group
// name+"-g" reading from the first offset, publishes bodies under one key,
// and returns the queue's consumer.
func orderlyQueue(t *testing.T, b *Backend, name string, bodies ...string) consumerRef {
	t.Helper()
	ctx := context.Background()
	if _, _, err := b.PutTopic(core.TopicConfig{Name: name, Queues: 1}); err != nil {
		t.Fatal(err)
	}
	g, _, err := b.PutGroup(ctx, core.GroupConfig{Name: name + "-g", Subscriptions: []core.Subscription{{Topic: name, Filter: "*"}},
		MessageModel: core.Clustering, ConsumeMode: core.Orderly, ConsumeFrom: core.ConsumeFromFirstOffset, InvisibleSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range bodies {
		if _, err := b.Put(ctx, name, []core.PutMessage{{Body: []byte(body), BodyIsText: true, ShardingKey: "k"}}); err != nil {
			t.Fatal(err)
		}
	}
	tp, err := b.Topic(name)
	if err != nil {
		t.Fatal(err)
	}
	return b.consumersOf(g, "", tp)[0]
}

// A stale consumer leader (one SIGSTOPped and continued, or cut off from
// its peers, that does not know yet it was replaced) answers the pulls
// that reach it from its stale state: it delivers again an ORDERLY
// message its successor saw acknowledged and moved past. So does a frozen
// node that flushes, late, a delivery the consumer meanwhile redelivered
// elsewhere. Neither can be forged by a client (the server refuses a
// publish with a $JS.ACK reply), so this test keeps a real delivery of
// the queue's first message, lets the queue move past it, and hands that
// delivery to the backend as such a leader would (through the stash a
// pull fills). The claim must keep it from being handed out after the
// later message; the queue goes on in order; and after a reset of
// offsets (a new incarnation of the queue's consumer) the first message
// is in order again. One in-process server: the claim is the backend's,
// not the cluster's.
func TestOrderlyClaimStaleLeader(t *testing.T) {
	b, nc := singleNode(t)
	ctx := context.Background()
	ref := orderlyQueue(t, b, "claim", "k-1", "k-2", "k-3")

	// k-1's delivery, kept, and acknowledged: the queue moves on to k-2.
	var first *nats.Msg
	if _, err := b.pull(ctx, ref, 1, time.Second, func(m *nats.Msg) { first = m }); err != nil || first == nil {
		t.Fatalf("pull: %v, %v", first, err)
	}
	if string(first.Data) != "k-1" {
		t.Fatalf("first delivery %q, want k-1", first.Data)
	}
	if _, err := nc.Request(first.Reply, []byte("+ACK"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	receive := func(wait time.Duration) []string {
		t.Helper()
		got, err := b.Receive(ctx, "claim-g", core.ReceiveRequest{MaxMessages: 16, Wait: wait})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range got {
			out = append(out, string(r.Message.Body))
			if res, err := b.Ack(ctx, "claim-g", []string{r.ReceiptHandle}); err != nil || res[0].Status != core.HandleOK {
				t.Fatalf("ack %s: %v %v", r.Message.Body, res, err)
			}
		}
		return out
	}
	if got := receive(2 * time.Second); len(got) != 1 || got[0] != "k-2" {
		t.Fatalf("receive = %v, want [k-2]", got)
	}

	// The stale delivery of k-1 comes in after k-2 was handed out.
	b.mu.Lock()
	st := b.stash["claim-g/"]
	b.mu.Unlock()
	b.stashOne(st, pulled{msg: first, ref: ref, at: time.Now()})
	if got := receive(2 * time.Second); len(got) != 1 || got[0] != "k-3" {
		t.Fatalf("receive after a stale delivery of k-1 = %v, want [k-3] (k-1 again is an ORDERLY inversion)", got)
	}

	// A reset to the first offset: k-1 is behind the claim (k-3), which
	// was made for the consumer's earlier incarnation.
	if _, err := b.ResetOffsets(ctx, "claim-g", "", "claim", core.ConsumeFromFirstOffset, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := receive(5 * time.Second); len(got) != 1 || got[0] != "k-1" {
		t.Fatalf("receive after a reset = %v, want [k-1]", got)
	}
}

// A delivery claimed and then held up in lease() (behind a stopped
// node) while its message came again and was claimed by that later
// delivery must not be handed out: at hand-out a claim older than
// claimFreshFor is confirmed by a compare-and-set on the revision it was
// written at. A fault run handed out such a held-up copy after later
// messages of its queue (an ORDERLY inversion) before the confirmation.
func TestOrderlyClaimConfirmedAtHandOut(t *testing.T) {
	b, nc := singleNode(t)
	ctx := context.Background()
	ref := orderlyQueue(t, b, "held", "k-1")
	first := claimNext(t, b, ref, "held-g")
	if ok := b.reconfirmClaims(ctx, "held-g", []pulled{first}, 30*time.Second); !ok[0] {
		t.Fatal("a fresh claim was not confirmed")
	}
	// Held up: the lease is not set, the message comes again and its new
	// delivery claims the queue.
	if _, err := nc.Request(first.msg.Reply, []byte("-NAK"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	second := claimNext(t, b, ref, "held-g")
	first.held.at = first.held.at.Add(-time.Second)
	second.held.at = second.held.at.Add(-time.Second)
	ok := b.reconfirmClaims(ctx, "held-g", []pulled{first, second, {msg: first.msg, ref: ref, at: time.Now()}}, 30*time.Second)
	if ok[0] {
		t.Fatal("the held-up delivery was confirmed after a later delivery claimed its queue")
	}
	if !ok[1] {
		t.Fatal("the later delivery, which holds the claim, was not confirmed")
	}
	if !ok[2] {
		t.Fatal("a delivery without a claim (not ORDERLY) was refused")
	}
	// One past half its ack wait is confirmed by a write too, however
	// fresh its claim: JetStream may have sent it again.
	third := second
	third.held.at, third.at = time.Now(), time.Now().Add(-20*time.Second)
	if ok := b.reconfirmClaims(ctx, "held-g", []pulled{third}, 30*time.Second); ok[0] {
		t.Fatal("an old delivery was confirmed on a revision already rewritten (the previous confirmation moved it)")
	}
}

// A redelivery's claim (the claim was at its message already) is
// confirmed at hand-out however fresh: it may be a stale copy of a
// message settled since, and the queue's next message may be claimed,
// and handed out by another instance, between its claim and its
// hand-out. A CI fault run saw a poison message's stale copy handed out
// after the message its dead-lettering let through (an ORDERLY
// inversion).
func TestOrderlyClaimRedeliveryConfirmed(t *testing.T) {
	b, nc := singleNode(t)
	ctx := context.Background()
	ref := orderlyQueue(t, b, "again", "k-1", "k-2")
	first := claimNext(t, b, ref, "again-g")
	if string(first.msg.Data) != "k-1" || first.held.again {
		t.Fatalf("first claim: %q, again %v", first.msg.Data, first.held.again)
	}
	// k-1 acknowledged; a stale copy of its delivery comes in, as from
	// a stale consumer leader, and matches the claim (still at k-1).
	if _, err := nc.Request(first.msg.Reply, []byte("+ACK"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	stale, err := b.claimOrderly(ctx, "again-g", []pulled{{msg: first.msg, ref: ref, at: time.Now()}})
	if err != nil || len(stale) != 1 || !stale[0].held.again {
		t.Fatalf("claim of the stale copy: %v, %+v", err, stale)
	}
	// k-2 claims the queue before the copy is handed out.
	second := claimNext(t, b, ref, "again-g")
	if string(second.msg.Data) != "k-2" {
		t.Fatalf("second claim: %q", second.msg.Data)
	}
	ok := b.reconfirmClaims(ctx, "again-g", []pulled{stale[0], second}, 30*time.Second)
	if ok[0] {
		t.Fatal("a fresh stale copy of k-1 was confirmed after k-2 claimed its queue")
	}
	if !ok[1] {
		t.Fatal("k-2, which holds the claim, was not confirmed")
	}
}

// claimNext pulls ref's next delivery and claims it.
func claimNext(t *testing.T, b *Backend, ref consumerRef, group string) pulled {
	t.Helper()
	ctx := context.Background()
	var m *nats.Msg
	if _, err := b.pull(ctx, ref, 1, 2*time.Second, func(got *nats.Msg) { m = got }); err != nil || m == nil {
		t.Fatalf("pull: %v, %v", m, err)
	}
	kept, err := b.claimOrderly(ctx, group, []pulled{{msg: m, ref: ref, at: time.Now()}})
	if err != nil || len(kept) != 1 || kept[0].held.key == "" {
		t.Fatalf("claim of %q: %v, %+v", m.Data, err, kept)
	}
	return kept[0]
}

// singleNode is a backend on its own one-server in-process cluster.
func singleNode(t *testing.T) (*Backend, *nats.Conn) {
	t.Helper()
	return openOn(t, oneServer(t))
}

// oneServer is an in-process one-server cluster, shut down at the end.
func oneServer(t *testing.T) *jstest.Cluster {
	t.Helper()
	cl, err := jstest.Start(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	return cl
}

// openOn is one more instance on cl, with its own connection.
func openOn(t *testing.T, cl *jstest.Cluster) (*Backend, *nats.Conn) {
	t.Helper()
	return openAt(t, cl.URLs())
}

// openAt is an instance connected to url (a server, or a proxy in front of one).
func openAt(t *testing.T, url string) (*Backend, *nats.Conn) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b, err := Open(context.Background(), Options{Conn: nc, Key: []byte(strings.Repeat("k", 32)), Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b, nc
}

// A group's DLQ stream is made with the group (not by its first dead
// letter, which then waited for it), and again when the group is deleted
// and made again through the same instance.
func TestDLQStreamWithGroup(t *testing.T) {
	b, _ := singleNode(t)
	ctx := context.Background()
	if _, _, err := b.PutTopic(core.TopicConfig{Name: "dlqg", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	cfg := core.GroupConfig{Name: "dlqg-g", Subscriptions: []core.Subscription{{Topic: "dlqg", Filter: "*"}},
		MessageModel: core.Clustering, ConsumeMode: core.Concurrently, ConsumeFrom: core.ConsumeFromFirstOffset}
	for round := range 2 {
		if _, _, err := b.PutGroup(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if _, err := b.js.Stream(ctx, dlqStream("dlqg-g")); err != nil {
			t.Fatalf("round %d: the DLQ stream after PUT group: %v", round, err)
		}
		if err := b.DeleteGroup(ctx, "dlqg-g"); err != nil {
			t.Fatal(err)
		}
	}
}
