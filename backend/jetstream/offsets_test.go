package jetstream_test

import (
	"sort"
	"strconv"
	"testing"
	"time"
)

type offsetRow struct {
	Topic           string `json:"topic"`
	QueueID         int    `json:"queueId"`
	CommittedOffset int64  `json:"committedOffset"`
	MaxOffset       int64  `json:"maxOffset"`
	Lag             int64  `json:"lag"`
	InFlight        int    `json:"inFlight"`
}

func (e *env) offsets(base, group string) []offsetRow {
	var r struct {
		Offsets []offsetRow `json:"offsets"`
	}
	mustDo(e.t, "GET", base+"/v1/groups/"+group+"/offsets", nil, &r, 200)
	sort.Slice(r.Offsets, func(i, j int) bool { return r.Offsets[i].QueueID < r.Offsets[j].QueueID })
	return r.Offsets
}

// A CONCURRENTLY group's offsets have one row per queue, each with its
// own lag, the same through both instances; in-flight messages are on
// queue 0's row; acking everything brings every row to 0. It also times
// GET …/offsets on 8 queues (the figure in docs/jetstream.md).
func TestOffsetsPerQueue(t *testing.T) {
	e := newEnv(t)
	e.topic("offq", 8)
	e.group("offq-g", groupCfg("offq", nil))
	// Sharding keys put 3 messages on one queue and 1 on another.
	q := func(key string) int { // FNV-1a mod 8, as the backend
		h := uint32(2166136261)
		for i := 0; i < len(key); i++ {
			h ^= uint32(key[i])
			h *= 16777619
		}
		return int(h % 8)
	}
	want := map[int]int64{}
	for i := 0; i < 3; i++ {
		e.publish(e.lb.URL, "offq", map[string]any{"body": "a", "shardingKey": "a"})
	}
	want[q("a")] += 3
	other := ""
	for i := 0; other == ""; i++ {
		if k := "b" + strconv.Itoa(i); q(k) != q("a") {
			other = k
		}
	}
	e.publish(e.lb.URL, "offq", map[string]any{"body": "b", "shardingKey": other})
	want[q(other)]++
	for _, g := range e.gws {
		rows := e.offsets(g.URL(), "offq-g")
		if len(rows) != 8 {
			t.Fatalf("%s: %d rows, want 8: %+v", g.URL(), len(rows), rows)
		}
		for _, r := range rows {
			if r.Lag != want[r.QueueID] || r.MaxOffset != r.CommittedOffset+r.Lag {
				t.Fatalf("%s: queue %d: %+v, want lag %d", g.URL(), r.QueueID, r, want[r.QueueID])
			}
		}
	}
	// A group made now from LAST_OFFSET has nothing to consume yet.
	e.group("offq-new", groupCfg("offq", map[string]any{"consumeFrom": map[string]any{"position": "LAST_OFFSET"}}))
	for _, r := range e.offsets(e.gws[1].URL(), "offq-new") {
		if r.Lag != 0 {
			t.Fatalf("a group made from LAST_OFFSET: %+v, want lag 0", r)
		}
	}
	got := e.receive(e.lb.URL, "offq-g", 32, 5, 30)
	for len(got) < 4 {
		got = append(got, e.receive(e.lb.URL, "offq-g", 32, 1, 30)...)
	}
	if rows := e.offsets(e.lb.URL, "offq-g"); rows[0].InFlight != 4 {
		t.Fatalf("in flight on queue 0's row: %+v, want 4", rows[0])
	}
	var hs []string
	for _, m := range got {
		hs = append(hs, m.ReceiptHandle)
	}
	e.settle(e.lb.URL, "offq-g", "ack", hs, nil)
	for _, r := range e.offsets(e.gws[1].URL(), "offq-g") {
		if r.Lag != 0 || r.InFlight != 0 {
			t.Fatalf("after the acks: %+v", r)
		}
	}
	const n = 20
	var took []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		e.offsets(e.gws[i%2].URL(), "offq-g")
		took = append(took, time.Since(start))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("GET /offsets, 8 queues, %d calls: median %v, max %v", n, took[n/2], took[n-1])
}
