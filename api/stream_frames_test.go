package api

import (
	"bytes"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// TestStreamFrameEncoding pins the hand-appended stream frames to
// encoding/json's encoding of the frame types (the types the AsyncAPI
// document is generated from), byte for byte.
func TestStreamFrameEncoding(t *testing.T) {
	at := time.Date(2026, 11, 30, 16, 20, 0, 123456789, time.UTC)
	var got []core.Received
	for i, s := range answerStrings {
		m := &core.Message{ID: s, Topic: "orders", QueueID: i, QueueOffset: int64(i) << 40, Body: []byte(s + "body"), BodyIsText: i%3 > 0,
			Tags: s, Keys: []string{s, "k"}, Properties: map[string]string{s: s, "z": "1"}, ShardingKey: s, BornAt: at, StoredAt: at}
		got = append(got, core.Received{Message: m, ReceiptHandle: s, InvisibleUntil: at.Add(time.Duration(i) * time.Hour)})
	}
	frame := func(b []byte) []byte { return append(b, '\n') } // the encoder's newline
	if b, want := frame(appendMessagesFrame(nil, got)), stdlibAnswer(t, MessagesFrame{Type: FrameMessages, Messages: newReceiveResponse(got).Messages}); !bytes.Equal(b, want) {
		t.Errorf("messages frame:\n got %s\nwant %s", b, want)
	}
	hr := []core.HandleResult{{ReceiptHandle: "h1", Status: core.HandleOK}, {ReceiptHandle: "h\"2", Status: core.HandleExpired, InvisibleUntil: at}}
	if b, want := frame(appendResultsFrame(nil, "a\u20281", hr)), stdlibAnswer(t, ResultsFrame{Type: FrameResults, ID: "a\u20281", Results: newHandleResults(hr).Results}); !bytes.Equal(b, want) {
		t.Errorf("results frame:\n got %s\nwant %s", b, want)
	}
	prs := []core.PutResult{{MessageID: "m1", Topic: "orders", QueueID: 3, QueueOffset: 42}, {MessageID: "m2", Topic: "orders", DeliverAt: at, Replayed: true}}
	var want ConfirmFrame
	want.Type, want.ID = FrameConfirm, "p1"
	for _, pr := range prs {
		want.Results = append(want.Results, newPublishResult(pr))
	}
	if b, w := frame(appendConfirmFrame(nil, "p1", prs)), stdlibAnswer(t, want); !bytes.Equal(b, w) {
		t.Errorf("confirm frame:\n got %s\nwant %s", b, w)
	}
	msgs, by := 50, int64(1<<20)
	if b, w := frame(appendFlowAnswer(nil, "f1", msgs, by)), stdlibAnswer(t, FlowFrame{Type: FrameFlow, ID: "f1", MaxOutstandingMessages: &msgs, MaxOutstandingBytes: &by}); !bytes.Equal(b, w) {
		t.Errorf("flow answer:\n got %s\nwant %s", b, w)
	}
}

// TestStreamFrameDecoding: the fast paths decode exactly what the strict
// decoder does, and what the strict decoder refuses is refused.
func TestStreamFrameDecoding(t *testing.T) {
	for _, in := range []string{
		`{"type":"ack","id":"a1","receiptHandles":["x","y"]}`,
		` {"receiptHandles":["x"] , "id":"a1","type":"ack"} `,
		`{"type":"publish","id":"p1","message":{"body":"hello","keys":["k"],"deduplicationId":"d"}}`,
	} {
		var fast, strict clientFrame
		if !fastAckFrame([]byte(in), &fast) && !fastPublishFrame([]byte(in), &fast) {
			t.Fatalf("%s: not on a fast path", in)
		}
		if err := decodeBytes([]byte(in), &strict, false); err != nil {
			t.Fatalf("%s: strict: %v", in, err)
		}
		if fast.Type != strict.Type || fast.ID != strict.ID || len(fast.ReceiptHandles) != len(strict.ReceiptHandles) ||
			(fast.Message == nil) != (strict.Message == nil) || fast.Message != nil && *fast.Message.Body != *strict.Message.Body {
			t.Fatalf("%s: fast %+v, strict %+v", in, fast, strict)
		}
	}
	for _, in := range []string{
		`{`, `[]`, `{"type":"ack"}`, `{"type":"ack","id":"","receiptHandles":["x"]}`,
		`{"type":"ack","id":"a","receiptHandles":["x"],"x":1}`, `{"type":"ack","id":"a","id":"b","receiptHandles":["x"]}`,
		`{"type":"ack","id":"a","receiptHandles":["x"],"invisibleSeconds":3}`, `{"type":"flow","id":"f","message":{"body":"x"}}`,
		`{"type":"ack","id":"a","receiptHandles":null}`, `{"id":"a","receiptHandles":["x"]}`,
		"{\"type\":\"ack\",\"id\":\"a\\u0001\",\"receiptHandles\":[\"x\"]}",
	} {
		var f clientFrame
		if err := decodeFrame([]byte(in), &f); err == nil {
			t.Errorf("%s: decoded as %+v, want an error", in, f)
		}
	}
	var f clientFrame
	if err := decodeFrame([]byte(`{"type":"nack","id":"n7","receiptHandles":["x"],"bogus":true}`), &f); err == nil || f.ID != "n7" {
		t.Errorf("a bad frame's id is kept for its error frame: %v, %q", err, f.ID)
	}
}
