package groups

import (
	"testing"

	"github.com/mqgate/mqgate/core"
)

func TestNormalizeSQLFilter(t *testing.T) {
	cfg := core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{
		{Topic: "t", Filter: "a || b"},
		{Topic: "u", FilterType: "sql92", Filter: "  a > 5 AND region IN ('eu','us')  "},
		{Topic: "v", FilterType: "TAG", Filter: "c"},
	}}
	n, err := Normalize(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []core.Subscription{
		{Topic: "t", Filter: "a || b"},
		{Topic: "u", FilterType: core.FilterSQL92, Filter: "a > 5 AND region IN ('eu','us')"},
		{Topic: "v", Filter: "c"}, // TAG is stored as ""
	}
	for i, s := range n.Subscriptions {
		if s != want[i] {
			t.Errorf("subscription %d = %+v, want %+v", i, s, want[i])
		}
	}
	for _, tc := range []struct {
		sub          core.Subscription
		field, error string
	}{
		{core.Subscription{Topic: "t", FilterType: "SQL92", Filter: "a > 5 AND b = "}, "subscriptions[0].filter", "at 15: expected a value, found end of expression"},
		{core.Subscription{Topic: "t", FilterType: "SQL92", Filter: "a > 'x'"}, "subscriptions[0].filter", "at 5: expected a number (only numbers are ordered)"},
		{core.Subscription{Topic: "t", FilterType: "SQL92"}, "subscriptions[0].filter", "at 1: empty expression"},
		{core.Subscription{Topic: "t", FilterType: "XPATH", Filter: "a"}, "subscriptions[0].filterType", "must be TAG or SQL92"},
	} {
		_, err := Normalize(core.GroupConfig{Name: "g", Subscriptions: []core.Subscription{tc.sub}})
		e, ok := err.(*core.Error)
		if !ok || e.Code != core.EInvalid || e.Field != tc.field || e.Message != tc.error {
			t.Errorf("%+v: got %#v, want %s: %s", tc.sub, err, tc.field, tc.error)
		}
	}
}
