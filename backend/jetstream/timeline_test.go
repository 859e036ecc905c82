package jetstream_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

type timelineEvent struct {
	Type       string `json:"type"`
	ConsumerID string `json:"consumerId"`
	Attempt    int    `json:"attempt"`
	Reason     string `json:"reason"`
	DelayLevel *int   `json:"delayLevel"`
}

// A message's timeline is shared by the instances: received on A, nacked
// with a reason on B, received again and acked, then asked of either
// instance, it shows every step in order.
func TestTimelineAcrossInstances(t *testing.T) {
	e := newEnv(t)
	e.topic("tl", 1)
	e.group("tl-g", groupCfg("tl", nil))
	a, b := e.gws[0].URL(), e.gws[1].URL()
	id := e.publish(e.lb.URL, "tl", map[string]any{"body": "x"})
	got := e.receive(a, "tl-g", 1, 5, 30)
	if len(got) != 1 || got[0].MessageID != id {
		t.Fatalf("receive: %+v", got)
	}
	e.settle(b, "tl-g", "nack", []string{got[0].ReceiptHandle}, map[string]any{"delayLevel": 5, "reason": "try later"})
	deadline := time.Now().Add(10 * time.Second)
	for got = nil; len(got) == 0 && time.Now().Before(deadline); {
		got = e.receive(b, "tl-g", 1, 1, 30)
	}
	if len(got) != 1 || got[0].ReconsumeTimes != 1 {
		t.Fatalf("retry: %+v", got)
	}
	e.settle(a, "tl-g", "ack", []string{got[0].ReceiptHandle}, nil)

	want := "PUBLISHED DELIVERED(1) NACKED(try later) RETRY_SCHEDULED DELIVERED(2) ACKED"
	var last string
	for _, base := range []string{a, b} {
		for end := time.Now().Add(10 * time.Second); ; { // events are recorded without waiting
			var tl struct {
				Events []timelineEvent `json:"events"`
			}
			mustDo(t, "GET", base+"/v1/groups/tl-g/messages/"+id+"/timeline", nil, &tl, 200)
			var steps []string
			for _, ev := range tl.Events {
				s := ev.Type
				switch {
				case ev.Type == "DELIVERED":
					s = fmt.Sprintf("%s(%d)", s, ev.Attempt)
				case ev.Reason != "":
					s += "(" + ev.Reason + ")"
				}
				steps = append(steps, s)
			}
			if last = strings.Join(steps, " "); last == want {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("timeline on %s: %s, want %s", base, last, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
