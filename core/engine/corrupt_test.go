package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// flipRecordByte rewrites the commit log record of one message in the bbolt
// file with one body byte flipped, as a bad disk would leave it: same
// length, checksum no longer matching.
func flipRecordByte(t *testing.T, st *store.Store, id string) int64 {
	t.Helper()
	var cl int64
	err := st.Update(func(tx store.Tx) error {
		var ok bool
		if cl, ok = tx.OffsetOfID(id); !ok {
			return fmt.Errorf("id %s not indexed", id)
		}
		// inside the body, before the CRC
		return tx.PatchRecord(cl, func(rec []byte) { rec[len(rec)-10] ^= 0x20 })
	})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestCorruptRecordSetAside: a record whose checksum fails at read time is
// never skipped silently. The pull path sets it aside and moves past it;
// topic stats count it, the listing shows it with its id and place, GET by
// id answers ECorrupt, and it stays counted once across reads and restarts.
func TestCorruptRecordSetAside(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, Options{Dir: dir})
	mustTopic(t, e, "t", 1)
	var msgs []core.PutMessage
	for i := range 600 { // more than the open check's 256 newest records
		msgs = append(msgs, text(fmt.Sprintf("message body number %04d", i)))
	}
	res := mustPut(t, e, "t", msgs...)
	victim := res[100]
	cl := flipRecordByte(t, e.st, victim.MessageID)

	mq := core.MessageQueue{Topic: "t", QueueID: 0}
	var got []*core.Message
	for off := int64(0); off < 600; {
		r, err := e.GetMessages(mq, off, 32, core.MatchAll)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Messages...)
		off = r.NextOffset
	}
	if len(got) != 599 {
		t.Fatalf("pulled %d messages, want 599 (all but the corrupt one)", len(got))
	}
	for _, m := range got {
		if m.ID == victim.MessageID {
			t.Fatal("the corrupt message was delivered")
		}
	}

	check := func(when string) {
		t.Helper()
		st, err := e.TopicStats("t")
		if err != nil {
			t.Fatal(err)
		}
		if st.Corrupt != 1 {
			t.Fatalf("%s: stats count %d corrupt, want 1", when, st.Corrupt)
		}
		list, err := e.CorruptMessages("t")
		if err != nil {
			t.Fatal(err)
		}
		want := core.CorruptMessage{Topic: "t", QueueID: 0, QueueOffset: victim.QueueOffset, CommitLogOffset: cl, MessageID: victim.MessageID}
		if len(list) != 1 {
			t.Fatalf("%s: listing %+v, want one entry", when, list)
		}
		l := list[0]
		if l.Topic != want.Topic || l.QueueID != want.QueueID || l.QueueOffset != want.QueueOffset ||
			l.CommitLogOffset != want.CommitLogOffset || l.MessageID != want.MessageID || l.Reason == "" || l.DetectedAt.IsZero() {
			t.Fatalf("%s: listed %+v, want %+v with a reason and a time", when, l, want)
		}
		if _, err := e.Message("t", victim.MessageID); core.ErrorCode(err) != core.ECorrupt {
			t.Fatalf("%s: GET of the corrupt message: %v, want code %s", when, err, core.ECorrupt)
		}
		counts, err := e.CorruptCounts()
		if err != nil || counts["t"] != 1 {
			t.Fatalf("%s: counts %v (%v)", when, counts, err)
		}
	}
	check("after the pull")
	if _, err := e.GetMessages(mq, 90, 32, core.MatchAll); err != nil {
		t.Fatal(err)
	}
	check("after a second read")

	// A restart keeps it counted (persisted), once.
	e.Close()
	e = openTest(t, Options{Dir: dir})
	check("after a restart")

	// Met first by GET: set aside too.
	second := res[300]
	flipRecordByte(t, e.st, second.MessageID)
	if _, err := e.Message("t", second.MessageID); core.ErrorCode(err) != core.ECorrupt {
		t.Fatalf("GET of a newly corrupt message: %v", err)
	}
	if st, _ := e.TopicStats("t"); st.Corrupt != 2 {
		t.Fatalf("stats count %d corrupt after a GET met the second, want 2", st.Corrupt)
	}

	// Met first by the open check (among the newest records): set aside at
	// open, the file is not refused.
	third := res[599]
	flipRecordByte(t, e.st, third.MessageID)
	e.Close()
	e = openTest(t, Options{Dir: dir})
	if st, _ := e.TopicStats("t"); st.Corrupt != 3 {
		t.Fatalf("stats count %d corrupt after the open check met the third, want 3", st.Corrupt)
	}
	if _, err := e.Message("t", third.MessageID); core.ErrorCode(err) != core.ECorrupt {
		t.Fatalf("GET of the third: %v", err)
	}
}

// flipLastRecord flips a body byte of the newest commit log record.
func flipLastRecord(t *testing.T, st *store.Store) int64 {
	t.Helper()
	var cl int64
	err := st.Update(func(tx store.Tx) error {
		cl, _ = tx.LastCommitLogOffset()
		return tx.PatchRecord(cl, func(rec []byte) { rec[len(rec)-6] ^= 0x20 })
	})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// The DLQ listing and a delayed message's move do not skip a corrupt
// record silently either: each is set aside under its system topic.
func TestCorruptRecordSetAsideInDLQAndSchedule(t *testing.T) {
	e := openTest(t, Options{DelayLevels: shortLevels})
	mustTopic(t, e, "t", 1)

	deadLetter(t, e, "g", "t", 3)
	cl := flipLastRecord(t, e.st) // the third dead letter's copy
	page, _, err := e.DLQMessages("g", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 {
		t.Fatalf("DLQ listing shows %d, want the 2 readable ones", len(page))
	}
	list, err := e.CorruptMessages(core.DLQTopic("g"))
	if err != nil || len(list) != 1 || list[0].CommitLogOffset != cl || list[0].QueueOffset != 2 {
		t.Fatalf("DLQ corrupt listing %+v (%v), want the third entry (commit log offset %d)", list, err, cl)
	}

	// Level 10 is 1 s: the flip lands well before the move reads it.
	res := mustPut(t, e, "t", core.PutMessage{Body: []byte("delayed body"), DelayLevel: 10})
	cl = flipLastRecord(t, e.st)
	checkFor(t, 10*time.Second, func() error {
		list, err := e.CorruptMessages(core.ScheduleTopic)
		if err != nil {
			return err
		}
		if len(list) != 1 || list[0].CommitLogOffset != cl || list[0].MessageID != res[0].MessageID {
			return fmt.Errorf("schedule corrupt listing %+v, want the delayed message at %d", list, cl)
		}
		return nil
	})
	if counts, err := e.CorruptCounts(); err != nil || counts[core.ScheduleTopic] != 1 || counts[core.DLQTopic("g")] != 1 || counts["t"] != 0 {
		t.Fatalf("counts %v (%v)", counts, err)
	}
}
