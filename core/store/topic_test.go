package store

import (
	"slices"
	"testing"
)

// A topic record written before layouts existed decodes with none, and a
// record with layouts round-trips.
func TestTopicRecordLayoutsDecode(t *testing.T) {
	old := append([]byte{topicRecordVersion},
		`{"uid":7,"name":"t","queues":4,"retentionHours":72,"createdAt":"2026-01-02T15:04:05Z"}`...)
	r, err := decodeTopicRecord(old)
	if err != nil {
		t.Fatal(err)
	}
	if r.UID != 7 || r.Queues != 4 || r.Layouts != nil || r.Topic().Layouts != nil {
		t.Fatalf("old record decoded as %+v", r)
	}
	r.Layouts = []TopicLayout{{Queues: 2, Fence: []int64{5, 0}}, {Queues: 4, Fence: []int64{9, 3, 1, 0}}}
	back, err := decodeTopicRecord(r.encode())
	if err != nil {
		t.Fatal(err)
	}
	tp := back.Topic()
	if len(tp.Layouts) != 2 || tp.Layouts[1].Queues != 4 || !slices.Equal(tp.Layouts[1].Fence, []int64{9, 3, 1, 0}) {
		t.Fatalf("layouts round-tripped as %+v", tp.Layouts)
	}
	tp.Layouts[0].Fence[0] = 99 // the domain copy does not alias the record
	if back.Layouts[0].Fence[0] != 5 {
		t.Fatal("Topic() aliases the record's fences")
	}
}
