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
