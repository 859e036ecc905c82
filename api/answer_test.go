package api

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// stdlibAnswer is v as encoding/json's Encoder writes it: the reference
// for the answers appended by hand (answer.go).
func stdlibAnswer(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var answerStrings = []string{"", "orders", "0A1B2C3D4E5F60718293A4B5", "AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYg",
	"a<b>&c\u2028\u2029 \x00\x1f \xff\xfe é 😀 \"quoted\" \\ / \t\n\r\b\f\x7f", "\xed\xa0\x80", "\xf0\x9f\x98", "é\xc3", "<", "\u2029x"}

// TestHandAnswersMatchStdlib pins the hand-appended answers to
// encoding/json's encoding of the documented types, byte for byte.
func TestHandAnswersMatchStdlib(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	randomString := func() string {
		if r.IntN(2) == 0 {
			return pick(r, answerStrings)
		}
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return string(b)
	}
	for _, s := range answerStrings {
		if got, want := appendJSONString(nil, s), stdlibAnswer(t, s); !bytes.Equal(append(got, '\n'), want) {
			t.Errorf("string %q: got %s, want %s", s, got, want)
		}
	}
	at := time.Date(2026, 11, 30, 16, 20, 0, 123456789, time.FixedZone("x", 3600))
	for range 5000 {
		s := randomString()
		if got, want := appendJSONString(nil, s), stdlibAnswer(t, s); !bytes.Equal(append(got, '\n'), want) {
			t.Fatalf("string %q: got %s, want %s", s, got, want)
		}
		var prs []core.PutResult
		for range r.IntN(4) {
			pr := core.PutResult{MessageID: randomString(), Topic: randomString(), QueueID: r.IntN(300), QueueOffset: r.Int64() >> r.IntN(64),
				Replayed: r.IntN(2) == 0}
			if r.IntN(3) == 0 {
				pr.DeliverAt = at.Add(time.Duration(r.Int64N(1e15)))
			}
			prs = append(prs, pr)
			if got, want := appendPublishResult(nil, &pr), stdlibAnswer(t, newPublishResult(pr)); !bytes.Equal(got, want) {
				t.Fatalf("%+v: got %s, want %s", pr, got, want)
			}
		}
		out := PublishBatchResult{Results: make([]PublishResult, 0, len(prs))}
		for _, pr := range prs {
			out.Results = append(out.Results, newPublishResult(pr))
		}
		if got, want := appendPublishBatchResult(nil, prs), stdlibAnswer(t, out); !bytes.Equal(got, want) {
			t.Fatalf("%+v: got %s, want %s", prs, got, want)
		}
		var hrs []core.HandleResult
		for range r.IntN(4) {
			hr := core.HandleResult{ReceiptHandle: randomString(), Status: core.HandleStatus(pick(r, []string{"ok", "expired", "invalid", randomString()}))}
			if r.IntN(2) == 0 {
				hr.InvisibleUntil = at.Add(time.Duration(r.Int64N(1e15)))
			}
			hrs = append(hrs, hr)
		}
		if got, want := appendHandleResults(nil, hrs), stdlibAnswer(t, newHandleResults(hrs)); !bytes.Equal(got, want) {
			t.Fatalf("%+v: got %s, want %s", hrs, got, want)
		}
	}
}

// FuzzAppendJSONString holds appendJSONString to encoding/json on any
// string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range answerStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), stdlibAnswer(t, s); !bytes.Equal(append(got, '\n'), want) {
			t.Fatalf("string %q: got %s, want %s", s, got, want)
		}
	})
}

// TestReceivedMatchesStdlib: a receive answer appended by hand is
// encoding/json's encoding of newReceiveResponse.
func TestReceivedMatchesStdlib(t *testing.T) {
	at := time.Date(2026, 11, 30, 16, 20, 0, 123456789, time.UTC)
	var got []core.Received
	for i, s := range answerStrings {
		m := &core.Message{ID: s, Topic: "orders", QueueID: i, QueueOffset: int64(i) << 40, Body: []byte(s + "body"), BodyIsText: i%3 > 0,
			Tags: s, Keys: []string{s, "k"}, Properties: map[string]string{s: s, "z": "1", "a": s}, ShardingKey: s, BornAt: at, StoredAt: at}
		got = append(got, core.Received{Message: m, ReceiptHandle: s, InvisibleUntil: at.Add(time.Duration(i) * time.Hour)})
		if b, want := appendReceived(nil, got), stdlibAnswer(t, newReceiveResponse(got)); !bytes.Equal(b, want) {
			t.Fatalf("%d messages:\n got %s\nwant %s", len(got), b, want)
		}
	}
}
