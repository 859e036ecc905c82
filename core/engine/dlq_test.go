package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// deadLetter puts n messages on topic and dead-letters each for group.
func deadLetter(t testing.TB, e *Engine, group, topic string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		res := mustPut(t, e, topic, core.PutMessage{Body: []byte(fmt.Sprint(i)), Properties: map[string]string{"i": fmt.Sprint(i)}})[0]
		m, err := e.Message(topic, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		m.ReconsumeTimes = 2
		if err := e.SendMessageBack(t.Context(), group, m, 0, 2); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.MessageID)
	}
	return ids
}

func TestDLQPaging(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	ids := deadLetter(t, e, "g", "t", 7)
	var got []string
	cursor := ""
	pages := 0
	for {
		page, next, err := e.DLQMessages("g", cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range page {
			got = append(got, m.UserID())
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) || pages != 3 {
		t.Fatalf("paged %v in %d pages, want %v", got, pages, ids)
	}
	_, _, err := e.DLQMessages("g", "garbage", 3)
	wantCode(t, err, core.EInvalid)
	if page, next, err := e.DLQMessages("nobody", "", 3); err != nil || len(page) != 0 || next != "" {
		t.Fatalf("empty DLQ: %v %q %v", page, next, err)
	}
}

// TestRedrive sends dead letters back to their group only, with
// reconsumeTimes reset, exactly once; redriven ones leave the listing.
func TestRedrive(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	ids := deadLetter(t, e, "g", "t", 5)
	deadLetter(t, e, "other", "t", 1)

	n, err := e.Redrive(t.Context(), "g", []string{ids[1], ids[3], "unknown"})
	if err != nil || n != 2 {
		t.Fatalf("Redrive(selected) = %d, %v", n, err)
	}
	retry := core.MessageQueue{Topic: core.RetryTopic("g")}
	got := waitCount(t, e, retry, 2, time.Second)
	for i, want := range []string{ids[1], ids[3]} {
		m := got[i]
		if m.UserID() != want || m.UserTopic() != "t" || m.ReconsumeTimes != 0 || m.Properties["i"] == "" {
			t.Fatalf("redriven %+v", m)
		}
	}
	left, _, _ := e.DLQMessages("g", "", 10)
	if len(left) != 3 || left[0].UserID() != ids[0] || left[1].UserID() != ids[2] || left[2].UserID() != ids[4] {
		t.Fatalf("DLQ after selected redrive: %d entries", len(left))
	}
	if d, _ := e.DLQDepth("g"); d != 3 {
		t.Fatalf("depth %d", d)
	}
	// Again: already redriven ones are not sent twice.
	if n, err := e.Redrive(t.Context(), "g", []string{ids[1]}); err != nil || n != 0 {
		t.Fatalf("second Redrive = %d, %v", n, err)
	}
	if n, err := e.Redrive(t.Context(), "g", nil); err != nil || n != 3 {
		t.Fatalf("Redrive(all) = %d, %v", n, err)
	}
	waitCount(t, e, retry, 5, time.Second)
	if left, _, _ := e.DLQMessages("g", "", 10); len(left) != 0 {
		t.Fatalf("%d dead letters left after redriving all", len(left))
	}
	if n, _ := e.Redrive(t.Context(), "g", nil); n != 0 {
		t.Fatalf("redrive of an empty DLQ sent %d", n)
	}
	// Only this group's retry topic received them.
	if others := readAll(t, e, core.MessageQueue{Topic: core.RetryTopic("other")}); len(others) != 0 {
		t.Fatalf("other group got %d", len(others))
	}
	if dl, _, _ := e.DLQMessages("other", "", 10); len(dl) != 1 {
		t.Fatalf("other group's DLQ touched: %d", len(dl))
	}
	if c := e.Counters(); c.Redriven != 5 || c.DeadLettered != 6 {
		t.Fatalf("counters %+v", c)
	}
	// A redriven message that fails again walks the ladder from 0 and can
	// be dead-lettered again: listed once more.
	m := got[0]
	m.ReconsumeTimes = 2
	if err := e.SendMessageBack(t.Context(), "g", m, -1, 2); err != nil {
		t.Fatal(err)
	}
	if left, _, _ := e.DLQMessages("g", "", 10); len(left) != 1 || left[0].UserID() != ids[1] {
		t.Fatalf("re-dead-lettered: %+v", left)
	}
}

// TestRedriveConcurrentIsExactlyOnce races two Redrive(all) calls.
func TestRedriveConcurrent(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	deadLetter(t, e, "g", "t", 50)
	res := make(chan int, 2)
	for range 2 {
		go func() {
			n, err := e.Redrive(t.Context(), "g", nil)
			if err != nil {
				t.Error(err)
			}
			res <- n
		}()
	}
	if total := <-res + <-res; total != 50 {
		t.Fatalf("redriven %d, want 50", total)
	}
	waitCount(t, e, core.MessageQueue{Topic: core.RetryTopic("g")}, 50, time.Second)
}

// RedriveIDs names the dead letters that moved, and only those: an id not
// in the DLQ, or already redriven, is not among them.
func TestRedriveIDsNamesWhatMoved(t *testing.T) {
	e := openTest(t, Options{})
	mustTopic(t, e, "t", 1)
	ids := deadLetter(t, e, "g", "t", 3)
	moved, err := e.RedriveIDs(t.Context(), "g", []string{ids[2], "unknown", ids[0]})
	if err != nil || !slices.Equal(moved, []string{ids[0], ids[2]}) {
		t.Fatalf("RedriveIDs(selected) = %v, %v; want [%s %s] in DLQ order", moved, err, ids[0], ids[2])
	}
	if moved, err := e.RedriveIDs(t.Context(), "g", []string{ids[0]}); err != nil || len(moved) != 0 {
		t.Fatalf("again = %v, %v", moved, err)
	}
	if moved, err := e.RedriveIDs(t.Context(), "g", nil); err != nil || !slices.Equal(moved, []string{ids[1]}) {
		t.Fatalf("all = %v, %v", moved, err)
	}
}
