package auth

import (
	"strings"
	"testing"
	"time"
)

func TestLimitsParseAndCheck(t *testing.T) {
	file := func(limits string) []byte {
		return []byte(`{"keys":[{"name":"a","key":"` + pubKey + `","grants":["pub:*"],"limits":` + limits + `}]}`)
	}
	ks, err := Parse(file(`{"publishPerSecond": 100, "publishBytesPerSecond": 1048576, "deliveriesPerSecond": 50.5,
		"concurrentReceives": 4, "maxDelay": "500ms",
		"topics": [{"topic": "orders-*", "publishPerSecond": 10, "publishBurst": 20}],
		"groups": [{"group": "billing", "deliveriesPerSecond": 5, "concurrentReceives": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	l := ks.All()[0].Limits
	if l.PublishPerSecond != 100 || time.Duration(l.MaxDelay) != 500*time.Millisecond || l.Topics[0].PublishBurst != 20 || l.Groups[0].ConcurrentReceives != 1 {
		t.Errorf("parsed %+v", l)
	}
	if l.TopicEntry("orders-eu") != 0 || l.TopicEntry("orders") != -1 || l.GroupEntry("billing") != 0 {
		t.Error("entries do not match as patterns")
	}
	if Burst(50.5, 0) != 51 || Burst(0.2, 0) != 1 || Burst(10, 3) != 3 {
		t.Error("Burst defaults")
	}
	for _, tc := range []struct{ limits, want string }{
		{`{"publishPerSecond": -1}`, "publishPerSecond must be a positive number"},
		{`{"publishBurst": 5}`, "a burst without publishPerSecond"},
		{`{"maxDelay": "1m"}`, "maxDelay must be between 0 and 10s"},
		{`{"maxDelay": 5}`, "duration string"},
		{`{"topics": [{"topic": "a/b", "publishPerSecond": 1}]}`, "topics[0]: topic"},
		{`{"topics": [{"topic": "t", "deliveriesPerSecond": 1}]}`, `topics[0] "t": deliveriesPerSecond does not apply here`},
		{`{"topics": [{"topic": "t", "concurrentReceives": 1}]}`, "concurrentReceives does not apply to topic entries"},
		{`{"groups": [{"group": "g", "publishPerSecond": 1}]}`, `groups[0] "g": publishPerSecond does not apply here`},
		{`{"publishPerSeconds": 1}`, `unknown field "publishPerSeconds"`},
		{`{"concurrentReceives": -2}`, "concurrentReceives must be positive"},
	} {
		_, err := Parse(file(tc.limits))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `keys[0] "a": limits`) && !strings.HasPrefix(err.Error(), "key file: ") {
			t.Errorf("%s: error %v, want %q", tc.limits, err, tc.want)
		}
	}
}
