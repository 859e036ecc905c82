package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mqgate/mqgate/core"
)

func TestReceiveFairAcrossQueues(t *testing.T) {
	r := newRig(t, Options{}, clustering("g"))
	f := r.client("g", "gw1")
	for id := range 4 {
		f.deliver(q(id), false, 0, 10)
	}
	got := r.receive("g", core.ReceiveRequest{MaxMessages: 8})
	want := []string{"0:0", "1:0", "2:0", "3:0", "0:1", "1:1", "2:1", "3:1"}
	if !slices.Equal(offsets(got), want) {
		t.Fatalf("hand-out %v, want %v", offsets(got), want)
	}
	// Single-message receives rotate over the queues too.
	var firsts []int
	for range 4 {
		firsts = append(firsts, r.receive("g", core.ReceiveRequest{MaxMessages: 1})[0].Message.QueueID)
	}
	slices.Sort(firsts)
	if !slices.Equal(firsts, []int{0, 1, 2, 3}) {
		t.Fatalf("four single receives took queues %v", firsts)
	}
}

func TestReceiveLongPollWakesOnArrival(t *testing.T) {
	r := newRig(t, Options{}, clustering("g"))
	f := r.client("g", "gw1")
	start := time.Now()
	if got := r.receive("g", core.ReceiveRequest{Wait: 100 * time.Millisecond}); len(got) != 0 {
		t.Fatalf("empty group gave %d messages", len(got))
	}
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("empty long poll returned after %v", el)
	}

	done := make(chan []core.Received)
	go func() { done <- r.receive("g", core.ReceiveRequest{MaxMessages: 5, Wait: 10 * time.Second}) }()
	checkFor(t, 2*time.Second, func() error {
		if n := r.gw.GroupStatusWaiting("g"); n != 1 {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	sent := time.Now()
	f.deliver(q(2), false, 7, 1)
	got := <-done
	if lat := time.Since(sent); lat > 100*time.Millisecond {
		t.Fatalf("parked receive answered %v after the arrival", lat)
	}
	if !slices.Equal(offsets(got), []string{"2:7"}) {
		t.Fatalf("got %v", offsets(got))
	}
}

func TestReceiveCancelledLosesNothing(t *testing.T) {
	r := newRig(t, Options{}, clustering("g"))
	f := r.client("g", "gw1")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := r.gw.Receive(ctx, "g", core.ReceiveRequest{MaxMessages: 1, Wait: 10 * time.Second})
		errc <- err
	}()
	checkFor(t, 2*time.Second, func() error {
		if n := r.gw.GroupStatusWaiting("g"); n != 1 {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled receive: %v", err)
	}
	f.deliver(q(0), false, 0, 1)
	if got := r.receive("g", core.ReceiveRequest{}); len(got) != 1 {
		t.Fatalf("message after a cancelled receive: got %d", len(got))
	}
}

// TestReceiveManyWaiters parks more receives than messages arrive and checks
// that every message reaches exactly one receive and every receive ends.
func TestReceiveManyWaiters(t *testing.T) {
	r := newRig(t, Options{}, clustering("g"))
	f := r.client("g", "gw1")
	const waiters, msgs = 16, 40
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			for {
				got := r.receive("g", core.ReceiveRequest{MaxMessages: 3, Wait: 300 * time.Millisecond})
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, o := range offsets(got) {
					seen[o]++
				}
				mu.Unlock()
				if _, err := r.gw.Ack(context.Background(), "g", handles(got)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range msgs {
		f.deliver(q(i%4), false, int64(i/4), 1)
	}
	wg.Wait()
	if len(seen) != msgs {
		t.Fatalf("%d distinct messages received, want %d", len(seen), msgs)
	}
	for o, n := range seen {
		if n != 1 {
			t.Fatalf("%s received %d times", o, n)
		}
	}
	if n := len(f.got()); n != msgs {
		t.Fatalf("%d answers, want %d", n, msgs)
	}
}

func TestReceiveLimitsAndDrain(t *testing.T) {
	r := newRig(t, Options{MaxWaitingPerGroup: 2, MaxWaiting: 3}, clustering("g"), clustering("h"))
	r.client("g", "gw1")
	results := make(chan error, 4)
	park := func(group string) {
		go func() {
			got, err := r.gw.Receive(context.Background(), group, core.ReceiveRequest{MaxMessages: 1, Wait: 30 * time.Second})
			if err == nil && len(got) != 0 {
				err = fmt.Errorf("drained receive got %d messages", len(got))
			}
			results <- err
		}()
	}
	park("g")
	park("g")
	checkFor(t, 2*time.Second, func() error {
		if n := r.gw.GroupStatusWaiting("g"); n != 2 {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	_, err := r.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 1, Wait: time.Second})
	if core.ErrorCode(err) != core.ETooMany {
		t.Fatalf("third receive on g: %v, want too_many", err)
	}
	// A receive that does not wait is never refused.
	if _, err := r.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 1}); err != nil {
		t.Fatal(err)
	}
	park("h")
	checkFor(t, 2*time.Second, func() error {
		if n := r.gw.GroupStatusWaiting("h"); n != 1 {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	_, err = r.gw.Receive(context.Background(), "h", core.ReceiveRequest{MaxMessages: 1, Wait: time.Second})
	if core.ErrorCode(err) != core.ETooMany {
		t.Fatalf("fourth receive in all: %v, want too_many", err)
	}
	start := time.Now()
	r.gw.Drain()
	for range 3 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("drain took %v", el)
	}
	if _, err := r.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 1}); core.ErrorCode(err) != core.EUnavailable {
		t.Fatalf("receive after drain: %v", err)
	}
}

func TestReceiveErrors(t *testing.T) {
	push := clustering("p")
	push.Push = &core.PushConfig{URL: "http://127.0.0.1:1/"}
	bc := clustering("b")
	bc.MessageModel = core.Broadcasting
	r := newRig(t, Options{}, clustering("g"), push, bc)
	ctx := context.Background()
	for _, tc := range []struct {
		group string
		req   core.ReceiveRequest
		code  string
		field string
	}{
		{"nope", core.ReceiveRequest{MaxMessages: 1}, core.ENotFound, ""},
		{"p", core.ReceiveRequest{MaxMessages: 1}, core.EConflict, ""},
		{"b", core.ReceiveRequest{MaxMessages: 1}, core.EInvalid, "consumerId"},
		{"g", core.ReceiveRequest{MaxMessages: 33}, core.EInvalid, "maxMessages"},
		{"g", core.ReceiveRequest{MaxMessages: 1, Wait: 31 * time.Second}, core.EInvalid, "waitSeconds"},
		{"g", core.ReceiveRequest{MaxMessages: 1, Invisible: 13 * time.Hour}, core.EInvalid, "invisibleSeconds"},
	} {
		_, err := r.gw.Receive(ctx, tc.group, tc.req)
		var e *core.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Field != tc.field {
			t.Errorf("receive %s %+v: %v, want %s %s", tc.group, tc.req, err, tc.code, tc.field)
		}
	}
	if _, err := r.gw.Ack(ctx, "nope", []string{"x"}); core.ErrorCode(err) != core.ENotFound {
		t.Errorf("ack on unknown group: %v", err)
	}
}

func TestLeaseExpiryRedelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, Options{}, clustering("g"))
		f := r.client("g", "gw1")
		f.deliver(q(0), false, 0, 2)
		got := r.receive("g", core.ReceiveRequest{MaxMessages: 2, Invisible: 10 * time.Second})
		if len(got) != 2 {
			t.Fatalf("got %d", len(got))
		}
		time.Sleep(5 * time.Second)
		res, _ := r.gw.Extend(context.Background(), "g", handles(got[1:]), 20*time.Second)
		if res[0].Status != core.HandleOK || !res[0].InvisibleUntil.Equal(time.Now().Add(20*time.Second)) {
			t.Fatalf("extend: %+v", res[0])
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if a := f.got(); !slices.Equal(a, []answer{{offset: 0, ok: false, level: 0}}) {
			t.Fatalf("after the first lease: answers %+v", a)
		}
		res, _ = r.gw.Ack(context.Background(), "g", handles(got))
		if res[0].Status != core.HandleExpired || res[1].Status != core.HandleOK {
			t.Fatalf("ack after expiry: %+v", res)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if a := f.got(); len(a) != 2 || !a[1].ok {
			t.Fatalf("extended lease acked, then expired again? %+v", a)
		}
	})
}

func TestAckIdempotentNackLevelsAndForeignHandles(t *testing.T) {
	r := newRig(t, Options{}, clustering("g"), clustering("h"))
	f := r.client("g", "gw1")
	f.deliver(q(0), false, 0, 3)
	got := r.receive("g", core.ReceiveRequest{MaxMessages: 3})
	ctx := context.Background()
	for range 2 {
		res, err := r.gw.Ack(ctx, "g", handles(got[:1]))
		if err != nil || res[0].Status != core.HandleOK {
			t.Fatalf("ack: %+v %v", res, err)
		}
	}
	res, _ := r.gw.Nack(ctx, "g", handles(got[:1]), 0, "")
	if res[0].Status != core.HandleExpired {
		t.Fatalf("nack of an acked handle: %s", res[0].Status)
	}
	res, _ = r.gw.Nack(ctx, "g", handles(got[1:2]), -1, "")
	if res[0].Status != core.HandleOK {
		t.Fatal(res)
	}
	res, _ = r.gw.Nack(ctx, "g", handles(got[2:3]), 5, "")
	if res[0].Status != core.HandleOK {
		t.Fatal(res)
	}
	want := []answer{{0, true, 0}, {1, false, -1}, {2, false, 5}}
	if a := f.got(); !slices.Equal(a, want) {
		t.Fatalf("answers %+v, want %+v", a, want)
	}
	h := got[0].ReceiptHandle
	forged := h[:len(h)-2] + map[bool]string{true: "AA", false: "AB"}[h[len(h)-2:] != "AA"]
	res, _ = r.gw.Ack(ctx, "g", []string{forged, "not a handle"})
	if res[0].Status != core.HandleInvalid || res[1].Status != core.HandleInvalid {
		t.Fatalf("forged handles: %+v", res)
	}
	res, _ = r.gw.Ack(ctx, "h", []string{h})
	if res[0].Status != core.HandleInvalid {
		t.Fatalf("a handle of another group: %s", res[0].Status)
	}

	// A gateway restarted with the same key verifies old handles but
	// answers expired: the message is delivered again.
	r2 := newRig(t, Options{}, clustering("g"))
	res, _ = r2.gw.Ack(ctx, "g", []string{h})
	if res[0].Status != core.HandleExpired {
		t.Fatalf("a handle of an earlier run: %s", res[0].Status)
	}
}

// TestForgedHandleOfLiveLease: a live lease's own handle is taken
// without its MAC (leaseTable.apply), so a handle that differs from it
// in the MAC alone, or names its lease with other fields, must still be
// refused and leave the lease live.
func TestForgedHandleOfLiveLease(t *testing.T) {
	r := newRig(t, Options{}, clustering("g"))
	f := r.client("g", "gw1")
	f.deliver(q(0), false, 0, 2)
	got := r.receive("g", core.ReceiveRequest{MaxMessages: 2})
	ctx := context.Background()
	h := got[0].ReceiptHandle
	forged := h[:len(h)-2] + map[bool]string{true: "AA", false: "AB"}[h[len(h)-2:] != "AA"]
	rc, err := r.gw.leases.codec.decode(h)
	if err != nil {
		t.Fatal(err)
	}
	rc.Offset++ // the lease's seq, other fields, signed with another key
	otherKey := newHandleCodec(append([]byte("another key, as long as it must"), 'x')).encode(rc)
	res, _ := r.gw.Ack(ctx, "g", []string{forged, otherKey, got[1].ReceiptHandle})
	if res[0].Status != core.HandleInvalid || res[1].Status != core.HandleInvalid || res[2].Status != core.HandleOK {
		t.Fatalf("forged handles of a live lease beside a real one: %+v", res)
	}
	res, _ = r.gw.Extend(ctx, "g", []string{forged}, time.Minute)
	if res[0].Status != core.HandleInvalid {
		t.Fatalf("extend with a forged handle: %+v", res)
	}
	res, _ = r.gw.Ack(ctx, "g", []string{h, h})
	if res[0].Status != core.HandleOK || res[1].Status != core.HandleOK {
		t.Fatalf("the lease did not stay live for its real handle: %+v", res)
	}
	if a := f.got(); len(a) != 2 || !a[0].ok || !a[1].ok {
		t.Fatalf("answers %+v, want both acked once", a)
	}
}

func TestOrderlyHandOutAndNackCascade(t *testing.T) {
	r := newRig(t, Options{}, orderly("g"))
	f := r.client("g", "gw1")
	f.deliver(q(0), true, 0, 5)
	f.deliver(q(1), true, 0, 2)
	ctx := context.Background()

	a := r.receive("g", core.ReceiveRequest{MaxMessages: 2})
	if !slices.Equal(offsets(a), []string{"0:0", "1:0"}) {
		t.Fatalf("first receive %v", offsets(a))
	}
	// Both queues have a message in flight: nothing more is handed out.
	if got := r.receive("g", core.ReceiveRequest{MaxMessages: 5}); len(got) != 0 {
		t.Fatalf("handed out %v while earlier messages are in flight", offsets(got))
	}
	r.gw.Ack(ctx, "g", handles(a[:1]))
	// Queue 0 unblocks; one receive takes a consecutive run of it.
	b := r.receive("g", core.ReceiveRequest{MaxMessages: 3})
	if !slices.Equal(offsets(b), []string{"0:1", "0:2", "0:3"}) {
		t.Fatalf("run of queue 0: %v", offsets(b))
	}
	// Nack 0:2: it and every later unanswered message of the batch (0:3 in
	// flight, 0:4 still buffered) go round again; 0:1 stays unanswered.
	res, _ := r.gw.Nack(ctx, "g", []string{b[1].ReceiptHandle}, 0, "")
	if res[0].Status != core.HandleOK {
		t.Fatal(res)
	}
	res, _ = r.gw.Ack(ctx, "g", []string{b[2].ReceiptHandle})
	if res[0].Status != core.HandleExpired {
		t.Fatalf("ack of a message sent round again by the nack: %s", res[0].Status)
	}
	r.gw.Ack(ctx, "g", []string{b[0].ReceiptHandle})
	want := []answer{{0, true, 0}, {2, false, 0}, {3, false, 0}, {4, false, 0}, {1, true, 0}}
	if got := f.got(); !slices.Equal(got, want) {
		t.Fatalf("answers %+v, want %+v", got, want)
	}
	if got := r.receive("g", core.ReceiveRequest{MaxMessages: 5}); len(got) != 0 {
		t.Fatalf("queue 1 still in flight, queue 0 answered: got %v", offsets(got))
	}
}

func TestOrderlyExpiryCascades(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, Options{}, orderly("g"))
		f := r.client("g", "gw1")
		f.deliver(q(0), true, 0, 3)
		got := r.receive("g", core.ReceiveRequest{MaxMessages: 2, Invisible: 5 * time.Second})
		if len(got) != 2 {
			t.Fatal(offsets(got))
		}
		r.gw.Ack(context.Background(), "g", handles(got[1:]))
		time.Sleep(6 * time.Second)
		synctest.Wait()
		// 0:1 was acked, but orderly answers are positional: the expiry of
		// 0:0 sends 0:2 (still buffered) round again as well.
		want := []answer{{1, true, 0}, {0, false, 0}, {2, false, 0}}
		if a := f.got(); !slices.Equal(a, want) {
			t.Fatalf("answers %+v, want %+v", a, want)
		}
	})
}

func TestBroadcastingClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bc := clustering("b")
		bc.MessageModel = core.Broadcasting
		r := newRig(t, Options{BroadcastIdleTimeout: time.Minute}, bc)
		r.receive("b", core.ReceiveRequest{ConsumerID: "c1"})
		r.receive("b", core.ReceiveRequest{ConsumerID: "c2"})
		c1, c2 := r.client("b", "c1"), r.client("b", "c2")
		c1.deliver(q(0), false, 0, 1)
		c2.deliver(q(0), false, 0, 1)
		g1 := r.receive("b", core.ReceiveRequest{ConsumerID: "c1"})
		g2 := r.receive("b", core.ReceiveRequest{ConsumerID: "c2"})
		if len(g1) != 1 || len(g2) != 1 {
			t.Fatalf("c1 got %d, c2 got %d", len(g1), len(g2))
		}
		res, _ := r.gw.Ack(context.Background(), "b", handles(append(g1, g2...)))
		if res[0].Status != core.HandleOK || res[1].Status != core.HandleOK {
			t.Fatal(res)
		}
		if len(c1.got()) != 1 || len(c2.got()) != 1 {
			t.Fatal("each consumer's ack must reach its own client")
		}
		// c1 keeps receiving; c2 goes idle and its client is shut down.
		for range 3 {
			time.Sleep(30 * time.Second)
			r.receive("b", core.ReceiveRequest{ConsumerID: "c1"})
		}
		synctest.Wait()
		if c1.isShutdown() || !c2.isShutdown() {
			t.Fatalf("after idling: c1 shut down %v, c2 shut down %v", c1.isShutdown(), c2.isShutdown())
		}
		// c2 comes back: a new client (resuming from its committed offsets).
		r.mu.Lock()
		delete(r.clients, "b/c2")
		r.mu.Unlock()
		r.receive("b", core.ReceiveRequest{ConsumerID: "c2"})
		if r.client("b", "c2").isShutdown() {
			t.Fatal("returning consumer got a stopped client")
		}
	})
}

func TestGroupChangesFollowTheRegistry(t *testing.T) {
	r := newRig(t, Options{}, clustering("g"))
	f := r.client("g", "gw1")
	f.deliver(q(0), false, 0, 1)
	got := r.receive("g", core.ReceiveRequest{})

	// A subscription change is applied live to the same client.
	c := clustering("g")
	c.Subscriptions = append(c.Subscriptions, core.Subscription{Topic: "u", Filter: "a || b"})
	r.groups.put(c)
	checkFor(t, 2*time.Second, func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.updates) != 1 || len(f.updates[0].Subscriptions) != 2 {
			return fmt.Errorf("updates %+v", f.updates)
		}
		return nil
	})
	// A mode change replaces the client; old handles answer expired.
	r.mu.Lock()
	delete(r.clients, "g/gw1")
	r.mu.Unlock()
	r.groups.put(orderly("g"))
	f2 := r.client("g", "gw1")
	checkFor(t, 2*time.Second, func() error {
		if !f.isShutdown() {
			return errors.New("old client still running")
		}
		return nil
	})
	res, _ := r.gw.Ack(context.Background(), "g", handles(got))
	if res[0].Status != core.HandleExpired {
		t.Fatalf("handle of a replaced client: %s", res[0].Status)
	}
	// Deleting the group stops its client and frees parked receives.
	done := make(chan []core.Received)
	go func() { done <- r.receive("g", core.ReceiveRequest{Wait: 30 * time.Second}) }()
	checkFor(t, 2*time.Second, func() error {
		if n := r.gw.GroupStatusWaiting("g"); n != 1 {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	r.groups.del("g")
	if got := <-done; len(got) != 0 {
		t.Fatalf("receive on a deleted group got %d", len(got))
	}
	checkFor(t, 2*time.Second, func() error {
		if !f2.isShutdown() {
			return errors.New("client of a deleted group still running")
		}
		return nil
	})
}
