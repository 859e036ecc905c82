package jetstream_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jsapi "github.com/nats-io/nats.go/jetstream"
)

// Growth fences: an ORDERLY topic grows from 1 to 4 queues with messages
// in flight and a backlog on the old queue; publishes continue through
// both instances (one of which still has the old layout cached for up to
// a second). Four consumers on both instances receive and ack: every
// key's messages arrive in publish order (0 inversions), each once, and
// none with reconsumeTimes > 0 (a fence return is not a failure).
func TestOrderlyAcrossGrowth(t *testing.T) {
	e := newEnv(t)
	e.topic("grow", 1)
	e.group("grow-g", groupCfg("grow", map[string]any{"consumeMode": "ORDERLY", "maxReconsumeTimes": 2}))
	const keys, per = 12, 4
	var mu sync.Mutex
	next := map[string]int{} // key → next index to publish
	publish := func(base string, k int) {
		key := "k" + strconv.Itoa(k)
		mu.Lock()
		i := next[key]
		next[key]++
		mu.Unlock()
		e.publish(base, "grow", map[string]any{"body": fmt.Sprintf("%s/%d", key, i), "shardingKey": key})
	}
	for i := 0; i < per; i++ {
		for k := 0; k < keys; k++ {
			publish(e.lb.URL, k)
		}
	}
	var order []string // bodies in the order they were received
	take := func(m msg) {
		mu.Lock()
		order = append(order, m.Body+"#"+strconv.Itoa(m.ReconsumeTimes))
		mu.Unlock()
	}
	// A message in flight across the growth.
	inflight := e.receiveOne("grow-g", 10*time.Second)
	take(inflight)
	mustDo(t, "PUT", e.gws[0].URL()+"/v1/topics/grow", map[string]any{"queues": 4}, nil, 200)
	for i := 0; i < per; i++ {
		for k := 0; k < keys; k++ {
			publish(e.gws[(i+k)%2].URL(), k)
		}
	}
	e.settle(e.lb.URL, "grow-g", "ack", []string{inflight.ReceiptHandle}, nil)

	total := 2 * keys * per
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var r struct {
					Messages []msg `json:"messages"`
				}
				if do(t, "POST", e.gws[c%2].URL()+"/v1/groups/grow-g/receive",
					map[string]any{"maxMessages": 4, "waitSeconds": 1, "invisibleSeconds": 30}, &r) != 200 {
					continue
				}
				var hs []string
				for _, m := range r.Messages {
					take(m)
					hs = append(hs, m.ReceiptHandle)
				}
				if len(hs) > 0 {
					do(t, "POST", e.gws[(c+1)%2].URL()+"/v1/groups/grow-g/ack", map[string]any{"receiptHandles": hs}, nil)
				}
			}
		}()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	seen := map[string]int{} // key → next index expected
	inversions, redelivered := 0, 0
	for _, o := range order {
		body, times, _ := strings.Cut(o, "#")
		key, idx, _ := strings.Cut(body, "/")
		i, _ := strconv.Atoi(idx)
		if times != "0" {
			redelivered++
		}
		if i != seen[key] {
			inversions++
			t.Errorf("%s received when %s/%d was next", body, key, seen[key])
		}
		seen[key] = max(seen[key], i+1)
	}
	if len(order) != total || inversions != 0 || redelivered != 0 {
		t.Fatalf("received %d of %d, %d inversions, %d with reconsumeTimes > 0: %v", len(order), total, inversions, redelivered, order)
	}
}

// An offsets reset re-arms the growth fences. An ORDERLY topic grows from
// 1 to 4 queues; messages stored long enough after the growth pass their
// fence check, which each instance then remembers. A reset to the first
// offset through the other instance sends every queue back to its start:
// the old queue's backlog is delivered again, and the moved keys' later
// messages on the new queues must wait for it again, on the instance that
// had remembered the pass too.
func TestOrderlyResetAfterGrowth(t *testing.T) {
	e := newEnv(t)
	e.topic("rst", 1)
	e.group("rst-g", groupCfg("rst", map[string]any{"consumeMode": "ORDERLY", "maxReconsumeTimes": 2}))
	// Keys that move off queue 0 when the topic grows to 4 queues.
	var keys []string
	for k := 0; len(keys) < 6; k++ {
		key := "k" + strconv.Itoa(k)
		h := fnv.New32a()
		h.Write([]byte(key))
		if h.Sum32()%4 != 0 {
			keys = append(keys, key)
		}
	}
	const per = 2 // each key's messages before and after the growth
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			for _, key := range keys {
				e.publish(e.gws[0].URL(), "rst", map[string]any{"body": fmt.Sprintf("%s/%d", key, i), "shardingKey": key})
			}
		}
	}
	publish(0, per)
	mustDo(t, "PUT", e.gws[0].URL()+"/v1/topics/rst", map[string]any{"queues": 4}, nil, 200)
	// Past the fence's settle time, so that a passing check is remembered.
	<-time.After(fenceSettle + 500*time.Millisecond)
	publish(per, 2*per)

	total := len(keys) * 2 * per
	checkOrder := func(round string) {
		t.Helper()
		order := e.drainOrderly(e.gws[0].URL(), "rst-g", total, 60*time.Second)
		next := map[string]int{}
		for _, body := range order {
			key, idx, _ := strings.Cut(body, "/")
			if i, _ := strconv.Atoi(idx); i != next[key] {
				t.Fatalf("%s: %s received when %s/%d was next; order %v", round, body, key, next[key], order)
			}
			next[key]++
		}
	}
	checkOrder("before the reset")
	mustDo(t, "POST", e.gws[1].URL()+"/v1/groups/rst-g/offsets/reset",
		map[string]any{"topic": "rst", "position": "FIRST_OFFSET"}, nil, 200)
	checkOrder("after the reset")
}

// fenceSettle mirrors the backend's (fence.go): how long after a growth a
// message must be stored for its passing check to be remembered.
const fenceSettle = 5 * time.Second

// drainOrderly receives and acks from base until n messages came (or
// within passes) and returns their bodies in the order received.
func (e *env) drainOrderly(base, group string, n int, within time.Duration) []string {
	e.t.Helper()
	var order []string
	deadline := time.Now().Add(within)
	for len(order) < n && time.Now().Before(deadline) {
		got := e.receive(base, group, 8, 1, 30)
		var hs []string
		for _, m := range got {
			if m.ReconsumeTimes != 0 {
				e.t.Fatalf("%s delivered again (reconsumeTimes %d): a fence return counted as a failure", m.Body, m.ReconsumeTimes)
			}
			order = append(order, m.Body)
			hs = append(hs, m.ReceiptHandle)
		}
		if len(hs) > 0 {
			e.settle(base, group, "ack", hs, nil)
		}
	}
	if len(order) != n {
		e.t.Fatalf("%s: received %d of %d in %v: %v", group, len(order), n, within, order)
	}
	return order
}

// An offsets reset forgets the fence returns counted before it: they
// would be taken off the failures of deliveries after it (whose delivery
// count starts again). A moved key's new message is held at its fence
// while the old one is out, then consumed; after a reset to the first
// offset it is nacked once and comes back with reconsumeTimes 1, not 0.
func TestResetForgetsFenceReturns(t *testing.T) {
	e := newEnv(t)
	e.topic("frt", 1)
	e.group("frt-g", groupCfg("frt", map[string]any{"consumeMode": "ORDERLY", "maxReconsumeTimes": 5}))
	key := ""
	for k := 0; key == ""; k++ {
		h := fnv.New32a()
		h.Write([]byte("k" + strconv.Itoa(k)))
		if h.Sum32()%4 != 0 {
			key = "k" + strconv.Itoa(k)
		}
	}
	gw := e.gws[0].URL()
	e.publish(gw, "frt", map[string]any{"body": "old", "shardingKey": key})
	mustDo(t, "PUT", gw+"/v1/topics/frt", map[string]any{"queues": 4}, nil, 200)
	e.publish(gw, "frt", map[string]any{"body": "new", "shardingKey": key})
	one := func(want string, times int) msg {
		t.Helper()
		got := e.receive(gw, "frt-g", 1, 5, 30)
		if len(got) != 1 || got[0].Body != want || got[0].ReconsumeTimes != times {
			t.Fatalf("received %+v, want %s with reconsumeTimes %d", got, want, times)
		}
		return got[0]
	}
	// The fence returns as the leases bucket counts them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, _ := jsapi.New(e.gws[0].nc)
	leases, err := js.KeyValue(ctx, "MQGATE_LEASES")
	if err != nil {
		t.Fatal(err)
	}
	returns, err := leases.Watch(ctx, "f.MQ_frt.>", jsapi.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer returns.Stop()
	old := one("old", 0)
	// While old is out, new is pulled and held at its fence (a return
	// counted): these receives have nothing to hand out.
	for held := false; !held; {
		if got := e.receive(gw, "frt-g", 1, 1, 30); len(got) != 0 {
			t.Fatalf("received %+v while the old queue's head is out", got)
		}
		select {
		case <-returns.Updates():
			held = true
		case <-ctx.Done():
			t.Fatal("new was never held at its fence")
		default:
		}
	}
	e.settle(gw, "frt-g", "ack", []string{old.ReceiptHandle}, nil)
	e.settle(gw, "frt-g", "ack", []string{one("new", 0).ReceiptHandle}, nil)

	mustDo(t, "POST", e.gws[1].URL()+"/v1/groups/frt-g/offsets/reset",
		map[string]any{"topic": "frt", "position": "FIRST_OFFSET"}, nil, 200)
	e.settle(gw, "frt-g", "ack", []string{one("old", 0).ReceiptHandle}, nil)
	e.settle(gw, "frt-g", "nack", []string{one("new", 0).ReceiptHandle}, map[string]any{"delayLevel": 1})
	e.settle(gw, "frt-g", "ack", []string{one("new", 1).ReceiptHandle}, nil)
}
