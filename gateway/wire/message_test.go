package wire

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

func TestNewMessageJSON(t *testing.T) {
	born := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.FixedZone("x", 3600))
	stored := born.Add(3 * time.Millisecond)
	tests := []struct {
		name string
		m    core.Message
		want string
	}{
		{
			name: "text",
			m: core.Message{ID: "A1", Topic: "orders", QueueID: 3, QueueOffset: 42, Body: []byte("a <b> & c"),
				BodyIsText: true, Tags: "created", Keys: []string{"k1"}, Properties: map[string]string{"p": "v"},
				ShardingKey: "s", BornAt: born, StoredAt: stored},
			want: `{"messageId":"A1","topic":"orders","queueId":3,"queueOffset":42,"body":"a \u003cb\u003e \u0026 c","tags":"created","keys":["k1"],"properties":{"p":"v"},"shardingKey":"s","bornAt":"2026-01-02T14:04:05.123Z","storedAt":"2026-01-02T14:04:05.126Z","reconsumeTimes":0}`,
		},
		{
			name: "bytes",
			m:    core.Message{ID: "A2", Topic: "orders", Body: []byte{0, 1, 2, 0xff}, BornAt: born, StoredAt: stored},
			want: `{"messageId":"A2","topic":"orders","queueId":0,"queueOffset":0,"bodyBase64":"AAEC/w==","bornAt":"2026-01-02T14:04:05.123Z","storedAt":"2026-01-02T14:04:05.126Z","reconsumeTimes":0}`,
		},
		{
			name: "text that is not UTF-8 is shown as bytes",
			m:    core.Message{ID: "A3", Topic: "orders", Body: []byte{0xff}, BodyIsText: true, BornAt: born, StoredAt: stored},
			want: `{"messageId":"A3","topic":"orders","queueId":0,"queueOffset":0,"bodyBase64":"/w==","bornAt":"2026-01-02T14:04:05.123Z","storedAt":"2026-01-02T14:04:05.126Z","reconsumeTimes":0}`,
		},
		{
			name: "retry copy shows the original id and topic",
			m: core.Message{ID: "R1", Topic: core.RetryTopic("g"), QueueID: 0, QueueOffset: 7, Body: []byte("x"), BodyIsText: true,
				ReconsumeTimes: 2, BornAt: born, StoredAt: stored,
				SysProps: map[string]string{core.PropOriginMessageID: "A1", core.PropRetryTopic: "orders"}},
			want: `{"messageId":"A1","topic":"orders","queueId":0,"queueOffset":7,"body":"x","bornAt":"2026-01-02T14:04:05.123Z","storedAt":"2026-01-02T14:04:05.126Z","reconsumeTimes":2}`,
		},
		{
			name: "pending on the schedule topic: real topic, no position, deliverAt",
			m: core.Message{ID: "D1", Topic: core.ScheduleTopic, QueueID: 2, QueueOffset: 5, Body: []byte("x"), BodyIsText: true,
				BornAt: born, StoredAt: stored,
				SysProps: map[string]string{core.PropRealTopic: "orders", core.PropRealQueueID: "1",
					core.PropDeliverAt: "1767366305123"}},
			want: `{"messageId":"D1","topic":"orders","body":"x","bornAt":"2026-01-02T14:04:05.123Z","storedAt":"2026-01-02T14:04:05.126Z","reconsumeTimes":0,"deliverAt":"2026-01-02T15:05:05.123Z"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(NewMessage(&tc.m))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestFormatTimeZero(t *testing.T) {
	if got := FormatTime(time.Time{}); got != "" {
		t.Errorf("FormatTime(zero) = %q, want \"\"", got)
	}
}

// TestFormatTimeMatchesLayout checks the hand-written formatter against
// time.Format over random instants, zones and the layout's edges.
func TestFormatTimeMatchesLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	zones := []*time.Location{time.UTC, time.FixedZone("x", -7*3600-30*60), time.FixedZone("y", 13*3600)}
	check := func(tm time.Time) {
		if got, want := FormatTime(tm), tm.UTC().Format(TimeLayout); got != want {
			t.Fatalf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
	}
	for i := 0; i < 20000; i++ {
		check(time.Unix(rng.Int64N(253402300799), rng.Int64N(1e9)).In(zones[i%len(zones)]))
	}
	check(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))
	check(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
	check(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) // falls back to time.Format
	if FormatTime(time.Time{}) != "" {
		t.Fatal("zero time must format as empty")
	}
}
