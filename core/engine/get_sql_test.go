package engine

import (
	"fmt"
	"testing"

	"github.com/mqgate/mqgate/core"
)

// A SQL92 filter is applied in the engine: only matching messages leave
// GetMessages, and a read of non-matching ones skips them (NO_MATCHED_MSG).
func TestGetMessagesSQLFilter(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	mq := core.MessageQueue{Topic: "t"}
	for i := range 10 {
		p := map[string]string{"a": fmt.Sprint(i)}
		if i%2 == 0 {
			p["region"] = "eu"
		}
		mustPut(t, e, "t", core.PutMessage{Body: []byte(fmt.Sprint(i)), Tags: "x", Properties: p})
	}
	f, err := core.ParseSubscriptionFilter("SQL92", "a > 5 AND region IN ('eu','us') AND TAGS = 'x'")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.GetMessages(mq, 0, 10, f)
	if err != nil || r.Status != core.Found || r.NextOffset != 10 {
		t.Fatalf("%+v %v", r, err)
	}
	var got []string
	for _, m := range r.Messages {
		got = append(got, string(m.Body))
	}
	if fmt.Sprint(got) != "[6 8]" {
		t.Fatalf("matched %v, want [6 8]", got)
	}
	none, _ := core.ParseSubscriptionFilter("SQL92", "missing IS NOT NULL")
	r, _ = e.GetMessages(mq, 0, 10, none)
	if r.Status != core.NoMatchedMsg || r.NextOffset != 10 {
		t.Fatalf("no match: %+v", r)
	}
	if _, err := core.ParseSubscriptionFilter("SQL92", "a > 5 AND b = "); err == nil || err.Error() == "" {
		t.Fatal("bad expression accepted")
	}
}
