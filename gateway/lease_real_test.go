package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/consumer"
	"github.com/mqgate/mqgate/core/engine"
	"github.com/mqgate/mqgate/core/groups"
)

// countingSendBack counts send-backs (and stores nothing).
type countingSendBack struct {
	mu   sync.Mutex
	msgs []string // bodies
}

func (s *countingSendBack) SendMessagesBack(_ context.Context, _ string, backs []consumer.SendBack) error {
	s.mu.Lock()
	for _, b := range backs {
		s.msgs = append(s.msgs, string(b.Msg.Body))
	}
	s.mu.Unlock()
	return nil
}

func (s *countingSendBack) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// newRealEnvTuned is newRealEnv with a send-back that counts, and tune
// applied to every client's options after the gateway set them.
func newRealEnvTuned(t *testing.T, tune func(*consumer.Options)) (*realEnv, *countingSendBack) {
	t.Helper()
	dir := t.TempDir()
	eng, err := engine.Open(engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := groups.Open(eng.Store())
	if err != nil {
		t.Fatal(err)
	}
	sb := &countingSendBack{}
	deps := consumer.Deps{Reader: eng, SendBack: sb, Coordinator: reg}
	return startRealEnv(t, eng, reg, Options{
		Dir: dir, Groups: reg, InstanceID: "gw1",
		NewClient: ConsumerFactory(deps, func(o *consumer.Options) {
			o.PersistInterval = 50 * time.Millisecond
			o.SuspendTime = 100 * time.Millisecond
			if tune != nil {
				tune(o)
			}
		}),
	}), sb
}

func (e *realEnv) queueStatus(t *testing.T, group string, mq core.MessageQueue) (core.QueueStatus, error) {
	t.Helper()
	st, err := e.gw.GroupStatus(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Clients {
		for _, q := range c.Queues {
			if q.Queue == mq {
				return q, nil
			}
		}
	}
	return core.QueueStatus{}, fmt.Errorf("queue %v not owned", mq)
}

// waitBuffered waits until n messages of mq wait in the gateway's inbox.
func (e *realEnv) waitBuffered(t *testing.T, group string, mq core.MessageQueue, n int) {
	t.Helper()
	checkFor(t, 5*time.Second, func() error {
		q, err := e.queueStatus(t, group, mq)
		if err == nil && q.Buffered != n {
			err = fmt.Errorf("%d buffered, want %d", q.Buffered, n)
		}
		return err
	})
}

// Issue 9 item 4 against the real engine and push consumer: after an
// offset reset to LAST_OFFSET, or a filter change, the messages the
// gateway had buffered are gone — receive returns none of them — and the
// handles already issued for that ProcessQueue answer expired; messages
// published afterwards are delivered.
func TestRealDroppedQueueHandsOutNothing(t *testing.T) {
	for _, how := range []string{"reset", "filter"} {
		for _, mode := range []core.ConsumeMode{core.Concurrently, core.Orderly} {
			t.Run(fmt.Sprintf("%s/%s", how, mode), func(t *testing.T) {
				e, sb := newRealEnvTuned(t, nil)
				if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "t", Queues: 1}); err != nil {
					t.Fatal(err)
				}
				cfg := clustering("g")
				cfg.ConsumeMode = mode
				cfg.ConsumeFrom = core.ConsumeFromFirstOffset
				if _, _, err := e.reg.Put(cfg); err != nil {
					t.Fatal(err)
				}
				// Orderly: one batch (of one) at a time reaches the inbox.
				buffered, take := 20, 2
				if mode == core.Orderly {
					buffered, take = 1, 1
				}
				e.publish(t, "t", 20, nil)
				e.waitBuffered(t, "g", q(0), buffered)
				held, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: take, Invisible: time.Minute})
				if err != nil || len(held) != take {
					t.Fatalf("receive: %v %v", offsets(held), err)
				}

				switch how {
				case "reset":
					if _, err := e.admin.ResetOffsets(context.Background(), "g", "", "t", core.ConsumeFromLastOffset, time.Time{}); err != nil {
						t.Fatal(err)
					}
				case "filter":
					cfg.Subscriptions = []core.Subscription{{Topic: "t", Filter: "tagA || tagB"}}
					if _, _, err := e.reg.Put(cfg); err != nil {
						t.Fatal(err)
					}
				}
				if how == "reset" {
					// The reset answers after the drop: at once, nothing
					// of the old ProcessQueue is handed out.
					got, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 32})
					if err != nil || len(got) != 0 {
						t.Fatalf("right after the reset, receive handed out %v (%v)", offsets(got), err)
					}
					q, err := e.queueStatus(t, "g", q(0))
					if err != nil || q.Buffered != 0 || q.InFlight != 0 {
						t.Fatalf("right after the reset: %+v %v", q, err)
					}
				}
				// The drop purges the inbox: nothing of the old
				// ProcessQueue waits there or is in flight.
				checkFor(t, 5*time.Second, func() error {
					q, err := e.queueStatus(t, "g", q(0))
					if err == nil && (q.Buffered != 0 || q.InFlight != 0) {
						err = fmt.Errorf("buffered %d, in flight %d", q.Buffered, q.InFlight)
					}
					return err
				})
				got, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 32, Wait: 200 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				if how == "reset" && len(got) != 0 {
					t.Fatalf("after the reset, receive handed out %v", offsets(got))
				}
				for _, r := range got { // filter: matching messages (none have tags) only
					if r.Message.Tags == "" {
						t.Fatalf("after the filter change, receive handed out %v", offsets(got))
					}
				}
				res, err := e.gw.Ack(context.Background(), "g", handles(held))
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range res {
					if r.Status != core.HandleExpired {
						t.Fatalf("ack of %s after the drop: %s", offsets(held)[i], r.Status)
					}
				}
				// The queue goes on: a message published now arrives (the
				// orderly lock was handed on, not held for the old batch).
				if _, err := e.eng.Put(context.Background(), "t", []core.PutMessage{{Body: []byte("new"), BodyIsText: true, Tags: "tagA"}}); err != nil {
					t.Fatal(err)
				}
				got, err = e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 32, Wait: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(offsets(got), []string{"0:20"}) {
					t.Fatalf("after the drop: %v, want 0:20", offsets(got))
				}
				if res, _ := e.gw.Ack(context.Background(), "g", handles(got)); res[0].Status != core.HandleOK {
					t.Fatalf("ack: %s", res[0].Status)
				}
				if s := sb.sent(); len(s) != 0 {
					t.Fatalf("sent back %v", s)
				}
			})
		}
	}
}

// Issue 9 item 5 against the real engine and push consumer: the lease is
// the consume timeout. A message that waited in the gateway's buffer longer
// than the consumer's consume timeout, then was received, is not sent back
// while its lease is live; its ack answers ok and commits it. The tune
// scales the consumer's timeout down as the gateway would have it (a
// positive value) and leaves "the listener owns timing" alone.
func TestRealLeaseIsTheConsumeTimeout(t *testing.T) {
	const consumeTimeout = 200 * time.Millisecond
	e, sb := newRealEnvTuned(t, func(o *consumer.Options) {
		if o.ConsumeTimeout > 0 {
			o.ConsumeTimeout = consumeTimeout
		}
	})
	if _, _, err := e.eng.PutTopic(core.TopicConfig{Name: "t", Queues: 1}); err != nil {
		t.Fatal(err)
	}
	cfg := clustering("g")
	cfg.ConsumeFrom = core.ConsumeFromFirstOffset
	if _, _, err := e.reg.Put(cfg); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "t", 2, nil)
	e.waitBuffered(t, "g", q(0), 2)
	time.Sleep(2 * consumeTimeout) // buffered: ages nothing
	got, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 1, Invisible: 5 * time.Second})
	if err != nil || len(got) != 1 {
		t.Fatalf("receive: %v %v", offsets(got), err)
	}
	time.Sleep(2 * consumeTimeout) // leased: the lease rules
	if s := sb.sent(); len(s) != 0 {
		t.Fatalf("sent back %v while buffered or leased", s)
	}
	res, err := e.gw.Ack(context.Background(), "g", handles(got))
	if err != nil || res[0].Status != core.HandleOK {
		t.Fatalf("ack: %+v %v", res, err)
	}
	got2, err := e.gw.Receive(context.Background(), "g", core.ReceiveRequest{MaxMessages: 32, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(offsets(got2), []string{"0:1"}) {
		t.Fatalf("second receive: %v, want only 0:1", offsets(got2))
	}
	if res, _ := e.gw.Ack(context.Background(), "g", handles(got2)); res[0].Status != core.HandleOK {
		t.Fatalf("ack: %s", res[0].Status)
	}
	checkFor(t, 5*time.Second, func() error {
		offs, err := e.admin.Offsets(context.Background(), "g", "")
		if err != nil {
			return err
		}
		for _, o := range offs {
			if o.Queue == q(0) && o.Committed != 2 {
				return fmt.Errorf("committed %d, want 2", o.Committed)
			}
		}
		return nil
	})
	if s := sb.sent(); len(s) != 0 {
		t.Fatalf("sent back %v", s)
	}
}
