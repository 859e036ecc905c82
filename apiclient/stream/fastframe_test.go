package stream

import (
	"bytes"
	stdjson "encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/mqgate/mqgate/apiclient"
)

// Frames as the server writes them (api/stream_encode.go), and a few it
// does not, which the fast path must leave to the general decoder.
var frameSeeds = []string{
	`{"type":"messages","messages":[{"messageId":"0A1B2C3D4E5F60718293A4B5","topic":"orders","queueId":3,"queueOffset":17,"body":"order 17 created","tags":"created","keys":["order-17","k2"],"properties":{"a":"1","b":"two"},"shardingKey":"cust-9","bornAt":"2026-01-02T15:04:05.000Z","storedAt":"2026-01-02T15:04:05.123Z","reconsumeTimes":2,"deliverAt":"2026-01-02T15:05:05.000Z","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"v=1","receiptHandle":"h.abc_DEF-1","invisibleUntil":"2026-01-02T15:05:35.000Z"},{"messageId":"m2","topic":"t","queueId":0,"queueOffset":0,"bodyBase64":"AAEC/w==","bornAt":"2026-01-02T15:04:05.000Z","storedAt":"2026-01-02T15:04:05.000Z","reconsumeTimes":0,"receiptHandle":"h2","invisibleUntil":"2026-01-02T15:04:35.000Z"}]}`,
	`{"type":"messages","messages":[{"messageId":"m3","topic":"t","body":"héllo ✓","bornAt":"2026-02-28T23:59:59.999Z","storedAt":"2026-02-28T23:59:59.999Z","reconsumeTimes":0,"receiptHandle":"h3","invisibleUntil":"2026-03-01T00:00:29.999Z"}]}`,
	`{"type":"results","id":"1a","results":[{"receiptHandle":"h1","status":"ok"},{"receiptHandle":"h2","status":"expired"},{"receiptHandle":"h3","status":"ok","invisibleUntil":"2026-01-02T15:05:05.000Z"}]}`,
	`{"type":"results","id":"2","results":[]}`,
	`{"type":"confirm","id":"3","results":[{"messageId":"0A1B","topic":"orders","queueId":1,"queueOffset":42,"replayed":false},{"messageId":"0A1C","topic":"orders","queueId":1,"queueOffset":43,"replayed":true,"deliverAt":"2026-01-02T15:05:05.000Z"}]}`,
	`{"type":"confirm","id":"4","results":[]}`,
	`{"results":[{"receiptHandle":"h1","status":"ok"}],"id":"5","type":"results"}`,
	` { "type" : "results" , "id" : "6" , "results" : [ { "receiptHandle" : "h" , "status" : "ok" } ] } `,
	// Outside the subset: the general decoder's.
	`{"type":"results","id":"7","results":[{"receiptHandle":"h\u0031","status":"ok"}]}`,
	`{"type":"error","id":"8","problem":{"type":"urn:mqgate:problem:invalid","title":"Invalid request","status":400}}`,
	`{"type":"empty","empty":{"reason":"PAUSED"}}`,
	`{"type":"flow","id":"9","maxOutstandingMessages":5,"maxOutstandingBytes":1048576}`,
	`{"type":"messages","messages":[{"messageId":"m","topic":"t","queueId":1.5}]}`,
	`{"type":"messages","messages":[{"messageId":"m","bornAt":"2026-02-30T00:00:00.000Z"}]}`,
	`{"type":"messages","messages":[{"messageId":"m","properties":{"a":"1"},"properties":{"b":"2"}}]}`,
	`{"type":"confirm","id":"10","results":[{"receiptHandle":"h","status":"ok"}]}`,
	`{"type":"results","id":"11","results":[{"messageId":"m","topic":"t"}]}`,
	`{"type":"results","id":"12","results":[{}]}`,
	`{"type":"messages","messages":[],"id":"x"}`,
	`{"type":"messages","messages":[{"messageId":null}]}`,
	`{"type":"results","id":"13"}`,
	// The same topic twice, then another (scanner.topicStr).
	`{"type":"messages","messages":[{"messageId":"a1","topic":"a","queueId":1,"receiptHandle":"h1","invisibleUntil":"2026-01-02T15:05:35.000Z"},{"messageId":"a2","topic":"a","queueId":2,"receiptHandle":"h2","invisibleUntil":"2026-01-02T15:05:35.000Z"},{"messageId":"b1","topic":"b","queueOffset":7,"receiptHandle":"h3","invisibleUntil":"2026-01-02T15:05:35.000Z"}]}`,
}

// BenchmarkFastFrameMessages: a messages frame of 16 deliveries of 1 KiB
// text, as a consume stream sends them.
func BenchmarkFastFrameMessages(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"messages","messages":[`)
	body := bytes.Repeat([]byte("abcdefghijklmnop"), 64)
	for i := range 16 {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"messageId":"0A1B2C3D4E5F60718293A4B5","topic":"mqbench-streams-x","queueId":3,"queueOffset":`)
		buf.WriteString(strconv.Itoa(1000 + i))
		buf.WriteString(`,"body":"`)
		buf.Write(body)
		buf.WriteString(`","bornAt":"2026-01-02T15:04:05.000Z","storedAt":"2026-01-02T15:04:05.123Z","reconsumeTimes":0,"receiptHandle":"AQGV6ZTA3ZuE9gGHBBDbAYqAjZ2wM2IGZ3JvdXAABm9yZGVycwGkZ2VuZXJhdGVkLW1hYw","invisibleUntil":"2026-01-02T15:05:35.000Z"}`)
	}
	buf.WriteString(`]}`)
	frameBytes := buf.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(frameBytes)))
	for b.Loop() {
		var f frame
		if !fastFrame(frameBytes, &f) || len(f.Messages) != 16 {
			b.Fatal("not decoded")
		}
	}
}

// FuzzFastFrames: whatever the fast path decodes, the general decoder
// decodes to the same frame and the same results.
func FuzzFastFrames(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastFrame(t, b)
	})
}

func checkFastFrame(t *testing.T, b []byte) bool {
	t.Helper()
	var fast frame
	if !fastFrame(b, &fast) {
		return false
	}
	var slow frame
	if err := json.Unmarshal(b, &slow); err != nil {
		t.Fatalf("%s: the fast path decoded what the general decoder refuses (%v)", b, err)
	}
	if fast.Type != slow.Type || fast.ID != slow.ID || !reflect.DeepEqual(fast.Messages, slow.Messages) {
		t.Fatalf("%s:\nfast %+v\nslow %+v", b, fast, slow)
	}
	switch fast.Type {
	case "results":
		var rs []apiclient.HandleResult
		if err := json.Unmarshal(slow.Results, &rs); err != nil || !reflect.DeepEqual(fast.handles, rs) || !fast.fastResults {
			t.Fatalf("%s: results fast %+v, slow %+v (%v)", b, fast.handles, rs, err)
		}
	case "confirm":
		var rs []apiclient.PublishResult
		if err := json.Unmarshal(slow.Results, &rs); err != nil || !reflect.DeepEqual(fast.confirms, rs) || !fast.fastResults {
			t.Fatalf("%s: confirms fast %+v, slow %+v (%v)", b, fast.confirms, rs, err)
		}
	}
	return true
}

// TestFastFramesTakeTheServersFrames: the frames the server writes are
// all on the fast path (a fuzz seed run alone would pass if none were).
func TestFastFramesTakeTheServersFrames(t *testing.T) {
	for i, s := range frameSeeds[:8] {
		if !checkFastFrame(t, []byte(s)) {
			t.Errorf("seed %d left to the general decoder: %s", i, s)
		}
	}
	for _, s := range frameSeeds[8:] {
		checkFastFrame(t, []byte(s))
	}
}

// TestFastEncode: publish and settlement frames come out byte for byte
// as encoding/json writes them, plain and awkward strings alike; what
// the fast encoder does not cover goes to the general one.
func TestFastEncode(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	weird := []string{"", "plain", "<b>&amp;</b>", "quote\" back\\slash", "tab\tnl\nctl\x01", "\u2028\u2029", "bad utf8 \xff\xfe", "héllo ✓ 日本"}
	var reqs []apiclient.PublishRequest
	for _, w := range weird {
		bb := []byte(w)
		keys := []string{w, "k"}
		props := map[string]string{w: w, "z": "1", "a": w}
		reqs = append(reqs,
			apiclient.PublishRequest{Body: str(w)},
			apiclient.PublishRequest{BodyBase64: &bb, Keys: &keys, Properties: &props, Tags: str(w), ShardingKey: str(w),
				DeduplicationId: str(w), DelayLevel: num(3), DelaySeconds: num(-1), Traceparent: str(w), Tracestate: str(w)})
	}
	var nilBytes []byte
	var nilKeys []string
	var nilProps map[string]string
	reqs = append(reqs, apiclient.PublishRequest{BodyBase64: &nilBytes, Keys: &nilKeys, Properties: &nilProps},
		apiclient.PublishRequest{Body: str("x"), DeliverAt: &time.Time{}}) // the general encoder's
	var parsed apiclient.PublishRequest
	if err := stdjson.Unmarshal([]byte(`{"body":"from raw JSON","extra":1}`), &parsed); err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs, parsed)
	for i := range reqs {
		for _, f := range []publishFrame{{Type: "publish", ID: "1z", Message: &reqs[i]}, {Type: "publish", ID: "2", Messages: reqs[i : i+1]}} {
			got, err := encodePublishFrame(&f)
			want, werr := stdjson.Marshal(f)
			if err != nil || werr != nil || !bytes.Equal(got, want) {
				t.Fatalf("publish frame:\ngot  %s (%v)\nwant %s (%v)", got, err, want, werr)
			}
		}
	}
	batch := publishFrame{Type: "publish", ID: "b", Messages: reqs[:4]}
	if got, _ := encodePublishFrame(&batch); !bytes.Equal(got, mustStd(t, batch)) {
		t.Fatalf("batch: %s", got)
	}
	for _, w := range weird {
		for _, f := range []settleFrame{
			{Type: "ack", ID: "1", ReceiptHandles: []string{"h1", w}},
			{Type: "nack", ID: w, ReceiptHandles: []string{w}, DelayLevel: num(-1), Reason: w},
			{Type: "extend", ID: "3", ReceiptHandles: []string{}, InvisibleSeconds: 60},
			{Type: "ack", ID: "4"},
		} {
			if got, want := encodeSettleFrame(&f), mustStd(t, f); !bytes.Equal(got, want) {
				t.Fatalf("settle frame:\ngot  %s\nwant %s", got, want)
			}
		}
	}
}

func mustStd(t *testing.T, v any) []byte {
	t.Helper()
	b, err := stdjson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendStringEveryPosition puts each byte the encoder escapes (and a
// few it does not) at every place of the eight-byte words plainPrefix
// reads, and holds appendString to encoding/json.
func TestAppendStringEveryPosition(t *testing.T) {
	for _, c := range []string{"\x00", "\x1f", "\"", "\\", "<", ">", "&", " ", "~", "\x7f", "é", "\u2028", "\xff", "!", "=", "?", "%", "'"} {
		for at := range 25 {
			s := strings.Repeat("a", at) + c + strings.Repeat("b", 24-at)
			if got, want := appendString(nil, s), mustStd(t, s); !bytes.Equal(got, want) {
				t.Fatalf("%q: got %s, want %s", s, got, want)
			}
		}
	}
}
