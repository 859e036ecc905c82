package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core/store"
)

// End-to-end tests of SPEC §8.9 (issue 9 item 3): a deleted topic's or
// group's pending messages never reach a new topic or group of the same
// name, and topic deletion answers at once and empties in the background.

// waitCounter polls /metrics until series reaches want (fails at the
// deadline, or at once if it goes past want).
func waitCounter(t *testing.T, s *server, series string, want float64, total time.Duration) {
	t.Helper()
	checkFor(t, total, 50*time.Millisecond, func() error {
		got := scrape(t, s)[series]
		if got > want {
			t.Fatalf("%s = %v, want %v", series, got, want)
		}
		if got != want {
			return fmt.Errorf("%s = %v, want %v", series, got, want)
		}
		return nil
	})
}

// TestDeletedTopicDelayedMessagesNeverReachItsSuccessor: a delay-level, a
// delaySeconds and a deliverAt message pending for topic t are dropped
// when due once t was deleted and created again; the new t receives only
// its own delayed message.
func TestDeletedTopicDelayedMessagesNeverReachItsSuccessor(t *testing.T) {
	s := startDelayServer(t, t.TempDir(), shortLevels)
	createTopic(t, s, "t", 2)
	at := time.Now().Add(600 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	want(t, s.do(t, "POST", "/v1/topics/t/messages/batch", map[string]any{"messages": []map[string]any{
		{"body": "old-level", "delayLevel": 5},
		{"body": "old-seconds", "delaySeconds": 1},
		{"body": "old-at", "deliverAt": at},
	}}), http.StatusCreated)

	want(t, s.do(t, "DELETE", "/v1/topics/t", nil), http.StatusNoContent)
	createTopic(t, s, "t", 2)
	r := s.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "t"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired (consumption answers 503)")
	}
	want(t, r, http.StatusCreated)
	want(t, s.do(t, "POST", "/v1/topics/t/messages", map[string]any{"body": "new", "delayLevel": 1}), http.StatusCreated)

	got := receiveN(t, s, "g", 1, 10*time.Second)
	if got[0].Body == nil || *got[0].Body != "new" {
		t.Fatalf("re-created topic delivered %+v, want its own message", got[0])
	}
	ack(t, s, "g", got[0].ReceiptHandle)
	// All three old messages came due (the last at about 1 s) and were dropped.
	waitCounter(t, s, "mqgate_delayed_dropped_total", 3, 10*time.Second)
	wantNothing(t, s, "g", 1)
	if m := scrape(t, s); m["mqgate_delayed_delivered_total"] != 1 {
		t.Fatalf("delivered %v delayed messages, want 1 (the new topic's own)", m["mqgate_delayed_delivered_total"])
	}
}

// TestDeletedGroupRetryNeverReachesItsSuccessor: group g nacks a message
// (its retry waits 500 ms on the delay path); g is deleted and created
// again under the same name: the new g receives what is published after
// it, never the old g's retry copy (reconsumeTimes > 0), which is dropped
// when due. (The new g starts at LAST_OFFSET: where a re-created group
// starts on the user topic is the offsets' business, not this test's.)
func TestDeletedGroupRetryNeverReachesItsSuccessor(t *testing.T) {
	s := startDelayServer(t, t.TempDir(), shortLevels)
	createTopic(t, s, "orders", 1)
	putGroup := func(position string) {
		t.Helper()
		r := s.do(t, "PUT", "/v1/groups/g", map[string]any{
			"subscriptions": []map[string]any{{"topic": "orders"}},
			"consumeFrom":   map[string]any{"position": position},
		})
		if r.Status == http.StatusServiceUnavailable {
			t.Skip("this binary has no gateway wired (consumption answers 503)")
		}
		want(t, r, http.StatusCreated)
	}
	putGroup("FIRST_OFFSET")
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "pay"}), http.StatusCreated)
	got := receiveN(t, s, "g", 1, 10*time.Second)
	st, err := answer(s, "g", "nack", map[string]any{"receiptHandles": []string{got[0].ReceiptHandle}, "delayLevel": 5})
	if err != nil || st[0] != "ok" {
		t.Fatalf("nack: %v %v", st, err)
	}
	waitCounter(t, s, "mqgate_retried_messages_total", 1, 5*time.Second)

	want(t, s.do(t, "DELETE", "/v1/groups/g", nil), http.StatusNoContent)
	putGroup("LAST_OFFSET")
	defer func() {
		if t.Failed() {
			t.Log(s.Logs())
		}
	}()
	// The new group is live: it gets what is published now.
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]any{"body": "fresh"}), http.StatusCreated)
		msgs, _, err := receiveOnce(s, "g", 32, 1)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.ReconsumeTimes != 0 {
				t.Fatalf("new group received the old group's retry %+v", m)
			}
			ack(t, s, "g", m.ReceiptHandle)
		}
		if len(msgs) == 0 {
			return fmt.Errorf("the new group received nothing yet")
		}
		return nil
	})
	// The old group's retry came due and was dropped, not delivered.
	waitCounter(t, s, "mqgate_delayed_dropped_total", 1, 10*time.Second)
	for {
		msgs, _, err := receiveOnce(s, "g", 32, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if m.ReconsumeTimes != 0 || m.Body == nil || *m.Body != "fresh" {
				t.Fatalf("new group received %+v, want only fresh messages", m)
			}
			ack(t, s, "g", m.ReceiptHandle)
		}
	}
}

// TestTopicDeleteAnswersAtOnceAndResumesAfterKill: DELETE of a topic with
// 100,000 messages answers before they are removed — a kill -9 right
// after the answer leaves them in the trash — and the restarted server
// removes them by itself; nothing of them shows under a topic re-created
// with the same name meanwhile.
func TestTopicDeleteAnswersAtOnceAndResumesAfterKill(t *testing.T) {
	dir := t.TempDir()
	// A segment per group commit: the deleted topic shares none with keep,
	// so all of it can go, a segment at a time.
	seg := []string{"--segment-bytes", "1"}
	s := startServer(t, dir, seg...)
	createTopic(t, s, "big", 4)
	createTopic(t, s, "keep", 1)
	publishBatches(t, s, "big", "m", 100_000, nil)
	want(t, s.do(t, "POST", "/v1/topics/keep/messages", map[string]any{"body": "stay"}), http.StatusCreated)

	start := time.Now()
	want(t, s.do(t, "DELETE", "/v1/topics/big", nil), http.StatusNoContent)
	took := time.Since(start)
	s.kill()
	t.Logf("DELETE of 100,000 messages answered in %v", took)

	trash, records := fileCounts(t, dir)
	if !trash || records <= 1 {
		t.Fatalf("after kill -9 right after DELETE: trash %v, %d commit log records; "+
			"want the deletion still pending (it must not run inside the request)", trash, records)
	}
	t.Logf("the kill left %d of 100,001 records", records)

	s = startServer(t, dir, seg...)
	want(t, s.do(t, "GET", "/v1/topics/big", nil), http.StatusNotFound)
	createTopic(t, s, "big", 1)
	checkFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if !strings.Contains(s.Logs(), "deleted topics emptied") {
			return fmt.Errorf("the restarted server has not finished emptying the deleted topic")
		}
		return nil
	})
	r := s.do(t, "GET", "/v1/topics/big/messages?queueId=0&offset=0&limit=10", nil)
	if r.Status != http.StatusOK || strings.Contains(string(r.Body), "\"m-") {
		t.Fatalf("re-created topic read: %d %s", r.Status, r.Body)
	}
	s.stop(t)
	if trash, records := fileCounts(t, dir); trash || records != 1 {
		t.Fatalf("after the background pass: trash %v, %d commit log records, want none and 1", trash, records)
	}
}

// fileCounts opens a copy of a stopped server's file (the original stays
// as the kill left it, for the next start to recover) and reports whether
// deleted topics are still in the trash and how many commit log records
// remain.
func fileCounts(t *testing.T, dir string) (trash bool, records int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	cp := t.TempDir()
	if err := os.WriteFile(filepath.Join(cp, store.FileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cp, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.View(func(tx store.ReadTx) error {
		trash, records = tx.HasTrash(), tx.CountRecords()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return trash, records
}
