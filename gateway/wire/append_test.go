package wire

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mqgate/mqgate/core"
)

var weirdStrings = []string{"", "orders", "a<b>&c\u2028\u2029 \x00\x1f \xff\xfe é 😀 \"q\" \\ / \t\n\r\b\f\x7f",
	"\xed\xa0\x80", "\xf0\x9f\x98", "é\xc3", "abcdefghijklmnopqrstuvwxyz0123456789", "abcdefg<", "abcdefgh\x01ijklmnop"}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendMessageFields holds AppendMessageFields (closed) to
// encoding/json's encoding of NewMessage on random stored messages.
func TestAppendMessageFields(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	str := func() string {
		if r.IntN(2) == 0 {
			return weirdStrings[r.IntN(len(weirdStrings))]
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.UintN(256))
			if r.IntN(2) == 0 {
				b[i] = 'a' + byte(r.IntN(26))
			}
		}
		return string(b)
	}
	born := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.FixedZone("x", 3600))
	for range 5000 {
		m := &core.Message{ID: str(), Topic: str(), QueueID: r.IntN(256), QueueOffset: r.Int64() >> r.IntN(64), Body: []byte(str()),
			BodyIsText: r.IntN(3) > 0, Tags: str(), ShardingKey: str(), ReconsumeTimes: r.IntN(20),
			BornAt: born.Add(time.Duration(r.Int64N(1e15))), StoredAt: born.Add(time.Duration(r.Int64N(1e15)))}
		if r.IntN(3) == 0 {
			m.BornAt = time.Time{}
		}
		if r.IntN(2) == 0 {
			for range r.IntN(4) {
				m.Keys = append(m.Keys, str())
			}
		}
		if r.IntN(2) == 0 {
			m.Properties = map[string]string{}
			for range r.IntN(24) {
				m.Properties[str()] = str()
			}
		}
		if r.IntN(2) == 0 {
			m.SysProps = map[string]string{}
			for _, p := range []string{core.PropOriginMessageID, core.PropRetryTopic, core.PropRealTopic, core.PropDeliverAt} {
				if r.IntN(2) == 0 {
					m.SysProps[p] = str()
				}
			}
			if r.IntN(2) == 0 {
				m.SysProps[core.PropDeliverAt] = strconv.FormatInt(r.Int64N(4e12)-1e12, 10)
			}
			if r.IntN(2) == 0 {
				m.Topic = core.ScheduleTopic
			}
		}
		got := append(AppendMessageFields(nil, m), '}')
		if want := marshal(t, NewMessage(m)); !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n got %s\nwant %s", m, got, want)
		}
	}
}

// FuzzAppendString holds AppendString to encoding/json on any string,
// given as a string and as bytes.
func FuzzAppendString(f *testing.F) {
	for _, s := range weirdStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := marshal(t, s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		if got := AppendBytes(nil, []byte(s)); !bytes.Equal(got, want) {
			t.Fatalf("%q as bytes: got %s, want %s", s, got, want)
		}
		if _, valid := appendEscaped(nil, []byte(s)); valid != utf8.ValidString(s) {
			t.Fatalf("%q: valid %v, utf8.ValidString %v", s, valid, !valid)
		}
	})
}

// BenchmarkAppendMessageFields encodes a delivery as the consume stream
// and receive do: a 1 KiB text body, the benchmarks' shape.
func BenchmarkAppendMessageFields(b *testing.B) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 64)
	m := &core.Message{ID: "01JD7W3KX2V9Q8R4T6Y1Z0A5BC", Topic: "bench", QueueID: 3, QueueOffset: 123456,
		Body: body, BodyIsText: true, BornAt: time.Now(), StoredAt: time.Now()}
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendMessageFields(buf[:0], m)
	}
}
