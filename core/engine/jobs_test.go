package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// deadLetterReasons dead-letters n messages of topic for group; message i
// has property i, tag "even"/"odd" and lastReason "boom <i%3>".
func deadLetterReasons(t testing.TB, e *Engine, group, topic string, n int) {
	t.Helper()
	for i := range n {
		tag := "even"
		if i%2 == 1 {
			tag = "odd"
		}
		res := mustPut(t, e, topic, core.PutMessage{Body: []byte(fmt.Sprint(i)), Tags: tag,
			Properties: map[string]string{"i": fmt.Sprint(i)}})[0]
		m, err := e.Message(topic, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.SysProps == nil {
			m.SysProps = map[string]string{}
		}
		m.SysProps[core.PropLastReason] = fmt.Sprintf("boom %d", i%3)
		if err := e.SendMessageBack(t.Context(), group, m, -1, 16); err != nil {
			t.Fatal(err)
		}
	}
}

// waitJob polls a job until it is no longer RUNNING.
func waitJob(t testing.TB, e *Engine, id string, total time.Duration) core.Job {
	t.Helper()
	deadline := time.Now().Add(total)
	for {
		j, err := e.GetJob(id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != core.JobRunning {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still RUNNING after %v: %+v", id, total, j)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestJobRedriveByFilter(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	deadLetterReasons(t, e, "g", "t", 30)
	f := core.MessageFilter{Tags: "odd", SQL: "i >= 10", Reason: "boom 1"}
	n, err := e.CountMatching(core.JobDLQRedrive, "g", f)
	if err != nil {
		t.Fatal(err)
	}
	// odd i in 10..29 with i%3 == 1: 13, 19, 25.
	if n != 3 {
		t.Fatalf("dry run matched %d, want 3", n)
	}
	j, err := e.StartJob(core.JobDLQRedrive, "g", f, 0)
	if err != nil || j.State != core.JobRunning || j.ID == "" {
		t.Fatalf("StartJob = %+v, %v", j, err)
	}
	j = waitJob(t, e, j.ID, 5*time.Second)
	if j.State != core.JobDone || j.Matched != n || j.Moved != n || j.FinishedAt.IsZero() {
		t.Fatalf("job %+v: want DONE with matched = moved = %d", j, n)
	}
	got := readAll(t, e, core.MessageQueue{Topic: core.RetryTopic("g")})
	var is []string
	for _, m := range got {
		is = append(is, m.Properties["i"])
		if m.ReconsumeTimes != 0 || m.UserTopic() != "t" {
			t.Fatalf("redriven %+v", m)
		}
	}
	if fmt.Sprint(is) != "[13 19 25]" {
		t.Fatalf("redriven %v", is)
	}
	if d, _ := e.DLQDepth("g"); d != 27 {
		t.Fatalf("depth %d, want 27", d)
	}
	// Nothing matches any more.
	if n, _ := e.CountMatching(core.JobDLQRedrive, "g", f); n != 0 {
		t.Fatalf("dry run after the job: %d", n)
	}
}

func TestJobPurgeDLQAndTopic(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	deadLetterReasons(t, e, "g", "t", 20)
	j, err := e.StartJob(core.JobDLQPurge, "g", core.MessageFilter{Tags: "even"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, e, j.ID, 5*time.Second); j.State != core.JobDone || j.Moved != 10 {
		t.Fatalf("DLQ purge %+v", j)
	}
	left, _, _ := e.DLQMessages("g", "", 100)
	if len(left) != 10 {
		t.Fatalf("%d dead letters left", len(left))
	}
	for _, m := range left {
		if m.Tags != "odd" {
			t.Fatalf("purged the wrong ones: %q left", m.Tags)
		}
	}
	if got := readAll(t, e, core.MessageQueue{Topic: core.RetryTopic("g")}); len(got) != 0 {
		t.Fatalf("a purge redrove %d", len(got))
	}

	// Topic purge: the 20 messages of t (both queues), those with i < 5
	// are never read again; the rest are.
	j, err = e.StartJob(core.JobTopicPurge, "t", core.MessageFilter{SQL: "i < 5"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, e, j.ID, 5*time.Second); j.State != core.JobDone || j.Moved != 5 || j.Matched != 5 {
		t.Fatalf("topic purge %+v", j)
	}
	n := 0
	for q := range 2 {
		for _, m := range readAll(t, e, core.MessageQueue{Topic: "t", QueueID: q}) {
			if m.Properties["i"] < "5" && len(m.Properties["i"]) == 1 {
				t.Fatalf("purged message %s read", m.Properties["i"])
			}
			n++
		}
	}
	if n != 15 {
		t.Fatalf("read %d messages after the purge, want 15", n)
	}
	if c, _ := e.CountMatching(core.JobTopicPurge, "t", core.MessageFilter{}); c != 15 {
		t.Fatalf("dry run of purge-all: %d", c)
	}

	// Errors name the field.
	_, err = e.StartJob(core.JobDLQRedrive, "g", core.MessageFilter{SQL: "a > "}, 0)
	if ce, ok := err.(*core.Error); !ok || ce.Field != "filter.sql" || ce.Message != "at 5: expected a value, found end of expression" {
		t.Fatalf("bad sql: %#v", err)
	}
	_, err = e.StartJob(core.JobDLQRedrive, "g", core.MessageFilter{Tags: "a ||"}, 0)
	wantCode(t, err, core.EInvalid)
	_, err = e.StartJob(core.JobTopicPurge, "nope", core.MessageFilter{}, 0)
	wantCode(t, err, core.ENotFound)
	_, err = e.GetJob("nope")
	wantCode(t, err, core.ENotFound)
	now := time.Now()
	_, err = e.CountMatching(core.JobDLQPurge, "g", core.MessageFilter{From: now, To: now})
	wantCode(t, err, core.EInvalid)
	// A time window: everything was dead-lettered before now.
	if c, _ := e.CountMatching(core.JobDLQPurge, "g", core.MessageFilter{From: now.Add(-time.Hour), To: now.Add(time.Second)}); c != 10 {
		t.Fatalf("window matched %d", c)
	}
	if c, _ := e.CountMatching(core.JobDLQPurge, "g", core.MessageFilter{From: now.Add(time.Second)}); c != 0 {
		t.Fatalf("future window matched %d", c)
	}
}

// A rate-limited job stopped by Close resumes at the next Open and moves
// each message exactly once.
func TestJobResumesAfterClose(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 1)
	deadLetterReasons(t, e, "g", "t", 300)
	j, err := e.StartJob(core.JobDLQRedrive, "g", core.MessageFilter{}, 500) // chunks of 50, ~0.5 s in all
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		cur, _ := e.GetJob(j.ID)
		if cur.Moved > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("job moved nothing")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, Options{Dir: dir})
	mid, _ := e.GetJob(j.ID)
	t.Logf("at reopen: %d moved", mid.Moved)
	j = waitJob(t, e, j.ID, 10*time.Second)
	if j.State != core.JobDone || j.Moved != 300 || j.Matched != 300 {
		t.Fatalf("resumed job %+v", j)
	}
	got := readAll(t, e, core.MessageQueue{Topic: core.RetryTopic("g")})
	seen := map[string]bool{}
	for _, m := range got {
		if seen[m.UserID()] {
			t.Fatalf("%s redriven twice", m.UserID())
		}
		seen[m.UserID()] = true
	}
	if len(seen) != 300 {
		t.Fatalf("%d redriven, want 300", len(seen))
	}
}
