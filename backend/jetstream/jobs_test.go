package jetstream_test

import (
	"fmt"
	"testing"
	"time"
)

type jobView struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Matched int64  `json:"matched"`
	Moved   int64  `json:"moved"`
	Error   string `json:"error"`
}

// A filter job outlives the instance that runs it: a redrive job started
// on gateway 0 at 40 messages a second loses its owner to a crash (the
// NATS connection cut first, so it cannot let the job go); gateway 1 takes
// the job when its lease ends and finishes it from the recorded progress.
// Every dead letter comes back exactly once, the DLQ ends empty, and the
// job ends DONE with moved short by at most the crashed owner's one
// unrecorded chunk (docs/jetstream.md).
func TestJobSurvivesItsInstance(t *testing.T) {
	e := newEnv(t)
	e.topic("job", 1)
	e.group("job-g", groupCfg("job", nil))
	const n, rate = 200, 40
	var batch []map[string]any
	for i := 0; i < n; i++ {
		batch = append(batch, map[string]any{"body": fmt.Sprint(i)})
	}
	mustDo(t, "POST", e.lb.URL+"/v1/topics/job/messages/batch", map[string]any{"messages": batch}, nil, 201)
	for dead := 0; dead < n; {
		got := e.receive(e.gws[1].URL(), "job-g", 32, 5, 30)
		if len(got) == 0 {
			t.Fatalf("dead-lettered %d of %d", dead, n)
		}
		var hs []string
		for _, m := range got {
			hs = append(hs, m.ReceiptHandle)
		}
		e.settle(e.gws[1].URL(), "job-g", "nack", hs, map[string]any{"delayLevel": -1, "reason": "poison"})
		dead += len(got)
	}

	var j jobView
	mustDo(t, "POST", e.gws[0].URL()+"/v1/groups/job-g/dlq/redrive",
		map[string]any{"filter": map[string]any{"reason": "poison"}, "ratePerSecond": rate}, &j, 202)
	follow := func(base string, until func(jobView) bool, within time.Duration) {
		t.Helper()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(within)
		for {
			mustDo(t, "GET", base+"/v1/jobs/"+j.ID, nil, &j, 200)
			if until(j) {
				return
			}
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("job %+v: not within %v", j, within)
			}
		}
	}
	follow(e.gws[1].URL(), func(j jobView) bool { return j.Moved > 0 }, 10*time.Second)
	e.gws[0].nc.Close() // a crash, as far as JetStream sees it
	e.gws[0].Close()
	if j.Moved >= n {
		t.Fatalf("job %+v finished before its owner crashed", j)
	}
	follow(e.gws[1].URL(), func(j jobView) bool { return j.State != "RUNNING" }, 60*time.Second)
	const chunk = rate / 10 // the pacer's chunk (internal/pace)
	if j.State != "DONE" || j.Moved < n-chunk || j.Moved > n || j.Matched < j.Moved {
		t.Fatalf("job %+v, want DONE with %d moved (at most %d short)", j, n, chunk)
	}

	seen := map[string]int{}
	for len(seen) < n {
		got := e.receive(e.gws[1].URL(), "job-g", 32, 5, 30)
		if len(got) == 0 {
			t.Fatalf("redriven %d of %d", len(seen), n)
		}
		var hs []string
		for _, m := range got {
			seen[m.Body]++
			hs = append(hs, m.ReceiptHandle)
		}
		e.settle(e.gws[1].URL(), "job-g", "ack", hs, nil)
	}
	if extra := e.receive(e.gws[1].URL(), "job-g", 32, 1, 30); len(extra) > 0 {
		t.Fatalf("redriven twice: %+v", extra)
	}
	for body, k := range seen {
		if k != 1 {
			t.Errorf("%s redriven %d times", body, k)
		}
	}
	var depth struct {
		Messages []msg `json:"messages"`
	}
	mustDo(t, "GET", e.gws[1].URL()+"/v1/groups/job-g/dlq?limit=10", nil, &depth, 200)
	if len(depth.Messages) != 0 {
		t.Fatalf("DLQ after the job: %d dead letters", len(depth.Messages))
	}
}
