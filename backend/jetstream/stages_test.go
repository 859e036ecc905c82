package jetstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	jsapi "github.com/nats-io/nats.go/jetstream"

	"github.com/mqgate/mqgate/core"
)

// TestStageTimes measures, one operation at a time on the package's
// 3-node R3 cluster, where the milliseconds of a publish and of a
// receive→ack go: each stage is timed on its own (the raw JetStream
// round trips with the connection, the backend's calls, the HTTP
// requests), and docs/performance.md reads the differences. Opt-in
// (MQGATE_STAGES=1): it measures, it checks nothing but that each call
// works.
func TestStageTimes(t *testing.T) {
	if os.Getenv("MQGATE_STAGES") == "" {
		t.Skip("set MQGATE_STAGES=1 to measure")
	}
	const n = 200
	e := newEnv(t)
	g := e.gws[0]
	// Messages stored within 2 s of an instance's start always have
	// their lease override read (overrides.go): measure the usual case.
	time.Sleep(2100 * time.Millisecond)
	e.topic("stages", 1)
	e.group("stages-g", groupCfg("stages", nil))
	ctx := context.Background()
	body := bytes.Repeat([]byte("x"), 1024)
	js, _ := jsapi.New(g.nc)
	if _, err := js.CreateOrUpdateStream(ctx, jsapi.StreamConfig{Name: "STAGES_RAW", Subjects: []string{"raw.>"},
		Replicas: 3, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	type row struct {
		name string
		d    []time.Duration
	}
	var rows []row
	timeIt := func(name string, f func(i int) error) {
		r := row{name: name}
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if err := f(i); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r.d = append(r.d, time.Since(t0))
		}
		rows = append(rows, r)
	}
	// Publish path.
	timeIt("raw: JetStream publish, PubAck (the direct client)", func(int) error {
		_, err := js.Publish(ctx, "raw.p", body)
		return err
	})
	timeIt("raw: atomic batch of 2 (message + id index entry)", func(i int) error {
		id := "b" + strconv.Itoa(i)
		m1, m2 := nats.NewMsg("raw.b"), nats.NewMsg("raw.i."+id)
		m1.Data, m2.Data = body, []byte("1")
		m1.Header.Set("Nats-Batch-Id", id)
		m1.Header.Set("Nats-Batch-Sequence", "1")
		m2.Header.Set("Nats-Batch-Id", id)
		m2.Header.Set("Nats-Batch-Sequence", "2")
		m2.Header.Set("Nats-Batch-Commit", "1")
		if err := g.nc.PublishMsg(m1); err != nil {
			return err
		}
		_, err := g.nc.RequestMsg(m2, 5*time.Second)
		return err
	})
	timeIt("backend: Put of 1 message", func(int) error {
		_, err := g.b.Put(ctx, "stages", []core.PutMessage{{Body: body}})
		return err
	})
	// 16 publishers at once: each publish's own time, and the batches
	// the lanes sent for them (coalesce.go).
	b0, p0 := g.b.LaneCounts()
	conc := row{name: "backend: Put of 1, 16 concurrent (coalesced; per publish)"}
	var cmu sync.Mutex
	var cwg sync.WaitGroup
	for w := 0; w < 16; w++ {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for i := 0; i < n/4; i++ {
				t0 := time.Now()
				if _, err := g.b.Put(ctx, "stages", []core.PutMessage{{Body: body}}); err != nil {
					t.Error(err)
					return
				}
				cmu.Lock()
				conc.d = append(conc.d, time.Since(t0))
				cmu.Unlock()
			}
		}()
	}
	cwg.Wait()
	rows = append(rows, conc)
	b1, p1 := g.b.LaneCounts()
	t.Logf("16 concurrent publishers: %d publishes in %d batches", p1-p0, b1-b0)
	pub, _ := json.Marshal(map[string]any{"body": string(body)})
	timeIt("HTTP: POST /v1/topics/{t}/messages (one gateway)", func(int) error {
		resp, err := http.Post(g.URL()+"/v1/topics/stages/messages", "application/json", bytes.NewReader(pub))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	// Receive→ack path (4n messages are stored by now).
	var handles []string
	timeIt("backend: Receive of 1 (pull + lease)", func(int) error {
		got, err := g.b.Receive(ctx, "stages-g", core.ReceiveRequest{MaxMessages: 1, Wait: time.Second})
		if err != nil || len(got) != 1 {
			return fmt.Errorf("receive: %d, %v", len(got), err)
		}
		handles = append(handles, got[0].ReceiptHandle)
		return nil
	})
	r0, s0 := g.b.OverrideCounts()
	timeIt("backend: Ack of 1 (barrier read, AckSync; no override read)", func(i int) error {
		res, err := g.b.Ack(ctx, "stages-g", handles[i:i+1])
		if err != nil || res[0].Status != core.HandleOK {
			return fmt.Errorf("ack: %+v, %v", res, err)
		}
		return nil
	})
	r1, s1 := g.b.OverrideCounts()
	t.Logf("acks: %d override reads, %d skipped", r1-r0, s1-s0)
	timeIt("raw: STREAM.MSG.GET last_by_subj $KV.MQGATE_LEASES.> (the barrier)", func(int) error {
		_, err := g.nc.Request("$JS.API.STREAM.MSG.GET.KV_MQGATE_LEASES", []byte(`{"last_by_subj":"$KV.MQGATE_LEASES.>"}`), 5*time.Second)
		return err
	})
	timeIt("raw: STREAM.MSG.GET from the leases bucket's leader", func(int) error {
		_, err := g.nc.Request("$JS.API.STREAM.MSG.GET.KV_MQGATE_LEASES", []byte(`{"last_by_subj":"$KV.MQGATE_LEASES.none"}`), 5*time.Second)
		return err
	})
	// ORDERLY on one queue: one message out at a time (MaxAckPending 1),
	// a claim written per hand-out (orderclaim.go). A receive waits for
	// the message the previous ack let the consumer deliver, so the
	// receive+ack pair is the queue's drain cycle.
	e.topic("stages-o", 1)
	e.group("stages-o-g", groupCfg("stages-o", map[string]any{"consumeMode": "ORDERLY"}))
	for i := 0; i < n; i++ {
		if _, err := g.b.Put(ctx, "stages-o", []core.PutMessage{{Body: body, ShardingKey: "k"}}); err != nil {
			t.Fatal(err)
		}
	}
	timeIt("backend: ORDERLY Receive + Ack of 1 (the queue's drain cycle)", func(int) error {
		got, err := g.b.Receive(ctx, "stages-o-g", core.ReceiveRequest{MaxMessages: 1, Wait: 2 * time.Second})
		if err != nil || len(got) != 1 {
			return fmt.Errorf("receive: %d, %v", len(got), err)
		}
		res, err := g.b.Ack(ctx, "stages-o-g", []string{got[0].ReceiptHandle})
		if err != nil || res[0].Status != core.HandleOK {
			return fmt.Errorf("ack: %+v, %v", res, err)
		}
		return nil
	})
	c, err := js.CreateOrUpdateConsumer(ctx, "STAGES_RAW", jsapi.ConsumerConfig{Durable: "raw", AckPolicy: jsapi.AckExplicitPolicy,
		FilterSubject: "raw.p", Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	var raw []jsapi.Msg
	timeIt("raw: Fetch of 1 (the direct client's pull)", func(int) error {
		b, err := c.Fetch(1, jsapi.FetchMaxWait(time.Second))
		if err != nil {
			return err
		}
		for m := range b.Messages() {
			raw = append(raw, m)
		}
		return b.Error()
	})
	timeIt("raw: AckSync of 1 (DoubleAck)", func(i int) error { return raw[i].DoubleAck(ctx) })
	for _, r := range rows {
		slices.Sort(r.d)
		var sum time.Duration
		for _, d := range r.d {
			sum += d
		}
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		t.Logf("%-55s mean %6.2f ms  p50 %6.2f ms  p99 %6.2f ms", r.name, ms(sum/time.Duration(len(r.d))), ms(r.d[len(r.d)/2]), ms(r.d[len(r.d)*99/100]))
	}
}

// TestOrderlyDrain measures how fast an ORDERLY group drains 8 queues
// with receivers on one or both instances (backend calls, no HTTP):
// the shape of mqbench jetstream's ORDERLY rows. Opt-in like
// TestStageTimes (MQGATE_STAGES=1); it checks only that every message
// is acked once.
func TestOrderlyDrain(t *testing.T) {
	if os.Getenv("MQGATE_STAGES") == "" {
		t.Skip("set MQGATE_STAGES=1 to measure")
	}
	e := newEnv(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte("x"), 1024)
	for _, c := range []struct {
		name      string
		receivers int
		instances int
		max       int
	}{
		{"1 receiver, 1 instance, max 32", 1, 1, 32},
		{"8 receivers, 1 instance, max 32", 8, 1, 32},
		{"32 receivers, 1 instance, max 32", 32, 1, 32},
		{"32 receivers, 2 instances, max 32", 32, 2, 32},
		{"32 receivers, 2 instances, max 1", 32, 2, 1},
	} {
		topic := fmt.Sprintf("drain%d-%d-%d", c.receivers, c.instances, c.max)
		e.topic(topic, 8)
		e.group(topic+"-g", groupCfg(topic, map[string]any{"consumeMode": "ORDERLY"}))
		const n = 800
		for i := 0; i < n; i++ {
			if _, err := e.gws[0].b.Put(ctx, topic, []core.PutMessage{{Body: body, ShardingKey: strconv.Itoa(i % 64)}}); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		seen := map[string]bool{}
		var receives int
		start := time.Now()
		var wg sync.WaitGroup
		for r := 0; r < c.receivers; r++ {
			b := e.gws[r%c.instances].b
			wg.Go(func() {
				for {
					mu.Lock()
					done := len(seen) >= n || time.Since(start) > time.Minute
					mu.Unlock()
					if done {
						return
					}
					got, err := b.Receive(ctx, topic+"-g", core.ReceiveRequest{MaxMessages: c.max, Wait: time.Second})
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						continue
					}
					hs := make([]string, len(got))
					for i, m := range got {
						hs[i] = m.ReceiptHandle
					}
					res, err := b.Ack(ctx, topic+"-g", hs)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					receives++
					for i, m := range got {
						if res[i].Status == core.HandleOK {
							seen[m.Message.UserID()] = true
						}
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		el := time.Since(start)
		if len(seen) < n {
			t.Errorf("%s: %d of %d acked in %s", c.name, len(seen), n, el)
		}
		t.Logf("%-36s %6.0f msgs/s  %.1f per receive", c.name, float64(len(seen))/el.Seconds(), float64(len(seen))/float64(max(receives, 1)))
	}
}
