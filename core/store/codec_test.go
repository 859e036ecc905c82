package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

func sampleMessage() *core.Message {
	return &core.Message{
		ID: "0abc", Topic: "orders", QueueID: 3, QueueOffset: 0,
		Body: []byte{0, 1, 2, 0xff}, BodyIsText: true, Tags: "created",
		Keys:        []string{"order-17", "c-9"},
		Properties:  map[string]string{"region": "eu", "": "empty-name-is-encodable"},
		SysProps:    map[string]string{core.PropOriginMessageID: "orig"},
		ShardingKey: "c-9", BornAt: time.UnixMilli(1700000000123).UTC(), ReconsumeTimes: 2,
	}
}

func TestMessageRoundTrip(t *testing.T) {
	m := sampleMessage()
	rec := EncodeMessage(m)
	place(rec, 5, 42, 1700000000999)
	got, err := DecodeMessage(7, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.QueueID, want.QueueOffset, want.CommitLogOffset = 5, 42, 7
	want.StoredAt = time.UnixMilli(1700000000999).UTC()
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, &want)
	}
	if ms, err := StoredAtOf(rec); err != nil || ms != 1700000000999 {
		t.Fatalf("StoredAtOf: %d %v", ms, err)
	}
	// The decoded body is a copy, not a view of the record.
	rec[len(rec)-5] ^= 0xff
	if got.Body[3] != 0xff {
		t.Fatal("decoded body aliases the record")
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	rec := EncodeMessage(sampleMessage())
	seal(rec)
	for i := range rec {
		b := bytes.Clone(rec)
		b[i] ^= 0x10
		if _, err := DecodeMessage(0, b); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipping byte %d not detected: %v", i, err)
		}
	}
	for n := range len(rec) {
		if _, err := DecodeMessage(0, rec[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncation to %d not detected", n)
		}
	}
}

func FuzzDecodeMessage(f *testing.F) {
	rec := EncodeMessage(sampleMessage())
	seal(rec)
	f.Add(rec)
	f.Add([]byte{msgMagic, msgVersion})
	f.Add(EncodeMessage(&core.Message{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(1, b)
		if err != nil {
			return
		}
		// Anything that decodes re-encodes to the same bytes.
		again := EncodeMessage(m)
		place(again, m.QueueID, m.QueueOffset, m.StoredAt.UnixMilli())
		if !bytes.Equal(again, b) {
			t.Fatalf("decode/encode not stable:\n%x\n%x", b, again)
		}
	})
}

func FuzzDecodeUnitAndMeta(f *testing.F) {
	f.Add(Unit{CommitLogOffset: 9, Size: 100, TagsCode: -5}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if u, err := decodeUnit(b); err == nil && !bytes.Equal(u.encode(), b) {
			t.Fatal("unit not stable")
		}
		if m, err := decodeQueueMeta(b); err == nil && !bytes.Equal(m.encode(), b) {
			t.Fatal("queue meta not stable")
		}
		_, _ = decodeTopicRecord(b)
	})
}

// FuzzRecordRefs: reading a record's topic, id and keys from its front
// never panics, and on every record that decodes it agrees with the full
// decode.
func FuzzRecordRefs(f *testing.F) {
	rec := EncodeMessage(sampleMessage())
	seal(rec)
	f.Add(rec)
	f.Add([]byte{msgMagic, msgVersion})
	f.Add(EncodeMessage(&core.Message{ID: "x", Keys: []string{""}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		topic, id, keys, ok := recordRefs(b, nil)
		m, err := DecodeMessage(1, b)
		if err != nil {
			return
		}
		if !ok || string(topic) != m.Topic || string(id) != m.ID || len(keys) != len(m.Keys) {
			t.Fatalf("refs %q %q %q %v, decoded %+v", topic, id, keys, ok, m)
		}
		for i, k := range keys {
			if string(k) != m.Keys[i] {
				t.Fatalf("key %d: %q, decoded %q", i, k, m.Keys[i])
			}
		}
	})
}

// TestRecordRefsSkipTheBody: the refs come from the record's front, so a
// record whose body (or checksum) is damaged still gives them up, and the
// checksum is not computed.
func TestRecordRefsSkipTheBody(t *testing.T) {
	m := sampleMessage()
	m.Body = bytes.Repeat([]byte("b"), 1<<20)
	rec := EncodeMessage(m)
	seal(rec)
	rec[len(rec)-100] ^= 0xff // in the body: the checksum now fails
	if _, err := DecodeMessage(0, rec); !errors.Is(err, ErrCorrupt) {
		t.Fatal("the damage is not detected by the full decode")
	}
	topic, id, keys, ok := recordRefs(rec, nil)
	if !ok || string(topic) != "orders" || string(id) != "0abc" || len(keys) != 2 || string(keys[1]) != "c-9" {
		t.Fatalf("refs %q %q %q %v", topic, id, keys, ok)
	}
	if n := testing.AllocsPerRun(100, func() { recordRefs(rec, keys) }); n != 0 {
		t.Fatalf("%v allocations per read", n)
	}
}

func BenchmarkRemoveRefs(b *testing.B) {
	m := sampleMessage()
	m.Body = bytes.Repeat([]byte("b"), 1024)
	rec := EncodeMessage(m)
	seal(rec)
	b.Run("refs", func(b *testing.B) {
		b.ReportAllocs()
		var buf [][]byte
		for b.Loop() {
			_, _, buf, _ = recordRefs(rec, buf)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeMessage(0, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEncodeMessageGolden pins the record bytes: the layout is on disk and
// in the log-ahead, so an encoder rewritten for speed must produce exactly
// the bytes of the one before it (these were taken from it).
func TestEncodeMessageGolden(t *testing.T) {
	const full = "c70101ffffc77cedd328000000018bcfe5687b00000000000000000000000300000002066f72646572730430616263076372656174656403632d3902086f726465722d313703632d39020017656d7074792d6e616d652d69732d656e636f6461626c6506726567696f6e02657501114f524947494e5f4d4553534147455f4944046f72696704000102ff00000000"
	const bare = "c701010000018bcfe56be70000018bcfe5687b000000000000002a0000000500000002066f72646572730430616263076372656174656403632d3900000004000102ff92d8b17a"
	m := sampleMessage()
	if got := hex.EncodeToString(EncodeMessage(m)); got != full {
		t.Fatalf("full record:\n got %s\nwant %s", got, full)
	}
	m.Keys, m.Properties, m.SysProps = nil, nil, nil
	rec := EncodeMessage(m)
	place(rec, 5, 42, 1700000000999)
	if got := hex.EncodeToString(rec); got != bare {
		t.Fatalf("bare record:\n got %s\nwant %s", got, bare)
	}
}

// TestAppendMessage: records appended one after another (a publisher's
// batch buffer) are each EncodeMessage's bytes, within EncodedSize.
func TestAppendMessage(t *testing.T) {
	msgs := []*core.Message{sampleMessage(), {ID: "x", Topic: "t", Body: []byte("b")}, sampleMessage()}
	msgs[2].Body = bytes.Repeat([]byte("z"), 3000)
	prefix := []byte("prefix")
	b := prefix
	for _, m := range msgs {
		start := len(b)
		b = AppendMessage(b, m)
		if got, want := b[start:], EncodeMessage(m); !bytes.Equal(got, want) {
			t.Fatalf("appended %x\nencoded %x", got, want)
		}
		if n := len(b) - start; n > EncodedSize(m) {
			t.Fatalf("record of %d bytes, EncodedSize %d", n, EncodedSize(m))
		}
	}
	if !bytes.Equal(b[:len(prefix)], prefix) {
		t.Fatal("AppendMessage changed the bytes before it")
	}
}
