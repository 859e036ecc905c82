package jetstream_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// What the backend does not offer answers the seam's typed error
// (core.Unsupported): 503 problem+json of type unsupported, naming the
// capability and the backend (docs/jetstream.md lists them), without the
// Retry-After of a passing outage, the same through every route.
func TestUnsupportedAnswers503(t *testing.T) {
	e := newEnv(t)
	e.topic("uns", 1)
	e.group("uns-g", groupCfg("uns", map[string]any{"consumeMode": "ORDERLY"}))
	for _, tc := range []struct {
		method, path string
		body         any
		capability   string
	}{
		{"POST", "/v1/groups/uns-g/pause", nil, "pausing groups"},
		{"POST", "/v1/groups/uns-g/dlq/purge", map[string]any{"filter": map[string]any{"tags": "*"}, "dryRun": true}, "redrive and purge by filter"},
		{"GET", "/v1/jobs/06h2lg7v1kf9hhtg0rkbf6cn4o", nil, "redrive and purge by filter"},
	} {
		var rd io.Reader
		if tc.body != nil {
			b, _ := json.Marshal(tc.body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(tc.method, e.lb.URL+tc.path, rd)
		if tc.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Type   string `json:"type"`
			Detail string `json:"detail"`
		}
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		want := tc.capability + " is not available on the jetstream backend"
		if resp.StatusCode != 503 || err != nil || p.Detail != want || p.Type != "urn:mqgate:problem:unsupported" ||
			resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Retry-After") != "" {
			t.Errorf("%s %s: %d %q Retry-After %q %+v (%v), want 503 unsupported %q", tc.method, tc.path, resp.StatusCode,
				resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After"), p, err, want)
		}
	}
}

// A redrive by message id records REDRIVEN in the shared timeline: the
// API reaches RedriveIDs and RecordEvents through the seam on JetStream as
// on embedded.
func TestRedriveRecordsRedriven(t *testing.T) {
	e := newEnv(t)
	e.topic("rdv", 1)
	e.group("rdv-g", groupCfg("rdv", nil))
	id := e.publish(e.lb.URL, "rdv", map[string]any{"body": "x"})
	got := e.receive(e.lb.URL, "rdv-g", 1, 5, 30)
	if len(got) != 1 || got[0].MessageID != id {
		t.Fatalf("receive: %+v", got)
	}
	e.settle(e.lb.URL, "rdv-g", "nack", []string{got[0].ReceiptHandle}, map[string]any{"delayLevel": -1, "reason": "poison"})
	var rd struct {
		Redriven int `json:"redriven"`
	}
	for end := time.Now().Add(10 * time.Second); rd.Redriven == 0; {
		mustDo(t, "POST", e.gws[0].URL()+"/v1/groups/rdv-g/dlq/redrive", map[string]any{"messageIds": []string{id}}, &rd, 200)
		if rd.Redriven == 0 && time.Now().After(end) {
			t.Fatal("the dead letter was never redriven")
		}
	}
	for end := time.Now().Add(10 * time.Second); ; { // events are recorded without waiting
		var tl struct {
			Events []timelineEvent `json:"events"`
		}
		mustDo(t, "GET", e.gws[1].URL()+"/v1/groups/rdv-g/messages/"+id+"/timeline", nil, &tl, 200)
		var steps []string
		for _, ev := range tl.Events {
			steps = append(steps, ev.Type)
		}
		if s := strings.Join(steps, " "); strings.HasSuffix(s, "DEAD_LETTERED REDRIVEN") {
			break
		} else if time.Now().After(end) {
			t.Fatalf("timeline %s, want it to end DEAD_LETTERED REDRIVEN", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
