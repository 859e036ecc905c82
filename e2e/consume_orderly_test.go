package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// orderlyMsg is a received message with what the orderly checks need.
type orderlyMsg struct {
	recvMsg
	QueueID        int    `json:"queueId"`
	QueueOffset    int64  `json:"queueOffset"`
	ShardingKey    string `json:"shardingKey"`
	ReconsumeTimes int    `json:"reconsumeTimes"`
}

// orderlyLedger is the test's view of an ORDERLY group, shared by the
// pollers. Marks are made before the request that causes them is sent, so
// the ledger's order is never later than the server's.
type orderlyLedger struct {
	mu sync.Mutex
	// acked[key] lists the messages (their per-key sequence numbers) in
	// the order their acks were sent; an ack answered other than ok is
	// taken out again.
	acked map[string][]int
	done  map[string]bool // body → acked ok
	// out holds, per queue, the leases handed out and not yet answered.
	out map[int]map[string]time.Time // queue → handle → invisibleUntil
	// failures left to inject (nack or let expire).
	failures int
	left     int // messages not yet acked ok
	finished chan struct{}
}

// parseBody splits "k3-17" into the key k3 and sequence 17.
func parseBody(t *testing.T, body string) (string, int) {
	key, seq, ok := strings.Cut(body, "-")
	n, err := strconv.Atoi(seq)
	if !ok || err != nil {
		t.Errorf("unexpected body %q", body)
	}
	return key, n
}

// handedOut checks a receive answer against every lease still out on the
// same queues: an ORDERLY group hands out nothing of a queue while an
// earlier message of it is in flight (leased, unanswered, unexpired), and
// a queue's messages within one answer come in queue order.
func (l *orderlyLedger) handedOut(t *testing.T, msgs []orderlyMsg, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := map[int]int64{}
	for _, m := range msgs {
		if prev, ok := last[m.QueueID]; ok && m.QueueOffset <= prev {
			t.Errorf("queue %d: offset %d after %d in one answer", m.QueueID, m.QueueOffset, prev)
		}
		last[m.QueueID] = m.QueueOffset
	}
	for q := range last {
		for h, until := range l.out[q] {
			if until.After(at) {
				t.Errorf("queue %d handed out while an earlier lease (until %v) is live at %v", q, until, at)
			}
			delete(l.out[q], h) // expired: the server answered it
		}
	}
	for _, m := range msgs {
		until, err := time.Parse(time.RFC3339Nano, m.InvisibleUntil)
		if err != nil {
			t.Errorf("invisibleUntil %q: %v", m.InvisibleUntil, err)
		}
		if l.out[m.QueueID] == nil {
			l.out[m.QueueID] = map[string]time.Time{}
		}
		l.out[m.QueueID][m.ReceiptHandle] = until
	}
}

// answering marks leases as answered (before the ack or nack is sent).
func (l *orderlyLedger) answering(msgs []orderlyMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		delete(l.out[m.QueueID], m.ReceiptHandle)
	}
}

// acking records acks about to be sent, in order.
func (l *orderlyLedger) acking(t *testing.T, msgs []orderlyMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		k, n := parseBody(t, m.Body)
		l.acked[k] = append(l.acked[k], n)
	}
}

// ackAnswered takes back the acks that did not answer ok and counts the
// messages done.
func (l *orderlyLedger) ackAnswered(t *testing.T, msgs []orderlyMsg, res handleResults) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, m := range msgs {
		k, n := parseBody(t, m.Body)
		if res.Results[i].Status == "ok" {
			if l.done[m.Body] {
				t.Errorf("%s acked ok twice (redelivered after an ok ack)", m.Body)
				continue
			}
			l.done[m.Body] = true
			l.left--
			continue
		}
		for j := len(l.acked[k]) - 1; j >= 0; j-- {
			if l.acked[k][j] == n {
				l.acked[k] = append(l.acked[k][:j], l.acked[k][j+1:]...)
				break
			}
		}
	}
	if l.left == 0 {
		select {
		case <-l.finished:
		default:
			close(l.finished)
		}
	}
}

// takeFailure reports whether to inject a failure now.
func (l *orderlyLedger) takeFailure(rng *rand.Rand) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failures == 0 || rng.IntN(4) != 0 {
		return false
	}
	l.failures--
	return true
}

// TestConsumeOrderlyHTTP: an ORDERLY group consumed over HTTP by 4
// concurrent pollers that randomly nack a message or let its 1 s lease
// expire. Per sharding key, the order of first ok acks is exactly publish
// order, nothing of a queue is handed out while an earlier message of it
// is in flight, and the group ends drained. When an answer holds several
// messages of one queue (one consumer batch), those after a nacked one are
// voided: their acks must answer expired. (The binary delivers orderly
// batches of one message today — ConsumeMessageBatchMaxSize 1 — so the log
// line reports how many such acks were checked.)
func TestConsumeOrderlyHTTP(t *testing.T) {
	const keys, perKey, pollers = 8, 25, 4
	s := startServer(t, t.TempDir())
	consumeSetup(t, s, "seq", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeMode":   "ORDERLY",
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	})
	// Keys interleaved, so each queue holds several keys' sequences.
	var msgs []map[string]any
	for i := range keys * perKey {
		k := fmt.Sprintf("k%d", i%keys)
		msgs = append(msgs, map[string]any{"body": fmt.Sprintf("%s-%d", k, i/keys), "shardingKey": k})
	}
	want(t, s.do(t, "POST", "/v1/topics/orders/messages/batch", map[string]any{"messages": msgs}), http.StatusCreated)

	l := &orderlyLedger{
		acked: map[string][]int{}, done: map[string]bool{}, out: map[int]map[string]time.Time{},
		failures: 12, left: keys * perKey, finished: make(chan struct{}),
	}
	var (
		wg              sync.WaitGroup
		nacks, expiries int
		voidedChecked   int
		statMu          sync.Mutex
		stop            = make(chan struct{}) // closed when done or out of time
	)
	post := func(path string, body any, out any) bool {
		r, err := s.try("POST", path, body)
		if err != nil || r.Status != http.StatusOK {
			t.Errorf("POST %s: %v %v", path, err, r)
			return false
		}
		if err := json.Unmarshal(r.Body, out); err != nil {
			t.Errorf("POST %s: %v", path, err)
			return false
		}
		return true
	}
	for p := range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(p), 42))
			for {
				select {
				case <-stop:
					return
				default:
				}
				var got struct {
					Messages []orderlyMsg `json:"messages"`
				}
				if !post("/v1/groups/seq/receive", map[string]any{"maxMessages": 8, "waitSeconds": 1, "invisibleSeconds": 1}, &got) {
					return
				}
				l.handedOut(t, got.Messages, time.Now())
				// Per queue, in order: ack a prefix, then maybe fail one.
				byQueue := map[int][]orderlyMsg{}
				var order []int
				for _, m := range got.Messages {
					if _, ok := byQueue[m.QueueID]; !ok {
						order = append(order, m.QueueID)
					}
					byQueue[m.QueueID] = append(byQueue[m.QueueID], m)
				}
				for _, q := range order {
					run := byQueue[q]
					fail := len(run)
					if l.takeFailure(rng) {
						fail = rng.IntN(len(run))
					}
					if fail > 0 {
						prefix := run[:fail]
						l.answering(prefix)
						l.acking(t, prefix)
						var res handleResults
						if !post("/v1/groups/seq/ack", map[string]any{"receiptHandles": handlesOf(prefix)}, &res) {
							return
						}
						l.ackAnswered(t, prefix, res)
					}
					if fail == len(run) {
						continue
					}
					if rng.IntN(2) == 0 {
						// Let the lease of run[fail] expire: the server
						// answers it (and the rest of run) itself.
						statMu.Lock()
						expiries++
						statMu.Unlock()
						continue
					}
					l.answering(run[fail:])
					var res handleResults
					if !post("/v1/groups/seq/nack", map[string]any{"receiptHandles": handlesOf(run[fail : fail+1])}, &res) {
						return
					}
					if res.Results[0].Status != "ok" {
						continue // its lease ended first: the same outcome
					}
					statMu.Lock()
					nacks++
					statMu.Unlock()
					if rest := run[fail+1:]; len(rest) > 0 {
						// The nack answered the rest of the batch too.
						if !post("/v1/groups/seq/ack", map[string]any{"receiptHandles": handlesOf(rest)}, &res) {
							return
						}
						for _, r := range res.Results {
							if r.Status != "expired" {
								t.Errorf("ack of a message after a nacked one answered %q, want expired", r.Status)
							}
						}
						statMu.Lock()
						voidedChecked += len(rest)
						statMu.Unlock()
					}
				}
			}
		}()
	}
	timer := time.NewTimer(45 * time.Second)
	select {
	case <-l.finished:
	case <-timer.C:
	}
	timer.Stop()
	close(stop)
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left != 0 {
		t.Fatalf("after 45s %d of %d messages not acked", l.left, keys*perKey)
	}
	for k, seq := range l.acked {
		for i, n := range seq {
			if n != i {
				t.Fatalf("key %s: first acks in order %v, want 0..%d", k, seq, perKey-1)
			}
		}
		if len(seq) != perKey {
			t.Fatalf("key %s: %d acks, want %d", k, len(seq), perKey)
		}
	}
	t.Logf("%d messages in order across %d keys with %d nacks and %d expiries (%d voided acks checked)",
		keys*perKey, keys, nacks, expiries, voidedChecked)
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		_, err := drained(t, s, "seq", "")
		return err
	})
}

func handlesOf(msgs []orderlyMsg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ReceiptHandle
	}
	return out
}
