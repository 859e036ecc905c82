package jetstream_test

import (
	"strings"
	"testing"
	"time"
)

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
