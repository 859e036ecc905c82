package gateway

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mqgate/mqgate/core"
)

// Issue 9 item 4, unit level: messages of a dropped ProcessQueue are never
// handed out — also by a receive that runs before the consumer's
// QueueDropped call arrives — and their handles answer expired without
// answering the delivery; the queue's next ProcessQueue is served.
func TestDroppedQueueHandsOutNothing(t *testing.T) {
	for _, notify := range []bool{false, true} {
		t.Run(fmt.Sprintf("notify=%v", notify), func(t *testing.T) {
			r := newRig(t, Options{}, clustering("g"))
			f := r.client("g", "gw1")
			f.deliver(q(0), false, 0, 5)
			f.deliver(q(1), false, 0, 1)
			held := r.receive("g", core.ReceiveRequest{MaxMessages: 3}) // 0:0 1:0 0:1
			if len(held) != 3 {
				t.Fatalf("got %v", offsets(held))
			}
			f.dropQueue(q(0), notify)

			got := r.receive("g", core.ReceiveRequest{MaxMessages: 32})
			if len(got) != 0 {
				t.Fatalf("after the drop, receive handed out %v", offsets(got))
			}
			ctx := context.Background()
			rounds := []struct {
				name string
				do   func([]string) ([]core.HandleResult, error)
				want []core.HandleStatus // 0:0, 1:0 (live), 0:1
			}{
				{"extend", func(h []string) ([]core.HandleResult, error) { return r.gw.Extend(ctx, "g", h, time.Minute) },
					[]core.HandleStatus{core.HandleExpired, core.HandleOK, core.HandleExpired}},
				{"ack", func(h []string) ([]core.HandleResult, error) { return r.gw.Ack(ctx, "g", h) },
					[]core.HandleStatus{core.HandleExpired, core.HandleOK, core.HandleExpired}},
				{"nack", func(h []string) ([]core.HandleResult, error) { return r.gw.Nack(ctx, "g", h, 0, "") },
					[]core.HandleStatus{core.HandleExpired, core.HandleExpired, core.HandleExpired}},
			}
			for _, rd := range rounds {
				res, err := rd.do(handles(held))
				if err != nil {
					t.Fatal(err)
				}
				for i, rs := range res {
					if rs.Status != rd.want[i] {
						t.Fatalf("%s of %s: %s, want %s", rd.name, offsets(held)[i], rs.Status, rd.want[i])
					}
				}
			}
			// Only the queue-1 message was answered (acked once).
			if a := f.got(); !slices.Equal(a, []answer{{offset: 0, ok: true}}) {
				t.Fatalf("answers %+v", a)
			}
			if c := r.gw.leases.live(); c != 0 {
				t.Fatalf("%d leases left", c)
			}
			// A batch of the dropped ProcessQueue still on its way (its
			// pull raced with the drop) is refused, not buffered.
			late := &fakeDelivery{f: f, mq: q(0), msgs: []*core.Message{{Topic: "t", QueueOffset: 5}}}
			late.dropped.Store(true)
			f.opts.Listener.(*inbox).consume(late, q(0), false, late.msgs)
			if k := f.opts.Listener.(*inbox).counts()[q(0)]; k != [2]int{0, 0} {
				t.Fatalf("queue 0 buffered/in flight %v after a late batch of the dropped ProcessQueue", k)
			}
			// The queue's next ProcessQueue (an offset reset re-creates it).
			f.deliver(q(0), false, 100, 2)
			got = r.receive("g", core.ReceiveRequest{MaxMessages: 32})
			if !slices.Equal(offsets(got), []string{"0:100", "0:101"}) {
				t.Fatalf("next ProcessQueue: %v", offsets(got))
			}
			if k := r.client("g", "gw1").opts.Listener.(*inbox).counts()[q(0)]; k != [2]int{0, 2} {
				t.Fatalf("queue 0 buffered/in flight %v", k)
			}
		})
	}
}

// An orderly queue whose message is in flight when its ProcessQueue is
// dropped is not blocked by it: the next ProcessQueue's messages are handed
// out once QueueDropped voided the old lease.
func TestDroppedOrderlyQueueUnblocks(t *testing.T) {
	r := newRig(t, Options{}, orderly("g"))
	f := r.client("g", "gw1")
	f.deliver(q(0), true, 0, 3)
	held := r.receive("g", core.ReceiveRequest{MaxMessages: 1})
	if !slices.Equal(offsets(held), []string{"0:0"}) {
		t.Fatalf("got %v", offsets(held))
	}
	f.dropQueue(q(0), false)
	f.deliver(q(0), true, 0, 3) // the next owner starts again at 0
	if got := r.receive("g", core.ReceiveRequest{MaxMessages: 1}); len(got) != 0 {
		t.Fatalf("handed out %v while the dropped message is in flight and QueueDropped has not run", offsets(got))
	}
	done := make(chan []core.Received)
	go func() { done <- r.receive("g", core.ReceiveRequest{MaxMessages: 3, Wait: 10 * time.Second}) }()
	checkFor(t, 2*time.Second, func() error {
		if n := r.gw.GroupStatusWaiting("g"); n != 1 {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	f.opts.Listener.(*inbox).QueueDropped(q(0)) // wakes the parked receive
	if got := <-done; !slices.Equal(offsets(got), []string{"0:0", "0:1", "0:2"}) {
		t.Fatalf("next ProcessQueue: %v", offsets(got))
	}
	res, _ := r.gw.Ack(context.Background(), "g", handles(held))
	if res[0].Status != core.HandleExpired {
		t.Fatalf("ack of the dropped delivery: %s", res[0].Status)
	}
	if a := f.got(); len(a) != 0 {
		t.Fatalf("answers %+v", a)
	}
}

// Issue 9 item 10: an acked handle answers ok to every later ack, also
// after its lease deadline, and the ended lease is out of the table at once;
// a nacked or expired one answers expired.
func TestReAckAfterDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, Options{}, clustering("g"))
		f := r.client("g", "gw1")
		f.deliver(q(0), false, 0, 3)
		got := r.receive("g", core.ReceiveRequest{MaxMessages: 3, Invisible: 10 * time.Second})
		ctx := context.Background()
		ack := func(i int) core.HandleStatus {
			res, err := r.gw.Ack(ctx, "g", handles(got[i:i+1]))
			if err != nil {
				t.Fatal(err)
			}
			return res[0].Status
		}
		if s := ack(0); s != core.HandleOK {
			t.Fatalf("ack: %s", s)
		}
		if res, _ := r.gw.Nack(ctx, "g", handles(got[1:2]), 0, ""); res[0].Status != core.HandleOK {
			t.Fatalf("nack: %s", res[0].Status)
		}
		if n := r.gw.leases.live(); n != 1 {
			t.Fatalf("%d leases in the table after ack and nack, want 1", n)
		}
		time.Sleep(time.Minute) // past every deadline: message 2 expires
		synctest.Wait()
		for range 2 {
			if s := ack(0); s != core.HandleOK {
				t.Fatalf("re-ack after the deadline: %s", s)
			}
		}
		if s := ack(1); s != core.HandleExpired {
			t.Fatalf("ack of a nacked handle: %s", s)
		}
		if s := ack(2); s != core.HandleExpired {
			t.Fatalf("ack of an expired handle: %s", s)
		}
		for _, o := range []func() ([]core.HandleResult, error){
			func() ([]core.HandleResult, error) { return r.gw.Nack(ctx, "g", handles(got[:1]), 0, "") },
			func() ([]core.HandleResult, error) { return r.gw.Extend(ctx, "g", handles(got[:1]), time.Minute) },
		} {
			if res, _ := o(); res[0].Status != core.HandleExpired {
				t.Fatalf("nack/extend of an acked handle: %s", res[0].Status)
			}
		}
		want := []answer{{0, true, 0}, {1, false, 0}, {2, false, 0}}
		if a := f.got(); !slices.Equal(a, want) {
			t.Fatalf("answers %+v, want %+v", a, want)
		}
		if n := r.gw.leases.live(); n != 0 {
			t.Fatalf("%d leases left", n)
		}
	})
}

// The tombstones are one bit per granted lease in a ring: bounded, and
// forgetting exactly what is more than the window behind.
func TestAckedSetWindow(t *testing.T) {
	s := newAckedSet(128)
	for seq := uint64(1); seq <= 1000; seq++ {
		s.grant(seq)
		if seq%3 == 0 {
			s.set(seq)
		}
		if s.bytes() > 128/8 {
			t.Fatalf("%d bytes for a 128-bit window", s.bytes())
		}
	}
	for seq := uint64(1); seq <= 1000; seq++ {
		want := seq%3 == 0 && seq > 1000-128
		if got := s.has(seq); got != want {
			t.Fatalf("has(%d) = %v, want %v", seq, got, want)
		}
	}
	if s.has(0) || s.has(1001) {
		t.Fatal("outside the granted range")
	}
	s.set(1000 - 128) // out of the window: ignored
	if s.has(1000 - 128) {
		t.Fatal("set out of the window")
	}
}
