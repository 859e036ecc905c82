package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"
)

type job struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	State   string `json:"state"`
	Matched int64  `json:"matched"`
	Moved   int64  `json:"moved"`
	Error   string `json:"error"`
}

// dryRun posts a dry run of a filter job to path and returns matched.
func (c *client) dryRun(path string, filter map[string]any) int64 {
	c.t.Helper()
	var r struct {
		Matched *int64 `json:"matched"`
	}
	c.must("POST", c.tg.a+path, map[string]any{"filter": filter, "dryRun": true}, &r, 200)
	if r.Matched == nil {
		c.t.Fatalf("dry run %s %v: no matched", path, filter)
	}
	return *r.Matched
}

// runJob starts a filter job through instance a and follows it through
// instance b until it ends; it must end DONE having moved want.
func (c *client) runJob(path string, filter map[string]any, want int64) {
	c.t.Helper()
	body, _ := json.Marshal(map[string]any{"filter": filter, "ratePerSecond": 1000})
	resp, err := http.Post(c.tg.a+path, "application/json", bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	var j job
	err = json.NewDecoder(resp.Body).Decode(&j)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 202 || j.ID == "" || j.State != "RUNNING" || resp.Header.Get("Location") != "/v1/jobs/"+j.ID {
		c.t.Fatalf("POST %s: %d %+v Location %q, want 202 RUNNING", path, resp.StatusCode, j, resp.Header.Get("Location"))
	}
	eventually(c.t, "job "+j.ID+" ended", func() bool {
		c.must("GET", c.tg.b+"/v1/jobs/"+j.ID, nil, &j, 200)
		return j.State != "RUNNING"
	})
	if j.State != "DONE" || j.Matched != want || j.Moved != want {
		c.t.Fatalf("job %+v, want DONE with %d matched and moved", j, want)
	}
}

// ruleFilterJobs (API.md "Redrive and purge by filter"): dry runs count
// what a filter (tags, SQL, reason, time) selects in the DLQ and in a
// topic; a redrive job sends back exactly the selected dead letters with
// reconsumeTimes 0, a DLQ purge drops exactly its selection, a topic
// purge keeps its selection from every group; a job started through one
// instance is followed through the other; bad filters are 400 naming the
// field and an unknown job is 404.
func ruleFilterJobs(t *testing.T, c *client) {
	c.setup(nil)
	// Six dead letters: tags a a a b b b, property n 0..5, reason odd/even.
	for i := 0; i < 6; i++ {
		tag := "a"
		if i >= 3 {
			tag = "b"
		}
		c.publish(map[string]any{"body": strconv.Itoa(i), "tags": tag, "properties": map[string]string{"n": strconv.Itoa(i)}})
	}
	for got := 0; got < 6; {
		for _, m := range c.receive(c.tg.lb, 6, 5, 30) {
			n, _ := strconv.Atoi(m.Body)
			reason := []string{"even", "odd"}[n%2]
			c.wantStatus(c.settle(c.tg.lb, "nack", m.ReceiptHandle, map[string]any{"delayLevel": -1, "reason": "r-" + reason}), "ok")
			got++
		}
	}
	dlq := "/v1/groups/" + c.p + "/dlq/"
	eventually(t, "6 dead letters", func() bool { return len(c.dlqIDs()) == 6 })
	for _, tc := range []struct {
		filter map[string]any
		want   int64
	}{
		{map[string]any{}, 6},
		{map[string]any{"tags": "a"}, 3},
		{map[string]any{"tags": "a || b", "sql": "n > 3"}, 2},
		{map[string]any{"reason": "odd"}, 3},
		{map[string]any{"reason": "none such"}, 0},
		{map[string]any{"to": "2000-01-01T00:00:00Z"}, 0},
	} {
		if got := c.dryRun(dlq+"redrive", tc.filter); got != tc.want {
			t.Errorf("dry run %v: matched %d, want %d", tc.filter, got, tc.want)
		}
	}
	for _, bad := range []map[string]any{{"sql": "n >"}, {"tags": "a ||"}} {
		if st := c.do("POST", c.tg.a+dlq+"redrive", map[string]any{"filter": bad, "dryRun": true}, nil); st != 400 {
			t.Errorf("dry run %v: %d, want 400", bad, st)
		}
	}
	c.must("GET", c.tg.b+"/v1/jobs/nosuchjob", nil, nil, 404)

	// Redrive the a's: they come back, once each, as new.
	c.runJob(dlq+"redrive", map[string]any{"tags": "a"}, 3)
	// Through the load balancer, and so through either instance: on
	// JetStream a message a waiting pull brought after its receive
	// answered waits in that instance's stash, so one receive through
	// the other instance may come back empty.
	var back []string
	for deadline := time.Now().Add(30 * time.Second); len(back) < 3; {
		got := c.receive(c.tg.lb, 3, 5, 30)
		if len(got) == 0 && time.Now().After(deadline) {
			t.Fatalf("redriven: %v, want 3 a's", back)
		}
		for _, m := range got {
			if m.Tags != "a" || m.ReconsumeTimes != 0 {
				t.Fatalf("redriven %+v, want tag a with reconsumeTimes 0", m)
			}
			back = append(back, m.Body)
			c.wantStatus(c.settle(c.tg.lb, "ack", m.ReceiptHandle, nil), "ok")
		}
	}
	if slices.Sort(back); !slices.Equal(back, []string{"0", "1", "2"}) {
		t.Fatalf("redriven %v, want 0 1 2", back)
	}
	// Purge the odd b's (3, 5): the even one (4) stays.
	c.runJob(dlq+"purge", map[string]any{"reason": "odd"}, 2)
	if left := c.dlqIDs(); len(left) != 1 || left[0][len(left[0])-6:] != "r-even" {
		t.Fatalf("DLQ after the purge: %v, want one with r-even", left)
	}

	// A topic purge: of x y x y, the x's are never delivered to a group
	// (one that starts after it: what a consumer has already pulled is not
	// recalled, API.md).
	for i := 0; i < 4; i++ {
		c.publish(map[string]any{"body": fmt.Sprint("t", i), "tags": []string{"x", "y"}[i%2]})
	}
	topic := "/v1/topics/" + c.p + "/purge"
	if got := c.dryRun(topic, map[string]any{"tags": "x"}); got != 2 {
		t.Errorf("topic dry run: matched %d, want 2", got)
	}
	c.runJob(topic, map[string]any{"tags": "x"}, 2)
	late := c.p + "-late"
	c.must("PUT", c.tg.lb+"/v1/groups/"+late, map[string]any{"subscriptions": []map[string]any{{"topic": c.p, "filter": "x || y"}},
		"consumeFrom": map[string]any{"position": "FIRST_OFFSET"}}, nil, 201)
	var rest []string
	for {
		var r struct {
			Messages []message `json:"messages"`
		}
		c.must("POST", c.tg.lb+"/v1/groups/"+late+"/receive", map[string]any{"maxMessages": 4, "waitSeconds": 1}, &r, 200)
		if len(r.Messages) == 0 {
			break
		}
		var hs []string
		for _, m := range r.Messages {
			rest = append(rest, m.Body)
			hs = append(hs, m.ReceiptHandle)
		}
		c.must("POST", c.tg.lb+"/v1/groups/"+late+"/ack", map[string]any{"receiptHandles": hs}, nil, 200)
	}
	if slices.Sort(rest); !slices.Equal(rest, []string{"t1", "t3"}) {
		t.Fatalf("received after the topic purge: %v, want t1 t3", rest)
	}
}
