package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestAnswerEncodingMatchesStdlib pins writeJSON's encoder to
// encoding/json's output, byte for byte, on the answers that matter: a
// full receive answer whose bodies, keys and properties hold HTML
// characters, line separators, control bytes, invalid UTF-8 and astral
// characters, plus empty slices, nil maps and optional fields.
func TestAnswerEncodingMatchesStdlib(t *testing.T) {
	weird := "a<b>&c\u2028\u2029 \x00\x1f \xff\xfe é 😀 \"quoted\" \\ / \t\n"
	body := strings.Repeat("abcdefghij", 102)
	var recv ReceiveResponse
	for i := 0; i < 8; i++ {
		q, o := i, int64(1000+i)
		b := body
		recv.Messages = append(recv.Messages, ReceivedMessage{
			Message: Message{MessageID: "0123456789abcdefghijklmnop", Topic: "orders", QueueID: &q, QueueOffset: &o,
				Body: &b, BornAt: "2026-11-30T16:20:00.123Z", StoredAt: "2026-11-30T16:20:00.124Z", ReconsumeTimes: i},
			ReceiptHandle: "AZemsOuwrq34JQIAAZCmv9bGGwFnAAF0ZBtQzDHbp7GA_jNe6UIrYg", InvisibleUntil: "2026-11-30T16:21:00.000Z",
		})
	}
	recv.Messages[0].Body = &weird
	recv.Messages[1].Properties = map[string]string{"z": "1", "a": "<x>", "m": weird, weird: "key"}
	recv.Messages[2].Keys = []string{}
	recv.Messages[3].Keys = []string{"k1", weird}
	recv.Messages[4].Body, recv.Messages[4].BodyBase64 = nil, &body
	recv.Messages[5].QueueID, recv.Messages[5].QueueOffset = nil, nil
	recv.Messages[6].Tags, recv.Messages[6].ShardingKey, recv.Messages[6].DeliverAt = weird, weird, "2026-11-30T16:25:00.000Z"
	empty := ReceiveResponse{Messages: []ReceivedMessage{}, Empty: &EmptyReceive{Reason: "KEYS_BLOCKED", BlockedKeys: []string{weird}}}
	results := HandleResults{Results: []HandleResult{{ReceiptHandle: weird, Status: "ok"}, {ReceiptHandle: "", Status: "invalid"}}}

	for i, v := range []any{recv, empty, ReceiveResponse{}, results, newProblem("invalid", weird), map[string]any{"n": 1.5, "s": weird}} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(v); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		writeJSON(rec, 200, v)
		if got := rec.Body.Bytes(); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("answer %d differs from encoding/json:\n got %q\nwant %q", i, got, want.Bytes())
		}
		if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(want.Len()) {
			t.Errorf("answer %d: Content-Length %q, want %d", i, cl, want.Len())
		}
	}
}
