package groups

import (
	"testing"

	"github.com/mqgate/mqgate/core"
)

// FuzzOffsetKey: decoding never panics, and every encoded key decodes to
// what was encoded.
func FuzzOffsetKey(f *testing.F) {
	f.Add("", "orders", uint32(3))
	f.Add("c1", "%RETRY%g", uint32(0))
	f.Add("x\x00y", "t", uint32(1<<31))
	f.Fuzz(func(t *testing.T, cid, topic string, qid uint32) {
		decodeOffsetKey([]byte(cid + topic)) // arbitrary bytes: must not panic
		mq := core.MessageQueue{Topic: topic, QueueID: int(qid)}
		got, gmq, ok := decodeOffsetKey(offsetKey(cid, mq))
		for i := 0; i < len(cid); i++ {
			if cid[i] == 0 {
				return // names never contain NUL; not round-trippable
			}
		}
		if !ok || got != cid || gmq.Topic != topic || uint32(gmq.QueueID) != qid {
			t.Fatalf("round trip (%q,%q,%d) → (%q,%v,%v)", cid, topic, qid, got, gmq, ok)
		}
	})
}
