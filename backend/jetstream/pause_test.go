package jetstream_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

type groupView struct {
	Name     string `json:"name"`
	Paused   bool   `json:"paused"`
	PausedAt string `json:"pausedAt"`
}

type emptyReceive struct {
	Reason        string   `json:"reason"`
	NextVisibleAt string   `json:"nextVisibleAt"`
	BlockedKeys   []string `json:"blockedKeys"`
}

// receiveFull is a receive that also returns the empty-receive reason.
func (e *env) receiveFull(base, group string, max, wait, invisible int) ([]msg, *emptyReceive) {
	var r struct {
		Messages []msg         `json:"messages"`
		Empty    *emptyReceive `json:"empty"`
	}
	mustDo(e.t, "POST", base+"/v1/groups/"+group+"/receive",
		map[string]any{"maxMessages": max, "waitSeconds": wait, "invisibleSeconds": invisible}, &r, 200)
	return r.Messages, r.Empty
}

// A pause through one instance holds on the other: GET and the list say
// paused, a receive there answers empty with reason PAUSED, a config PUT
// keeps the pause, and a resume through the first instance wakes a
// receive parked on the second at once.
func TestPauseGroupAcrossInstances(t *testing.T) {
	e := newEnv(t)
	e.topic("pz", 1)
	e.group("pz-g", groupCfg("pz", nil))
	id := e.publish(e.lb.URL, "pz", map[string]any{"body": "x"})

	var g groupView
	mustDo(t, "POST", e.gws[0].URL()+"/v1/groups/pz-g/pause", nil, &g, 200)
	if !g.Paused || g.PausedAt == "" {
		t.Fatalf("pause answered %+v, want paused with pausedAt", g)
	}
	mustDo(t, "GET", e.gws[1].URL()+"/v1/groups/pz-g", nil, &g, 200)
	if !g.Paused {
		t.Fatalf("GET on the other instance: %+v, want paused", g)
	}
	var list struct {
		Groups []groupView `json:"groups"`
	}
	mustDo(t, "GET", e.gws[1].URL()+"/v1/groups", nil, &list, 200)
	if i := slices.IndexFunc(list.Groups, func(x groupView) bool { return x.Name == "pz-g" }); i < 0 || !list.Groups[i].Paused {
		t.Fatalf("group list: %+v, want pz-g paused", list.Groups)
	}
	got, empty := e.receiveFull(e.gws[1].URL(), "pz-g", 1, 1, 30)
	if len(got) != 0 || empty == nil || empty.Reason != "PAUSED" {
		t.Fatalf("receive of a paused group: %+v empty %+v, want none, PAUSED", got, empty)
	}
	// A config PUT keeps the pause (as on embedded).
	e.group("pz-g", groupCfg("pz", map[string]any{"maxReconsumeTimes": 5}))
	mustDo(t, "GET", e.gws[0].URL()+"/v1/groups/pz-g", nil, &g, 200)
	if !g.Paused {
		t.Fatal("a config PUT resumed the group")
	}

	type answer struct {
		msgs []msg
		at   time.Time
	}
	done := make(chan answer, 1)
	go func() {
		var r struct {
			Messages []msg `json:"messages"`
		}
		do(t, "POST", e.gws[1].URL()+"/v1/groups/pz-g/receive", map[string]any{"maxMessages": 1, "waitSeconds": 15, "invisibleSeconds": 30}, &r)
		done <- answer{r.Messages, time.Now()}
	}()
	time.Sleep(500 * time.Millisecond) // let the receive park on the pause
	g = groupView{}
	mustDo(t, "POST", e.gws[0].URL()+"/v1/groups/pz-g/resume", nil, &g, 200)
	resumed := time.Now()
	if g.Paused || g.PausedAt != "" {
		t.Fatalf("resume answered %+v", g)
	}
	a := <-done
	if len(a.msgs) != 1 || a.msgs[0].MessageID != id {
		t.Fatalf("receive parked across the resume: %+v, want %s", a.msgs, id)
	}
	if d := a.at.Sub(resumed); d > 5*time.Second {
		t.Fatalf("the parked receive answered %v after the resume, want at once", d)
	}
	if st := status(e.settle(e.lb.URL, "pz-g", "ack", []string{a.msgs[0].ReceiptHandle}, nil)); st[0] != "ok" {
		t.Fatalf("ack after resume: %v", st)
	}
	// Pausing twice and resuming a running group change nothing.
	mustDo(t, "POST", e.lb.URL+"/v1/groups/pz-g/resume", nil, &g, 200)
	if g.Paused {
		t.Fatal("resume of a running group paused it")
	}
	mustDo(t, "POST", e.lb.URL+"/v1/groups/nope-g/pause", nil, nil, 404)
}

// A paused push group's webhook gets nothing on either instance; resume
// starts the delivery again.
func TestPausePushGroup(t *testing.T) {
	e := newEnv(t)
	var hits atomic.Int32
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(204)
	}))
	defer sink.Close()
	e.topic("pzp", 1)
	e.group("pzp-g", groupCfg("pzp", map[string]any{"push": map[string]any{"url": sink.URL, "secret": "push-secret-0123456789-abcdef"}}))
	mustDo(t, "POST", e.lb.URL+"/v1/groups/pzp-g/pause", nil, nil, 200)
	// Every instance follows the pause through its watch of the groups
	// bucket (asynchronous, well under this).
	time.Sleep(500 * time.Millisecond)
	e.publish(e.lb.URL, "pzp", map[string]any{"body": "held"})
	time.Sleep(2500 * time.Millisecond) // longer than the feeders' poll (1 s)
	if n := hits.Load(); n != 0 {
		t.Fatalf("a paused push group's webhook got %d requests", n)
	}
	mustDo(t, "POST", e.lb.URL+"/v1/groups/pzp-g/resume", nil, nil, 200)
	for end := time.Now().Add(15 * time.Second); hits.Load() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("no webhook request after the resume")
		}
	}
}

// An empty receive says why on JetStream too, whichever instance answers:
// NO_MESSAGES, NOT_VISIBLE_YET (all leased), KEYS_BLOCKED with the key
// of the ORDERLY head in flight.
func TestDiagnoseEmptyReceive(t *testing.T) {
	e := newEnv(t)
	e.topic("dg", 1)
	e.group("dg-c", groupCfg("dg", nil))
	if _, empty := e.receiveFull(e.gws[0].URL(), "dg-c", 1, 0, 30); empty == nil || empty.Reason != "NO_MESSAGES" {
		t.Fatalf("empty group: %+v, want NO_MESSAGES", empty)
	}
	e.topic("dgo", 1)
	e.group("dg-o", groupCfg("dgo", map[string]any{"consumeMode": "ORDERLY"}))
	e.publish(e.lb.URL, "dg", map[string]any{"body": "c"})
	e.publish(e.lb.URL, "dgo", map[string]any{"body": "o1", "shardingKey": "k1"})
	e.publish(e.lb.URL, "dgo", map[string]any{"body": "o2", "shardingKey": "k1"})
	if got := e.receive(e.gws[0].URL(), "dg-c", 1, 5, 30); len(got) != 1 {
		t.Fatalf("receive: %+v", got)
	}
	if got, empty := e.receiveFull(e.gws[1].URL(), "dg-c", 1, 0, 30); len(got) != 0 || empty == nil || empty.Reason != "NOT_VISIBLE_YET" {
		t.Fatalf("all leased: %+v %+v, want NOT_VISIBLE_YET", got, empty)
	}
	if got := e.receive(e.gws[0].URL(), "dg-o", 1, 5, 30); len(got) != 1 || got[0].ShardingKey != "k1" {
		t.Fatalf("orderly receive: %+v", got)
	}
	got, empty := e.receiveFull(e.gws[1].URL(), "dg-o", 1, 1, 30)
	if len(got) != 0 || empty == nil || empty.Reason != "KEYS_BLOCKED" || !slices.Equal(empty.BlockedKeys, []string{"k1"}) {
		t.Fatalf("orderly head out: %+v %+v, want KEYS_BLOCKED [k1]", got, empty)
	}
	// Paused wins, as on embedded.
	mustDo(t, "POST", e.lb.URL+"/v1/groups/dg-o/pause", nil, nil, 200)
	if _, empty := e.receiveFull(e.gws[1].URL(), "dg-o", 1, 0, 30); empty == nil || empty.Reason != "PAUSED" {
		t.Fatalf("paused: %+v, want PAUSED", empty)
	}
}

// Receives parked on a paused group share one watch per instance: three
// of them on one gateway hold one watch between them; a resume through
// the other gateway wakes all three (each gets one of the messages
// published while paused, which it could not without waking before its
// 20 s wait ends), and the watch is gone after.
func TestPausedReceivesShareOneWatch(t *testing.T) {
	e := newEnv(t)
	e.topic("pw", 1)
	e.group("pw-g", groupCfg("pw", nil))
	mustDo(t, "POST", e.gws[1].URL()+"/v1/groups/pw-g/pause", nil, nil, 200)
	for i := 0; i < 3; i++ {
		e.publish(e.lb.URL, "pw", map[string]any{"body": "x"})
	}
	got := make(chan int, 3)
	for i := 0; i < 3; i++ {
		go func() {
			var r struct {
				Messages []msg `json:"messages"`
			}
			do(t, "POST", e.gws[0].URL()+"/v1/groups/pw-g/receive", map[string]any{"maxMessages": 1, "waitSeconds": 20}, &r)
			got <- len(r.Messages)
		}()
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		watches, waiters := e.gws[0].b.ResumeWatches()
		if waiters == 3 {
			if watches != 1 {
				t.Fatalf("%d watches for 3 receives of one paused group, want 1", watches)
			}
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%d receives parked, want 3", waiters)
		}
	}
	mustDo(t, "POST", e.gws[1].URL()+"/v1/groups/pw-g/resume", nil, nil, 200)
	for i := 0; i < 3; i++ {
		if n := <-got; n != 1 {
			t.Fatalf("a receive woken by the resume got %d messages, want 1", n)
		}
	}
	if watches, waiters := e.gws[0].b.ResumeWatches(); watches != 0 || waiters != 0 {
		t.Fatalf("after the resume: %d watches, %d waiters, want none", watches, waiters)
	}
}
