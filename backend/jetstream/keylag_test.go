package jetstream_test

import (
	"testing"
	"time"
)

type keyLag struct {
	ShardingKey     string `json:"shardingKey"`
	QueueID         int    `json:"queueId"`
	Depth           int    `json:"depth"`
	OldestMessageID string `json:"oldestMessageId"`
}

func (e *env) keyLags(base, group, query string) []keyLag {
	var r struct {
		Keys []keyLag `json:"keys"`
	}
	mustDo(e.t, "GET", base+"/v1/groups/"+group+"/keys"+query, nil, &r, 200)
	return r.Keys
}

// Per-key lag on JetStream: both instances list the ORDERLY group's keys
// by their oldest unfinished message, with their depth, and an ack
// through either moves them on.
func TestKeyLagsAcrossInstances(t *testing.T) {
	e := newEnv(t)
	e.topic("lagk", 2)
	e.group("lagk-g", groupCfg("lagk", map[string]any{"consumeMode": "ORDERLY"}))
	var first []string
	for i, k := range []string{"p", "p", "p", "q", "q"} {
		id := e.publish(e.gws[i%2].URL(), "lagk", map[string]any{"body": k, "shardingKey": k})
		if i == 0 || i == 3 {
			first = append(first, id)
		}
		time.Sleep(5 * time.Millisecond) // distinct bornAt
	}
	for _, g := range e.gws {
		got := e.keyLags(g.URL(), "lagk-g", "")
		if len(got) != 2 || got[0].ShardingKey != "p" || got[0].Depth != 3 || got[0].OldestMessageID != first[0] ||
			got[1].ShardingKey != "q" || got[1].Depth != 2 || got[1].OldestMessageID != first[1] {
			t.Fatalf("%s: keys = %+v, want p×3 then q×2", g.URL(), got)
		}
	}
	if got := e.keyLags(e.lb.URL, "lagk-g", "?limit=1"); len(got) != 1 || got[0].ShardingKey != "p" {
		t.Fatalf("limit=1: %+v", got)
	}
	// Ack p's oldest: p has 2 left, its oldest the second.
	for acked := false; !acked; {
		m := e.receiveOne("lagk-g", 10*time.Second)
		e.settle(e.lb.URL, "lagk-g", "ack", []string{m.ReceiptHandle}, nil)
		acked = m.MessageID == first[0]
	}
	for _, k := range e.keyLags(e.gws[1].URL(), "lagk-g", "") {
		if k.ShardingKey == "p" && (k.Depth != 2 || k.OldestMessageID == first[0]) {
			t.Fatalf("p after its oldest was acked: %+v", k)
		}
	}
	e.group("lagk-c", groupCfg("lagk", nil))
	mustDo(t, "GET", e.lb.URL+"/v1/groups/lagk-c/keys", nil, nil, 409)
}
