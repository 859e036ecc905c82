package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/gateway/wire"
)

// TestMessageMatchesWire pins the receive answer's Message to the webhook
// body's (API.md: the same Message JSON): the structs share their fields by
// conversion, and this catches a JSON tag that drifts on one side.
func TestMessageMatchesWire(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	msgs := []core.Message{
		{ID: "A1", Topic: "orders", QueueID: 1, QueueOffset: 9, Body: []byte("hi"), BodyIsText: true, Tags: "t",
			Keys: []string{"k"}, Properties: map[string]string{"p": "v"}, ShardingKey: "s", BornAt: at, StoredAt: at},
		{ID: "A2", Topic: core.RetryTopic("g"), Body: []byte{0xff}, ReconsumeTimes: 3, BornAt: at, StoredAt: at,
			SysProps: map[string]string{core.PropOriginMessageID: "A0", core.PropRetryTopic: "orders"}},
		{ID: "A3", Topic: core.ScheduleTopic, Body: []byte("x"), BodyIsText: true, BornAt: at, StoredAt: at,
			SysProps: map[string]string{core.PropRealTopic: "orders", core.PropRealQueueID: "0", core.PropDeliverAt: "1767366305000"}},
	}
	for i := range msgs {
		got, err := json.Marshal(newMessage(&msgs[i]))
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(wire.NewMessage(&msgs[i]))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("message %d:\napi  %s\nwire %s", i, got, want)
		}
	}
}
