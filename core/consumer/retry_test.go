package consumer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// With the engine's real sendMessageBack: a nacked message comes back
// through %RETRY%<group> (shown with its original id and topic,
// reconsumeTimes+1) and, after maxReconsumeTimes failures, lands in
// %DLQ%<group> exactly once.
func TestRetryAndDeadLetterThroughEngine(t *testing.T) {
	e := &env{t: t, dir: t.TempDir(), back: &recordingSendBack{}}
	for range 18 {
		e.delays = append(e.delays, 10*time.Millisecond)
	}
	e.open()
	t.Cleanup(e.close)
	e.topic("t", 2)
	cfg := e.group(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{{Topic: "t"}}, MaxReconsumeTimes: 2})

	type seen struct {
		id, topic, userTopic string
		rt                   int
	}
	var mu sync.Mutex
	got := map[string][]seen{} // body → deliveries
	l := ListenerFunc(func(d *Delivery) {
		for i, m := range d.Msgs {
			mu.Lock()
			got[string(m.Body)] = append(got[string(m.Body)], seen{m.UserID(), m.Topic, m.UserTopic(), m.ReconsumeTimes})
			mu.Unlock()
			if string(m.Body) == "poison" || m.ReconsumeTimes == 0 {
				d.Nack(i, 0)
			} else {
				d.Ack(i)
			}
		}
	})
	o := Options{Group: cfg, ClientID: "c", Listener: l, PersistInterval: 10 * time.Millisecond}
	c, err := New(o, Deps{Reader: e.eng, SendBack: engineSendBack{e.eng, e.reg}, Coordinator: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer shutdown(t, c)

	res, err := e.eng.Put(t.Context(), "t", []core.PutMessage{{Body: []byte("poison")}, {Body: []byte("flaky")}})
	if err != nil {
		t.Fatal(err)
	}
	dlq := core.MessageQueue{Topic: core.DLQTopic("g")}
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got["poison"]) != 3 || len(got["flaky"]) != 2 {
			return fmt.Errorf("poison %d, flaky %d deliveries", len(got["poison"]), len(got["flaky"]))
		}
		r, err := e.eng.GetMessages(dlq, 0, 10, core.MatchAll)
		if err != nil || len(r.Messages) != 1 {
			return fmt.Errorf("dlq: %v %d", err, len(r.Messages))
		}
		return nil
	})
	mu.Lock()
	for i, s := range got["poison"] {
		if s.id != res[0].MessageID || s.userTopic != "t" || s.rt != i {
			t.Fatalf("poison delivery %d: %+v", i, s)
		}
		if i > 0 && s.topic != core.RetryTopic("g") {
			t.Fatalf("retry delivered from %q", s.topic)
		}
	}
	mu.Unlock()
	r, _ := e.eng.GetMessages(dlq, 0, 10, core.MatchAll)
	if m := r.Messages[0]; m.UserID() != res[0].MessageID || string(m.Body) != "poison" || m.ReconsumeTimes != 2 || m.UserTopic() != "t" {
		t.Fatalf("dead letter: %+v", m)
	}
	// The retry queue's offset moves past both retries.
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if off := committed(t, e, "g", core.MessageQueue{Topic: core.RetryTopic("g")}); off != 3 {
			return fmt.Errorf("retry offset %d", off)
		}
		return nil
	})
	time.Sleep(100 * time.Millisecond) // nothing more may arrive (delays are 10 ms)
	mu.Lock()
	defer mu.Unlock()
	if len(got["poison"]) != 3 || len(got["flaky"]) != 2 {
		t.Fatalf("extra deliveries: poison %d flaky %d", len(got["poison"]), len(got["flaky"]))
	}
}
