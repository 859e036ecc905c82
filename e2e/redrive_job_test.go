package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// jobView is a redrive or purge job as GET /v1/jobs/{id} shows it.
type jobView struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	State      string `json:"state"`
	Matched    int64  `json:"matched"`
	Moved      int64  `json:"moved"`
	Error      string `json:"error"`
	StartedAt  string `json:"startedAt"`
	FinishedAt string `json:"finishedAt"`
}

func getJob(t *testing.T, s *server, id string) jobView {
	t.Helper()
	r := s.do(t, "GET", "/v1/jobs/"+id, nil)
	want(t, r, http.StatusOK)
	var j jobView
	r.JSON(t, &j)
	return j
}

// startJob posts a filter body and expects 202 with a RUNNING job.
func startJob(t *testing.T, s *server, path string, body map[string]any) jobView {
	t.Helper()
	r := s.do(t, "POST", path, body)
	want(t, r, http.StatusAccepted)
	var j jobView
	r.JSON(t, &j)
	if j.ID == "" || j.State != "RUNNING" || j.StartedAt == "" || r.Header.Get("Location") != "/v1/jobs/"+j.ID {
		t.Fatalf("job answer %s (Location %q)", r.Body, r.Header.Get("Location"))
	}
	return j
}

// dryRun posts a dry run and returns matched.
func dryRun(t *testing.T, s *server, path string, filter map[string]any) int64 {
	t.Helper()
	r := s.do(t, "POST", path, map[string]any{"filter": filter, "dryRun": true})
	want(t, r, http.StatusOK)
	var out struct {
		Matched *int64 `json:"matched"`
	}
	r.JSON(t, &out)
	if out.Matched == nil {
		t.Fatalf("dry run answer %s: no matched", r.Body)
	}
	return *out.Matched
}

// deadLetterAll receives every message of group and nacks it to the DLQ
// with reason until want are dead.
func deadLetterAll(s *server, group string, want int, reason string) error {
	deadline := time.Now().Add(90 * time.Second)
	n := 0
	for n < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: dead-lettered %d of %d", group, n, want)
		}
		msgs, err := tryReceive(s, group, map[string]any{"maxMessages": 32, "waitSeconds": 1})
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			continue
		}
		hs := make([]string, len(msgs))
		for i, m := range msgs {
			hs[i] = m.ReceiptHandle
		}
		st, err := answer(s, group, "nack", map[string]any{"receiptHandles": hs, "delayLevel": -1, "reason": reason})
		if err != nil {
			return err
		}
		for _, x := range st {
			if x == "ok" {
				n++
			}
		}
	}
	return nil
}

func retryMax(t *testing.T, s *server, group string) int64 {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group+"/offsets", nil)
	want(t, r, http.StatusOK)
	var out struct {
		Offsets []offsetRow `json:"offsets"`
	}
	r.JSON(t, &out)
	for _, o := range out.Offsets {
		if o.Topic == "%RETRY%"+group {
			return o.MaxOffset
		}
	}
	return 0
}

// TestRedriveJobRateAndKill9: 2,000 dead letters in each of two groups.
// Dry runs count what filters select; a redrive job at 1,000/s takes
// about two seconds; another, killed with -9 half-way, resumes at the
// next start and moves every dead letter exactly once (the retry queue
// grows by exactly 2,000, and the job's counts equal the dry run's).
func TestRedriveJobRateAndKill9(t *testing.T) {
	const n = 2000
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "orders", 4)
	for _, g := range []string{"timed", "killed"} {
		r := s.do(t, "PUT", "/v1/groups/"+g, map[string]any{
			"subscriptions": []map[string]any{{"topic": "orders"}}, "maxReconsumeTimes": 0,
		})
		if r.Status == http.StatusServiceUnavailable {
			t.Skip("this binary has no gateway wired")
		}
		want(t, r, http.StatusCreated)
	}
	for i := 0; i < n; i += 1000 {
		var msgs []map[string]any
		for j := i; j < i+1000; j++ {
			tag := "even"
			if j%2 == 1 {
				tag = "odd"
			}
			msgs = append(msgs, map[string]any{"body": fmt.Sprint(j), "tags": tag, "properties": map[string]string{"n": fmt.Sprint(j)}})
		}
		want(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": msgs}), http.StatusCreated)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, g := range []string{"timed", "killed"} {
		wg.Go(func() { errs <- deadLetterAll(s, g, n, "payment service answered 503") })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		for _, g := range []string{"timed", "killed"} {
			if _, d := groupDepths(t, s, g); d != n {
				return fmt.Errorf("%s: dlqDepth %d", g, d)
			}
		}
		return nil
	})

	// Dry runs.
	redrive := "/v1/groups/timed/dlq/redrive"
	for _, c := range []struct {
		filter map[string]any
		want   int64
	}{
		{map[string]any{}, n},
		{map[string]any{"sql": "n < 500"}, 500},
		{map[string]any{"tags": "odd", "sql": "n BETWEEN 100 AND 199"}, 50},
		{map[string]any{"reason": "503"}, n},
		{map[string]any{"reason": "timeout"}, 0},
		{map[string]any{"to": "2000-01-01T00:00:00Z"}, 0},
	} {
		if got := dryRun(t, s, redrive, c.filter); got != c.want {
			t.Errorf("dry run %v: matched %d, want %d", c.filter, got, c.want)
		}
	}
	p := wantProblem(t, s.do(t, "POST", redrive, map[string]any{"filter": map[string]any{"sql": "n >"}, "dryRun": true}),
		http.StatusBadRequest, "filter.sql")
	if p.Errors[0].Message != "at 4: expected a value, found end of expression" {
		t.Errorf("bad sql: %+v", p.Errors)
	}
	wantProblem(t, s.do(t, "POST", redrive, map[string]any{"messageIds": []string{"x"}, "dryRun": true}), http.StatusBadRequest, "messageIds")
	wantProblem(t, s.do(t, "POST", redrive, map[string]any{"ratePerSecond": -1}), http.StatusBadRequest, "ratePerSecond")
	wantProblem(t, s.do(t, "GET", "/v1/jobs/nope", nil), http.StatusNotFound)

	// The rate: 2,000 at 1,000/s is about 2 s (the first tenth of a second
	// goes at once).
	start := time.Now()
	j := startJob(t, s, redrive, map[string]any{"ratePerSecond": 1000})
	checkFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if j = getJob(t, s, j.ID); j.State == "RUNNING" {
			return fmt.Errorf("job %+v", j)
		}
		return nil
	})
	took := time.Since(start)
	t.Logf("redrive of %d at 1000/s took %v (rate says ~1.9 s)", n, took)
	if j.State != "DONE" || j.Moved != n || j.Matched != n || j.FinishedAt == "" {
		t.Fatalf("job %+v", j)
	}
	if took < 1500*time.Millisecond {
		t.Fatalf("2,000 at 1,000/s took %v", took)
	}
	if _, d := groupDepths(t, s, "timed"); d != 0 {
		t.Fatalf("timed: dlqDepth %d after the redrive", d)
	}

	// kill -9 half-way through a job; it resumes at the next start.
	killed := "/v1/groups/killed/dlq/redrive"
	dry := dryRun(t, s, killed, map[string]any{"reason": "503"})
	before := retryMax(t, s, "killed")
	j = startJob(t, s, killed, map[string]any{"filter": map[string]any{"reason": "503"}, "ratePerSecond": 1000})
	checkFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if j = getJob(t, s, j.ID); j.Moved < 500 {
			return fmt.Errorf("job %+v", j)
		}
		return nil
	})
	s.kill()
	t.Logf("killed with %d of %d moved", j.Moved, n)
	s = startServer(t, dir)
	checkFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if j = getJob(t, s, j.ID); j.State == "RUNNING" {
			return fmt.Errorf("job %+v", j)
		}
		return nil
	})
	if j.State != "DONE" || j.Moved != dry || j.Matched != dry || dry != n {
		t.Fatalf("resumed job %+v, dry run %d", j, dry)
	}
	if got := retryMax(t, s, "killed") - before; got != n {
		t.Fatalf("the retry queue grew by %d, want exactly %d", got, n)
	}
	if _, d := groupDepths(t, s, "killed"); d != 0 {
		t.Fatalf("killed: dlqDepth %d after the redrive", d)
	}
}

// TestPurgeJobs: purge by filter from a DLQ and from a topic.
func TestPurgeJobs(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 2)
	r := s.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}}, "maxReconsumeTimes": 0,
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	var msgs []map[string]any
	for j := range 20 {
		msgs = append(msgs, map[string]any{"body": fmt.Sprint(j), "properties": map[string]string{"n": fmt.Sprint(j)}})
	}
	want(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": msgs}), http.StatusCreated)
	if err := deadLetterAll(s, "g", 20, "bad input"); err != nil {
		t.Fatal(err)
	}
	purge := "/v1/groups/g/dlq/purge"
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if got := dryRun(t, s, purge, map[string]any{"sql": "n >= 15"}); got != 5 {
			return fmt.Errorf("dry run matched %d", got)
		}
		return nil
	})
	j := startJob(t, s, purge, map[string]any{"filter": map[string]any{"sql": "n >= 15"}})
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if j = getJob(t, s, j.ID); j.State == "RUNNING" {
			return fmt.Errorf("job %+v", j)
		}
		return nil
	})
	if j.State != "DONE" || j.Moved != 5 || j.Kind != "DLQ_PURGE" {
		t.Fatalf("purge job %+v", j)
	}
	if _, d := groupDepths(t, s, "g"); d != 15 {
		t.Fatalf("dlqDepth %d after purging 5 of 20", d)
	}

	// Topic purge: a group reading from the start afterwards never sees
	// the purged messages (20 published twice: n >= 10 purged, 20 left).
	want(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": msgs}), http.StatusCreated)
	tp := "/v1/topics/orders/purge"
	if got := dryRun(t, s, tp, map[string]any{"sql": "n >= 10"}); got != 20 {
		t.Fatalf("topic dry run matched %d, want 20", got)
	}
	j = startJob(t, s, tp, map[string]any{"filter": map[string]any{"sql": "n >= 10"}, "ratePerSecond": 100})
	checkFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if j = getJob(t, s, j.ID); j.State == "RUNNING" {
			return fmt.Errorf("job %+v", j)
		}
		return nil
	})
	if j.State != "DONE" || j.Moved != 20 || j.Kind != "TOPIC_PURGE" {
		t.Fatalf("topic purge job %+v", j)
	}
	if got := dryRun(t, s, tp, map[string]any{"sql": "n >= 10"}); got != 0 {
		t.Fatalf("topic dry run after the purge matched %d", got)
	}
	want(t, s.do(t, "PUT", "/v1/groups/fresh", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
	}), http.StatusCreated)
	var got []string
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, m := range receive(t, s, "fresh", map[string]any{"maxMessages": 32, "waitSeconds": 1}) {
			got = append(got, m.Body)
			ack(t, s, "fresh", m.ReceiptHandle)
		}
		if len(got) < 20 {
			return fmt.Errorf("received %d", len(got))
		}
		return nil
	})
	for _, b := range got {
		if len(b) != 1 {
			t.Fatalf("purged message %q delivered (got %v)", b, got)
		}
	}
	if extra := receive(t, s, "fresh", map[string]any{"maxMessages": 32, "waitSeconds": 1}); len(extra) != 0 {
		t.Fatalf("after the 20 kept: %d more", len(extra))
	}
	wantProblem(t, s.do(t, "POST", "/v1/topics/nope/purge", map[string]any{"dryRun": true}), http.StatusNotFound)
}
