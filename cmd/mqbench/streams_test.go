package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
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
		{Cases: []StreamCase{{Case: "consume stream", MsgsPerSec: 120000}, {Case: "publish stream", MsgsPerSec: 90000}}},
	}
	med := medianCases(runs)
	got := map[string]PeerTarget{}
	for _, tg := range peerTargets(med, peers) {
		got[tg.What] = tg
	}
	if len(got) != 2 { // no nats-always line: that target is left out
		t.Fatalf("targets %+v", got)
	}
	if c := got["consume stream / rabbitmq-quorum consume"]; math.Abs(c.Ratio-110000.0/42000) > 1e-9 || !c.Met {
		t.Fatalf("consume target %+v", c)
	}
	if p := got["publish stream / redis-always publish"]; math.Abs(p.Ratio-80000.0/38000) > 1e-9 || !p.Met || p.Want != 2 {
		t.Fatalf("publish target %+v", p)
	}
}
