// Package chaos kills servers and gateways of the JetStream backend while
// messages flow, and checks, OpenChaos-style, that no acknowledged publish
// is lost; duplicates (at-least-once) are counted and reported.
package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/mqgate/mqgate/api"
	"github.com/mqgate/mqgate/backend/jetstream"
	"github.com/mqgate/mqgate/backend/jetstream/jstest"
)

type instance struct {
	srv  *httptest.Server
	b    *jetstream.Backend
	nc   *nats.Conn
	up   atomic.Bool
	once sync.Once
}

func (i *instance) kill() {
	i.once.Do(func() {
		i.up.Store(false)
		i.srv.CloseClientConnections()
		i.srv.Close()
		// No drain, no settling: the connection goes away with the
		// leases this instance handed out.
		i.nc.Close()
		i.b.Close(context.Background())
	})
}

// checker records what the clients saw.
type checker struct {
	mu       sync.Mutex
	acked    map[string]bool // publishes answered 201
	received map[string]int  // deliveries per id
	pubErrs  int
}

func (c *checker) report() (lost []string, dups int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.acked {
		if c.received[id] == 0 {
			lost = append(lost, id)
		}
	}
	for _, n := range c.received {
		if n > 1 {
			dups += n - 1
		}
	}
	return lost, dups
}

func (c *checker) allReceived() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.acked {
		if c.received[id] == 0 {
			return false
		}
	}
	return true
}

func post(client *http.Client, u string, body, out any) (int, error) {
	b, _ := json.Marshal(body)
	resp, err := client.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		_ = json.Unmarshal(raw, out)
	}
	return resp.StatusCode, nil
}

func TestKillLeaderAndGatewayMidStream(t *testing.T) {
	dir := t.TempDir()
	cluster, err := jstest.Start(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Shutdown()
	key := bytes.Repeat([]byte{3}, 32)
	urls := strings.Split(cluster.URLs(), ",")
	var insts []*instance
	for i := 0; i < 2; i++ {
		nc, err := nats.Connect(strings.Join(append([]string{urls[i]}, urls...), ","), nats.DontRandomize(),
			nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		b, err := jetstream.Open(context.Background(), jetstream.Options{Conn: nc, Key: key, Replicas: 3,
			InstanceID: fmt.Sprintf("gw%d", i), RequestTimeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		in := &instance{srv: httptest.NewServer(api.New(api.Options{Backend: b})), b: b, nc: nc}
		in.up.Store(true)
		insts = append(insts, in)
		defer in.kill()
	}
	// The load balancer: round-robin over the instances that are up (as
	// one that health-checks /readyz would, once it noticed).
	var rr atomic.Uint64
	lb := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		for k := 0; k < len(insts); k++ {
			in := insts[rr.Add(1)%uint64(len(insts))]
			if in.up.Load() {
				u, _ := url.Parse(in.srv.URL)
				r.SetURL(u)
				return
			}
		}
	}, ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) }})
	defer lb.Close()
	client := &http.Client{Timeout: 20 * time.Second}

	req, _ := http.NewRequest("PUT", lb.URL+"/v1/topics/chaos", strings.NewReader(`{"queues":4}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("topic: %v %v", err, resp)
	}
	req, _ = http.NewRequest("PUT", lb.URL+"/v1/groups/chaos-g", strings.NewReader(
		`{"subscriptions":[{"topic":"chaos"}],"consumeFrom":{"position":"FIRST_OFFSET"},"invisibleSeconds":3}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("group: %v %v", err, resp)
	}

	ck := &checker{acked: map[string]bool{}, received: map[string]int{}}
	var published atomic.Int64
	stopPub := make(chan struct{})
	stopSub := make(chan struct{})
	var pubs, subs sync.WaitGroup
	for p := 0; p < 2; p++ {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			for i := 0; ; i++ {
				select {
				case <-stopPub:
					return
				default:
				}
				var r struct {
					MessageID string `json:"messageId"`
				}
				st, err := post(client, lb.URL+"/v1/topics/chaos/messages", map[string]any{"body": fmt.Sprintf("p%d-%d", p, i)}, &r)
				ck.mu.Lock()
				if err == nil && st == 201 && r.MessageID != "" {
					ck.acked[r.MessageID] = true
					published.Add(1)
				} else {
					ck.pubErrs++
				}
				ck.mu.Unlock()
			}
		}()
	}
	for s := 0; s < 4; s++ {
		subs.Add(1)
		go func() {
			defer subs.Done()
			for {
				select {
				case <-stopSub:
					return
				default:
				}
				var r struct {
					Messages []struct {
						MessageID     string `json:"messageId"`
						ReceiptHandle string `json:"receiptHandle"`
					} `json:"messages"`
				}
				st, err := post(client, lb.URL+"/v1/groups/chaos-g/receive", map[string]any{"maxMessages": 8, "waitSeconds": 1}, &r)
				if err != nil || st != 200 {
					continue
				}
				var hs []string
				ck.mu.Lock()
				for _, m := range r.Messages {
					ck.received[m.MessageID]++
					hs = append(hs, m.ReceiptHandle)
				}
				ck.mu.Unlock()
				if len(hs) > 0 {
					post(client, lb.URL+"/v1/groups/chaos-g/ack", map[string]any{"receiptHandles": hs}, nil)
				}
			}
		}()
	}
	waitFor := func(n int64) {
		deadline := time.Now().Add(60 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for published.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d publishes acknowledged", published.Load())
			}
			<-tick.C
		}
	}
	waitFor(200)
	leader := cluster.StreamLeader("MQ_chaos")
	if leader < 0 {
		t.Fatal("no stream leader")
	}
	t.Logf("killing stream leader n%d at %d publishes", leader+1, published.Load())
	cluster.Kill(leader)
	waitFor(500)
	t.Logf("killing gateway gw0 at %d publishes", published.Load())
	insts[0].kill()
	waitFor(800)
	close(stopPub)
	pubs.Wait()

	// Consumers drain: every acknowledged publish must arrive (leases of
	// the dead gateway come back after invisibleSeconds).
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	for !ck.allReceived() && time.Now().Before(deadline) {
		<-tick.C
	}
	tick.Stop()
	close(stopSub)
	subs.Wait()
	lost, dups := ck.report()
	t.Logf("checker: %d acknowledged publishes, %d publish errors, %d lost, %d duplicate deliveries",
		len(ck.acked), ck.pubErrs, len(lost), dups)
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged publishes lost, e.g. %v", len(lost), lost[:min(len(lost), 5)])
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
