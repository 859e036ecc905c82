package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
)

// Issue 22's targets are ratios to other systems measured in the same
// session by ../shared/peers (its own harness, read-only here): streams
// --peers FILE reads that harness's JSON lines (one per run) and sets the
// stream medians against the peers' medians.

// PeerMedian is one peer variant's medians over its runs.
type PeerMedian struct {
	Runs       int     `json:"runs"`
	PubMsgsSec float64 `json:"pubMsgsPerSec"`
	ConMsgsSec float64 `json:"conMsgsPerSec"`
	E2EP99Ms   float64 `json:"e2eP99Ms"`
	Setting    string  `json:"setting,omitempty"`
}

// PeerTarget is one of the ratios: ours over theirs, and the bar.
type PeerTarget struct {
	What  string  `json:"what"`
	Ratio float64 `json:"ratio"`
	Want  float64 `json:"want"`
	Met   bool    `json:"met"`
}

// readPeers reads ../shared/peers result lines (bench "peer") and returns
// each case's medians.
func readPeers(file string) (map[string]PeerMedian, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type line struct {
		Bench   string             `json:"bench"`
		Case    string             `json:"case"`
		Setting string             `json:"setting"`
		Metrics map[string]float64 `json:"metrics"`
	}
	by := map[string][]line{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Bench != "peer" {
			continue
		}
		by[l.Case] = append(by[l.Case], l)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := map[string]PeerMedian{}
	for c, ls := range by {
		m := func(k string) float64 { return medianOf(ls, func(l line) float64 { return l.Metrics[k] }) }
		out[c] = PeerMedian{Runs: len(ls), PubMsgsSec: m("pub_msgs_s"), ConMsgsSec: m("con_msgs_s"), E2EP99Ms: m("e2e_p99_ms"), Setting: ls[0].Setting}
	}
	return out, nil
}

// peerTargets are issue 22's bars against the peers present.
func peerTargets(med []StreamCase, peers map[string]PeerMedian) []PeerTarget {
	by := map[string]StreamCase{}
	for _, c := range med {
		by[c.Case] = c
	}
	var out []PeerTarget
	add := func(what string, ours, theirs, want float64) {
		if ours > 0 && theirs > 0 {
			r := ours / theirs
			out = append(out, PeerTarget{What: what, Ratio: r, Want: want, Met: r >= want})
		}
	}
	add("consume stream / rabbitmq-quorum consume", by["consume stream"].MsgsPerSec, peers["rabbitmq-quorum"].ConMsgsSec, 2.5)
	add("consume stream / nats-always consume", by["consume stream"].MsgsPerSec, peers["nats-always"].ConMsgsSec, 0.75)
	add("publish stream / redis-always publish", by["publish stream"].MsgsPerSec, peers["redis-always"].PubMsgsSec, 2)
	// With --frame-per-ack, the consume bars for a client that sends each
	// ack in a frame of its own (not a bar of the issue: how much of the
	// ratio the Go client's gathered acks make).
	add("consume stream frame/ack / rabbitmq-quorum", by["consume stream frame/ack"].MsgsPerSec, peers["rabbitmq-quorum"].ConMsgsSec, 2.5)
	add("consume stream frame/ack / nats-always", by["consume stream frame/ack"].MsgsPerSec, peers["nats-always"].ConMsgsSec, 0.75)
	// The fourth bar is against REST in the same run: publish→delivery
	// p99 no worse than REST's.
	add("latency p99 rest / stream", by["latency rest"].Latency.P99Ms, by["latency stream"].Latency.P99Ms, 1)
	return out
}

func writePeers(w io.Writer, peers map[string]PeerMedian, targets []PeerTarget) {
	if len(peers) == 0 {
		return
	}
	names := make([]string, 0, len(peers))
	for n := range peers {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := newTable(w)
	fmt.Fprintln(tw, "peer (../shared/peers, medians)\truns\tpub msgs/s\tconsume msgs/s\te2e p99 ms\t")
	for _, n := range names {
		p := peers[n]
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.2f\t\n", n, p.Runs, p.PubMsgsSec, p.ConMsgsSec, p.E2EP99Ms)
	}
	tw.Flush()
	for _, t := range targets {
		met := "met"
		if !t.Met {
			met = "NOT met"
		}
		fmt.Fprintf(w, "%-44s %.2f× (want ≥ %.2g×: %s)\n", t.What, t.Ratio, t.Want, met)
	}
}
