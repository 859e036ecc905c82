package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
	"github.com/mqgate/mqgate/core/store"
)

// TestRecreatedTopicGetsNothingOfItsPredecessor: delayed (level) and timer
// messages pending for a topic that is deleted and re-created under the
// same name are dropped when due; the new topic gets only its own.
func TestRecreatedTopicGetsNothingOfItsPredecessor(t *testing.T) {
	e := openTest(t, Options{DelayLevels: shortLevels[:3]})
	mustTopic(t, e, "t", 2)
	mustPut(t, e, "t", core.PutMessage{Body: []byte("old-level"), DelayLevel: 2},
		core.PutMessage{Body: []byte("old-timer"), DeliverAt: time.Now().Add(250 * time.Millisecond)})
	mustPut(t, e, "t", core.PutMessage{Body: []byte("old-timer-2"), DeliverAt: time.Now().Add(200 * time.Millisecond)})
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 2)
	mine := mustPut(t, e, "t", core.PutMessage{Body: []byte("new-level"), DelayLevel: 3},
		core.PutMessage{Body: []byte("new-timer"), DeliverAt: time.Now().Add(300 * time.Millisecond)})
	checkFor(t, 5*time.Second, func() error {
		if c := e.Counters(); c.Dropped != 3 || c.Delivered != 2 {
			return fmt.Errorf("counters %+v, want 3 dropped and 2 delivered", c)
		}
		return nil
	})
	var got []string
	for q := range 2 {
		for _, m := range readAll(t, e, core.MessageQueue{Topic: "t", QueueID: q}) {
			got = append(got, string(m.Body))
			if m.ID != mine[0].MessageID && m.ID != mine[1].MessageID {
				t.Errorf("re-created topic received %q (%s) of its predecessor", m.Body, m.ID)
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("re-created topic holds %q, want its own two messages", got)
	}
	if n, err := e.pendingTimers(); err != nil || n != 0 {
		t.Fatalf("timer index holds %d entries (%v)", n, err)
	}
}

// TestRecreatedGroupGetsNoRetryOfItsPredecessor: a retry pending for a
// group that is deleted (its %RETRY% topic removed, as DeleteGroup does)
// and created again is dropped when due; the new group's own retry lands.
func TestRecreatedGroupGetsNoRetryOfItsPredecessor(t *testing.T) {
	e := openTest(t, Options{DelayLevels: shortLevels[:3]})
	mustTopic(t, e, "orders", 1)
	mustPut(t, e, "orders", text("a"), text("b"))
	msgs := readAll(t, e, core.MessageQueue{Topic: "orders"})
	if err := e.SendMessageBack(t.Context(), "g", msgs[0], 3, 16); err != nil {
		t.Fatal(err)
	}
	before, err := e.Topic(core.RetryTopic("g"))
	if err != nil || before.UID == 0 {
		t.Fatalf("send-back did not create %%RETRY%%g: %+v %v", before, err)
	}
	for _, n := range []string{core.RetryTopic("g"), core.DLQTopic("g")} {
		if err := e.DeleteSystemTopic(n); err != nil {
			t.Fatal(err)
		}
	}
	// The new group's own send-back: a new %RETRY%g incarnation.
	if err := e.SendMessageBack(t.Context(), "g", msgs[1], 1, 16); err != nil {
		t.Fatal(err)
	}
	after, err := e.Topic(core.RetryTopic("g"))
	if err != nil || after.UID <= before.UID {
		t.Fatalf("%%RETRY%%g incarnation %d after re-creation, was %d (%v)", after.UID, before.UID, err)
	}
	checkFor(t, 5*time.Second, func() error {
		if c := e.Counters(); c.Dropped != 1 || c.Delivered != 1 {
			return fmt.Errorf("counters %+v, want 1 dropped and 1 delivered", c)
		}
		return nil
	})
	got := readAll(t, e, core.MessageQueue{Topic: core.RetryTopic("g")})
	if len(got) != 1 || got[0].UserID() != msgs[1].ID || len(got[0].SysProps[core.PropRealTopicUID]) != 0 {
		t.Fatalf("new group's retry topic holds %+v, want only the retry of %s", got, msgs[1].ID)
	}
}

// TestSendBackOfDeletedGroupWritesNothing: a settle hook answering
// core.ErrGroupGone makes the send-back a successful no-op, on both the
// retry and the dead-letter path; nothing is put anywhere.
func TestSendBackOfDeletedGroupWritesNothing(t *testing.T) {
	e := openTest(t, Options{DelayLevels: shortLevels[:3]})
	mustTopic(t, e, "orders", 1)
	mustPut(t, e, "orders", text("a"))
	m := readAll(t, e, core.MessageQueue{Topic: "orders"})[0]
	gone := func(store.Tx) error { return fmt.Errorf("group g: %w", core.ErrGroupGone) }
	if err := e.SendMessageBackSettled(t.Context(), "g", m, 1, 16, gone); err != nil {
		t.Fatalf("retry path: %v", err)
	}
	if err := e.SendMessageBackSettled(t.Context(), "g", m, -1, 16, gone); err != nil {
		t.Fatalf("dead-letter path: %v", err)
	}
	if _, err := e.Topic(core.DLQTopic("g")); err != nil {
		t.Fatal(err)
	}
	if st, err := e.TopicStats(core.DLQTopic("g")); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("%%DLQ%%g was created: %+v %v", st, err)
	}
	if st, err := e.TopicStats(core.ScheduleTopic); err == nil && st.Messages != 0 {
		t.Fatalf("schedule topic holds %d messages", st.Messages)
	}
	if c := e.Counters(); c.Retried != 0 || c.DeadLettered != 0 || e.sched.discarded.Load() != 2 {
		t.Fatalf("counters %+v, discarded %d", c, e.sched.discarded.Load())
	}
}

// waitTrashEmpty waits until the background pass emptied the trash and the
// commit log holds records records.
func waitTrashEmpty(t testing.TB, e *Engine, records int) {
	t.Helper()
	checkFor(t, 10*time.Second, func() error {
		pending, err := e.trashPending()
		if err != nil {
			return err
		}
		if n := recordCount(t, e); pending || n != records {
			return fmt.Errorf("trash pending %v, commit log holds %d records, want %d", pending, n, records)
		}
		return nil
	})
}

// TestDeleteTopicEmptiesInTheBackgroundAndResumes: DeleteTopic answers
// before the messages are removed (a snapshot right after it still has
// them in the trash: the state a kill -9 at that instant leaves), the
// background pass removes them, and an engine opened on the snapshot
// finishes the job by itself.
func TestDeleteTopicEmptiesInTheBackgroundAndResumes(t *testing.T) {
	e := openTest(t, Options{SegmentBytes: 1}) // a segment per group commit
	mustTopic(t, e, "big", 4)
	mustTopic(t, e, "keep", 1)
	batch := make([]core.PutMessage, 1000)
	for i := range batch {
		batch[i] = core.PutMessage{Body: []byte("x"), Keys: []string{fmt.Sprint("k", i%7)}}
	}
	const batches = 12
	for range batches {
		mustPut(t, e, "big", batch...)
	}
	mustPut(t, e, "keep", text("stay"))
	// What a kill -9 right after DeleteTopic's commit leaves: the topic
	// moved to the trash, nothing freed yet (made on a copy, since the
	// background pass may be quicker than any snapshot).
	dir := snapshot(t, e)
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(tx store.Tx) error { _, _, err := tx.RemoveTopic("big"); return err }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := e.DeleteTopic("big"); err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "big", 2) // a new incarnation, usable at once
	mine := mustPut(t, e, "big", text("new"))[0]
	waitTrashEmpty(t, e, 2)
	if m, err := e.Message("big", mine.MessageID); err != nil || string(m.Body) != "new" {
		t.Fatalf("the new incarnation's message: %v %+v", err, m)
	}
	crashed := openTest(t, Options{Dir: dir, SegmentBytes: 1})
	waitTrashEmpty(t, crashed, 1)
	if ms, err := crashed.MessagesByKey("keep", "k1", 10); err != nil || len(ms) != 0 {
		t.Fatalf("key look-up after the resumed delete: %v %v", ms, err)
	}
}

// TestLookupsDoNotShowThePredecessor: while a deleted topic's messages
// wait in the trash (and its delayed ones on the schedule queue), a topic
// re-created with the same name finds none of them by id or key.
func TestLookupsDoNotShowThePredecessor(t *testing.T) {
	e := openTest(t, Options{DelayLevels: []time.Duration{time.Hour}})
	mustTopic(t, e, "t", 1)
	filler := make([]core.PutMessage, 1000)
	for i := range filler {
		filler[i] = text("filler")
	}
	for range 10 {
		mustPut(t, e, "t", filler...)
	}
	// Last in the queue, so last to leave the trash (emptied from the head).
	old := mustPut(t, e, "t", core.PutMessage{Body: []byte("old"), Keys: []string{"k"}},
		core.PutMessage{Body: []byte("old-delayed"), Keys: []string{"k"}, DelayLevel: 1})
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 1)
	mine := mustPut(t, e, "t", core.PutMessage{Body: []byte("new"), Keys: []string{"k"}})[0]
	for _, r := range old {
		if m, err := e.Message("t", r.MessageID); core.ErrorCode(err) != core.ENotFound {
			t.Fatalf("old message %s found under the re-created topic: %+v %v", r.MessageID, m, err)
		}
	}
	byKey, err := e.MessagesByKey("t", "k", 10)
	if err != nil || len(byKey) != 1 || byKey[0].ID != mine.MessageID {
		t.Fatalf("by key: %v, %d messages, want only %s", err, len(byKey), mine.MessageID)
	}
	if m, err := e.Message("t", mine.MessageID); err != nil || string(m.Body) != "new" {
		t.Fatalf("own message: %+v %v", m, err)
	}
}

// TestDeleteRemovesPendingTimersAndRedriveMarks: deleting a topic removes
// its pending timer messages at once (in the background, not when due an
// hour later), also when the process stops half-way; deleting a %DLQ%
// topic removes its redrive marks. Other topics' timers stay.
func TestDeleteRemovesPendingTimersAndRedriveMarks(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	mustTopic(t, e, "keep", 1)
	later := time.Now().Add(time.Hour)
	batch := make([]core.PutMessage, 700)
	for i := range batch {
		batch[i] = core.PutMessage{Body: []byte("x"), DeliverAt: later}
	}
	mustPut(t, e, "t", batch...)
	mustPut(t, e, "keep", core.PutMessage{Body: []byte("k"), DeliverAt: later})
	deadLetter(t, e, "g", "keep", 3)
	if n, err := e.Redrive(t.Context(), "g", nil); err != nil || n != 3 {
		t.Fatalf("Redrive: %d %v", n, err)
	}
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteSystemTopic(core.DLQTopic("g")); err != nil {
		t.Fatal(err)
	}
	dir := snapshot(t, e) // a kill -9 right after the deletions
	for _, eng := range []*Engine{e, openTest(t, Options{Dir: dir})} {
		checkFor(t, 10*time.Second, func() error {
			timers, err := eng.pendingTimers()
			if err != nil {
				return err
			}
			if byTopic, byID, marks, sweep := bucketLen(t, eng, bucketTimerTopics), bucketLen(t, eng, bucketTimerIDs),
				bucketLen(t, eng, bucketRedriven), bucketLen(t, eng, bucketSweep); timers != 1 || byTopic != 1 || byID != 1 || marks != 0 || sweep != 0 {
				return fmt.Errorf("%d timers (%d by topic, %d by id), %d redrive marks, %d to sweep; want 1, 1, 1, 0, 0", timers, byTopic, byID, marks, sweep)
			}
			return nil
		})
	}
	if c := e.Counters(); c.Dropped != 700 {
		t.Fatalf("counters %+v: want the 700 removed timers counted as dropped", c)
	}
}

// TestRetriesOfADeletedTopicAreNotDelivered: a message of a topic that is
// deleted (and created again) while its retry waits is not delivered from
// the group's %RETRY% topic, and a send-back after the delete writes no
// copy at all — but still runs its settle hook.
func TestRetriesOfADeletedTopicAreNotDelivered(t *testing.T) {
	e := openTest(t, Options{DelayLevels: shortLevels[:3]})
	mustTopic(t, e, "t", 1)
	mustPut(t, e, "t", text("pending"), text("late"))
	msgs := readAll(t, e, core.MessageQueue{Topic: "t"})
	if err := e.SendMessageBack(t.Context(), "g", msgs[0], 1, 16); err != nil {
		t.Fatal(err)
	}
	retry := core.MessageQueue{Topic: core.RetryTopic("g")}
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 1)
	settled := false
	hook := func(store.Tx) error { settled = true; return nil }
	if err := e.SendMessageBackSettled(t.Context(), "g", msgs[1], 1, 16, hook); err != nil {
		t.Fatal(err)
	}
	if !settled {
		t.Fatal("the settle hook of a dropped send-back did not run")
	}
	// The pending retry is moved into %RETRY%g when due, and skipped there.
	checkFor(t, 5*time.Second, func() error {
		if _, max, err := e.QueueOffsets(retry); err != nil || max != 1 {
			return fmt.Errorf("retry queue max %d (%v)", max, err)
		}
		return nil
	})
	res, err := e.GetMessages(retry, 0, 32, core.MatchAll)
	if err != nil || len(res.Messages) != 0 || res.NextOffset != 1 {
		t.Fatalf("retry of a deleted topic's message read: %+v, %v", res, err)
	}
}

// TestPendingTimerFoundByID: a timer message can be read by id before it
// is due (shown under its topic without a queue position), after it moved
// it is found where it landed, its id entry is gone, and a store whose
// timers were indexed before the id index existed gets one on open.
func TestPendingTimerFoundByID(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 2)
	res := mustPut(t, e, "t", core.PutMessage{Body: []byte("later"), DeliverAt: time.Now().Add(time.Hour)},
		core.PutMessage{Body: []byte("soon"), DeliverAt: time.Now().Add(300 * time.Millisecond)})
	later, soon := res[0].MessageID, res[1].MessageID
	for _, id := range []string{later, soon} {
		m, err := e.Message("t", id)
		if err != nil {
			t.Fatalf("GET of pending timer %s: %v", id, err)
		}
		if m.Topic != core.ScheduleTopic || m.SysProps[core.PropRealTopic] != "t" || m.UserID() != id {
			t.Fatalf("pending timer shown as %+v", m)
		}
	}
	if _, err := e.Message("other", later); core.ErrorCode(err) != core.ENotFound {
		t.Fatalf("pending timer found under another topic: %v", err)
	}
	checkFor(t, 10*time.Second, func() error {
		m, err := e.Message("t", soon)
		if err != nil {
			return err
		}
		if m.Topic != "t" || m.StoredAt.IsZero() {
			return fmt.Errorf("due timer not placed yet: topic %q", m.Topic)
		}
		return nil
	})
	if n := bucketLen(t, e, bucketTimerIDs); n != 1 {
		t.Fatalf("%d timer ids after one moved, want 1", n)
	}
	// A store from before the id index: drop it, reopen, find it again.
	if err := e.update(func(tx store.Tx) error { return tx.DeleteBucket(bucketTimerIDs) }); err != nil {
		t.Fatal(err)
	}
	dir := snapshot(t, e)
	e2 := openTest(t, Options{Dir: dir})
	if m, err := e2.Message("t", later); err != nil || m.SysProps[core.PropRealTopic] != "t" {
		t.Fatalf("after rebuilding the id index: %v, %v", m, err)
	}
}

// TestSendBackAfterTrashEmptiedDeletedTopic: the send-back of a message
// whose deleted topic the trash loop already emptied (its record is gone,
// so it cannot be re-read) is dropped, not taken for a message of the new
// incarnation that retention removed.
func TestSendBackAfterTrashEmptiedDeletedTopic(t *testing.T) {
	e := openTest(t, Options{DelayLevels: shortLevels[:3]})
	mustTopic(t, e, "t", 1)
	mustPut(t, e, "t", text("a"), text("b"))
	msgs := readAll(t, e, core.MessageQueue{Topic: "t"})
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	mustTopic(t, e, "t", 1)
	checkFor(t, 10*time.Second, func() error {
		var trash bool
		if err := e.st.View(func(tx store.ReadTx) error { trash = tx.HasTrash(); return nil }); err != nil || trash {
			return fmt.Errorf("deleted topics still being emptied (%v)", err)
		}
		return nil
	})
	if err := e.SendMessageBack(t.Context(), "g", msgs[1], 1, 16); err != nil {
		t.Fatal(err)
	}
	if _, max, err := e.QueueOffsets(core.MessageQueue{Topic: core.ScheduleTopic}); err == nil && max != 0 {
		t.Fatalf("a retry copy of a deleted topic's message was scheduled (schedule queue max %d)", max)
	}
	if c := e.Counters(); c.Dropped != 1 {
		t.Fatalf("counters %+v: want the send-back dropped", c)
	}
}
