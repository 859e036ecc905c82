package main

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestStreamsPeersTargets(t *testing.T) {
	// Three runs of two peers in ../shared/peers' result format, and a
	// line of another bench that must be ignored.
	lines := `{"bench":"peer","case":"rabbitmq-quorum","metrics":{"pub_msgs_s":16000,"con_msgs_s":40000,"e2e_p99_ms":2.4}}
{"bench":"peer","case":"rabbitmq-quorum","metrics":{"pub_msgs_s":17000,"con_msgs_s":44000,"e2e_p99_ms":2.2}}
{"bench":"peer","case":"rabbitmq-quorum","metrics":{"pub_msgs_s":15000,"con_msgs_s":42000,"e2e_p99_ms":2.6}}
{"bench":"peer","case":"redis-always","metrics":{"pub_msgs_s":38000,"con_msgs_s":9000,"e2e_p99_ms":0.9}}
{"bench":"fsync","case":"rabbitmq-quorum","metrics":{"pub_msgs_s":1}}
not json
`
	file := filepath.Join(t.TempDir(), "peers.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	peers, err := readPeers(file)
	if err != nil {
		t.Fatal(err)
	}
	if q := peers["rabbitmq-quorum"]; q.Runs != 3 || q.ConMsgsSec != 42000 || q.PubMsgsSec != 16000 || q.E2EP99Ms != 2.4 {
		t.Fatalf("rabbitmq-quorum medians %+v", q)
	}
	runs := []StreamsRun{
		{Cases: []StreamCase{{Case: "consume stream", MsgsPerSec: 100000}, {Case: "publish stream", MsgsPerSec: 70000}}},
		{Cases: []StreamCase{{Case: "consume stream", MsgsPerSec: 110000}, {Case: "publish stream", MsgsPerSec: 80000}}},
		{Cases: []StreamCase{{Case: "consume stream", MsgsPerSec: 120000}, {Case: "publish stream", MsgsPerSec: 90000},
			{Case: "latency stream", Latency: LatencySummary{P99Ms: 4}}, {Case: "latency rest", Latency: LatencySummary{P99Ms: 3}}}},
	}
	med := medianCases(runs)
	got := map[string]PeerTarget{}
	for _, tg := range peerTargets(med, peers) {
		got[tg.What] = tg
	}
	if len(got) != 3 { // no nats-always line, no frame/ack case: those are left out
		t.Fatalf("targets %+v", got)
	}
	if l := got["latency p99 rest / stream"]; l.Ratio != 0.75 || l.Met { // REST's 3 ms against the stream's 4
		t.Fatalf("latency target %+v", l)
	}
	if c := got["consume stream / rabbitmq-quorum consume"]; math.Abs(c.Ratio-110000.0/42000) > 1e-9 || !c.Met {
		t.Fatalf("consume target %+v", c)
	}
	if p := got["publish stream / redis-always publish"]; math.Abs(p.Ratio-80000.0/38000) > 1e-9 || !p.Met || p.Want != 2 {
		t.Fatalf("publish target %+v", p)
	}
}

// TestH2CClientSpeaksHTTP2: --client h2c (and streams --h2c) is cleartext
// HTTP/2 with prior knowledge, all requests on one connection.
func TestH2CClientSpeaksHTTP2(t *testing.T) {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, r.Proto, http.StatusHTTPVersionNotSupported)
			return
		}
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	srv.Config.Protocols = &protos
	srv.Start()
	defer srv.Close()
	posters, err := newPosters("h2c", srv.URL, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		p := posters()
		wg.Go(func() {
			defer p.close()
			if code, err := p.postJSON(context.Background(), srv.URL+"/x", map[string]any{}, nil); err != nil || code != 200 {
				t.Errorf("post: %d %v", code, err)
			}
		})
	}
	wg.Wait()
	if len(conns) != 1 {
		t.Fatalf("%d connections, want the one h2c connection", len(conns))
	}
}
