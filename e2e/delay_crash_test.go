package e2e

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// persistWindow bounds the duplicates a kill -9 may cause in the happy
// path: the push consumer writes acked offsets PersistInterval (1 s, the
// consumer's default) after they change, so what was answered in the last
// second before the kill may be consumed again after the restart. One more
// second covers the offset write's own commit and fsync on a loaded CI
// machine. Anything older delivered twice is a bug (for instance the
// schedule service moving a message twice).
const persistWindow = 2 * time.Second

// TestDelayKill9WhileComingDue publishes 10,000 delayed messages (2,000
// with -short) — delay levels from 100 ms to 5 s and deliverAt timers up
// to 5.5 s ahead — while 4 long-polling receivers ack them, except ~5%
// nacked on their first delivery (delay level 1), so retries are in
// flight too. Once a quarter is acked (and persistWindow has passed
// since the first acks), the server is killed with SIGKILL
// and restarted on the same data; receivers then ack everything. Checks:
// every message is acked; none was delivered before its deliverAt; a
// message acked (or nacked) before the kill comes again only if that
// answer was within persistWindow of the kill; after the restart nothing
// is delivered twice except those; and the topic holds exactly n messages
// (the schedule service moved each delayed message exactly once, across
// the crash).
func TestDelayKill9WhileComingDue(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	const levels = "100ms 200ms 300ms 500ms 700ms 1s 2s 3s 4s 5s"
	dir := t.TempDir()
	s1 := startDelayServer(t, dir, levels)
	createTopic(t, s1, "due", 4)
	want(t, s1.do(t, "PUT", "/v1/groups/g", map[string]any{
		"subscriptions": []map[string]any{{"topic": "due"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), http.StatusCreated)
	nackFirst := func(d delivered) bool {
		h := fnv.New32a()
		h.Write([]byte(d.MessageID))
		return h.Sum32()%20 == 0
	}
	p1 := startPollers(s1, "g", 4, nackFirst)

	rng := rand.New(rand.NewPCG(10, 5))
	due := map[string]time.Time{}
	pubStart := time.Now()
	for b := 0; b < n; b += 1000 {
		var msgs []map[string]any
		for i := b; i < min(b+1000, n); i++ {
			m := map[string]any{"body": fmt.Sprintf("d-%d", i)}
			if rng.IntN(5) == 0 {
				m["deliverAt"] = time.Now().Add(time.Duration(200+rng.IntN(5300)) * time.Millisecond).UTC().Format(time.RFC3339Nano)
			} else {
				m["delayLevel"] = 1 + rng.IntN(10)
			}
			msgs = append(msgs, m)
		}
		r := s1.do(t, "POST", "/v1/topics/due/messages/batch", map[string]any{"messages": msgs})
		want(t, r, http.StatusCreated)
		var out struct {
			Results []publishResult `json:"results"`
		}
		r.JSON(t, &out)
		for _, pr := range out.Results {
			if pr.DeliverAt == "" {
				// A deliverAt already past when the server took the batch
				// (a slow -race run) is published for delivery now.
				due[pr.MessageID] = time.Time{}
				continue
			}
			due[pr.MessageID] = parseAPITime(t, pr.DeliverAt)
		}
	}
	published := time.Now()
	// Kill once a quarter is acked and the first acks are older than the
	// persist window (so the duplicate check has something to catch),
	// while the longer levels and timers are still coming due.
	checkFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if got := p1.ackedIDs(); got < n/4 || time.Since(published) < persistWindow+500*time.Millisecond {
			return fmt.Errorf("%d of %d acked before the kill", got, n)
		}
		return nil
	})
	killAt := time.Now()
	s1.kill()
	p1.stopPollers()
	before := p1.snapshot()
	ackedBefore, okBefore, nackedBefore, settled := map[string]time.Time{}, 0, 0, 0
	for _, a := range before {
		if a.acked {
			okBefore++
			if killAt.Sub(a.answeredAt) > persistWindow {
				settled++
			}
		}
		// A request in flight at the kill may have been applied without
		// its answer arriving: its sending time counts.
		if !a.sentAt.IsZero() && a.sentAt.After(ackedBefore[a.msg.MessageID]) {
			ackedBefore[a.msg.MessageID] = a.sentAt
		}
		if a.nacked {
			nackedBefore++
		}
	}
	if len(ackedBefore) >= n {
		t.Fatalf("everything was consumed before the kill; nothing was coming due")
	}
	if nackedBefore == 0 {
		t.Fatalf("no retries were in flight at the kill")
	}
	if settled == 0 {
		t.Fatalf("no ack was older than the %v persist window at the kill; the duplicate check would check nothing", persistWindow)
	}

	s2 := startDelayServer(t, dir, levels)
	restarted := time.Now()
	p2 := startPollers(s2, "g", 4, nil)
	defer p2.stopPollers()
	acked := func() map[string]int {
		ids := map[string]int{}
		for _, a := range before {
			if a.acked {
				ids[a.msg.MessageID]++
			}
		}
		for _, a := range p2.snapshot() {
			if a.acked {
				ids[a.msg.MessageID]++
			}
		}
		return ids
	}
	checkFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if got := len(acked()); got < n {
			return fmt.Errorf("%d of %d messages acked after the restart", got, n)
		}
		return nil
	})
	allAcked := time.Since(restarted)
	// Drained: nothing left in the topic or the retry queue, nothing in
	// flight, so any late duplicate would have been handed out by now.
	checkFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		_, err := drained(t, s2, "g", "")
		return err
	})
	wantNothingPolled := len(p2.snapshot())
	p2.stopPollers()
	if got := len(p2.snapshot()); got != wantNothingPolled {
		t.Fatalf("%d deliveries after the group drained", got-wantNothingPolled)
	}

	after := p2.snapshot()
	for _, a := range append(before, after...) {
		d, ok := due[a.msg.MessageID]
		if !ok {
			t.Fatalf("delivered %s, never published", a.msg.MessageID)
		}
		if a.at.Before(d) {
			t.Fatalf("%s delivered at %s, before its deliverAt %s", a.msg.MessageID, a.at.Format(time.RFC3339Nano), d.Format(time.RFC3339Nano))
		}
	}
	// Duplicates: an id acked more than once overall.
	dups := 0
	for id, c := range acked() {
		if c == 1 {
			continue
		}
		dups++
		last, ok := ackedBefore[id]
		if !ok || killAt.Sub(last) > persistWindow {
			t.Errorf("%s acked %d times; its ack/nack before the kill was sent at kill-%v (outside the %v persist window): %s", id, c, killAt.Sub(last), persistWindow, history(id, before, after))
		}
	}
	// After the restart: each id is acked once, except a nacked original
	// whose retry copy also comes (its nack was in the window).
	seen := map[string]int{}
	for _, a := range after {
		if a.acked {
			seen[a.msg.MessageID]++
		}
	}
	for id, c := range seen {
		if last, ok := ackedBefore[id]; c > 1 && (!ok || killAt.Sub(last) > persistWindow) {
			t.Errorf("%s acked %d times after the restart: %s", id, c, history(id, before, after))
		}
	}

	// The schedule service moved each delayed message exactly once.
	r := s2.do(t, "GET", "/v1/topics/due", nil)
	want(t, r, http.StatusOK)
	var tp topic
	r.JSON(t, &tp)
	var stored int64
	for _, q := range tp.Stats.Queues {
		stored += q.MaxOffset
	}
	if stored != int64(n) {
		t.Errorf("topic due holds %d messages, want exactly %d (a delayed message lost or moved twice)", stored, n)
	}
	t.Logf("%d delayed messages: published in %v; killed %v later with %d acked and %d nacked (retries in flight); after restart all acked in %v; "+
		"%d acks older than the %v persist window, none repeated; %d ids acked twice, all answered within the window; topic holds %d",
		n, published.Sub(pubStart).Round(time.Millisecond), killAt.Sub(published).Round(time.Millisecond),
		okBefore, nackedBefore, allAcked.Round(time.Millisecond), settled, persistWindow, dups, stored)
}

// history describes every delivery of id, for failure messages.
func history(id string, before, after []arrival) string {
	out := ""
	for phase, as := range [][]arrival{before, after} {
		for _, a := range as {
			if a.msg.MessageID == id {
				out += fmt.Sprintf("\n  phase %d: received %s reconsumeTimes %d acked %v nacked %v sent %s answered %s",
					phase+1, a.at.Format("15:04:05.000"), a.msg.ReconsumeTimes, a.acked, a.nacked,
					a.sentAt.Format("15:04:05.000"), a.answeredAt.Format("15:04:05.000"))
			}
		}
	}
	return out
}
