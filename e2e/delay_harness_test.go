package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Helpers of the delay, retry and DLQ end-to-end tests (issue 5).

// shortLevels replaces RocketMQ's 1s…2h ladder so that the retry ladder
// (3 + reconsumeTimes when nack says 0) walks in tenths of a second.
const shortLevels = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s 1100ms 1200ms"

// startDelayServer starts mqgate with the given --delay-levels (through
// MQGATE_DELAY_LEVELS, which the child process inherits; t.Setenv also
// keeps the test from running in parallel with others).
func startDelayServer(t *testing.T, dir, levels string) *server {
	t.Helper()
	t.Setenv("MQGATE_DELAY_LEVELS", levels)
	return startServer(t, dir)
}

// delivered is a received message with everything the tests check.
type delivered struct {
	MessageID      string            `json:"messageId"`
	Topic          string            `json:"topic"`
	QueueID        *int              `json:"queueId"`
	QueueOffset    *int64            `json:"queueOffset"`
	Body           *string           `json:"body"`
	Tags           string            `json:"tags"`
	Keys           []string          `json:"keys"`
	Properties     map[string]string `json:"properties"`
	StoredAt       string            `json:"storedAt"`
	DeliverAt      string            `json:"deliverAt"`
	ReconsumeTimes int               `json:"reconsumeTimes"`
	ReceiptHandle  string            `json:"receiptHandle"`
}

// parseAPITime reads an API time (RFC 3339 with milliseconds).
func parseAPITime(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return at
}

// receiveOnce long-polls a group once without failing the test (for
// receivers racing a kill); at is when the answer arrived.
func receiveOnce(s *server, group string, maxMessages, waitSeconds int) (msgs []delivered, at time.Time, err error) {
	r, err := s.try("POST", "/v1/groups/"+group+"/receive", map[string]any{"maxMessages": maxMessages, "waitSeconds": waitSeconds})
	at = time.Now()
	if err != nil {
		return nil, at, err
	}
	if r.Status != http.StatusOK {
		return nil, at, fmt.Errorf("receive: %d %s", r.Status, r.Body)
	}
	var out struct {
		Messages []delivered `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return nil, at, err
	}
	return out.Messages, at, nil
}

// answer acks or nacks handles without failing the test; it returns each
// handle's status in order.
func answer(s *server, group, verb string, body map[string]any) ([]string, error) {
	r, err := s.try("POST", "/v1/groups/"+group+"/"+verb, body)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", verb, r.Status, r.Body)
	}
	var res handleResults
	if err := json.Unmarshal(r.Body, &res); err != nil {
		return nil, err
	}
	out := make([]string, len(res.Results))
	for i, x := range res.Results {
		out[i] = x.Status
	}
	return out, nil
}

// receiveN long-polls until want messages arrived or total elapsed.
func receiveN(t *testing.T, s *server, group string, want int, total time.Duration) []delivered {
	t.Helper()
	var got []delivered
	deadline := time.Now().Add(total)
	for len(got) < want && time.Now().Before(deadline) {
		msgs, _, err := receiveOnce(s, group, want-len(got), 1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msgs...)
	}
	if len(got) != want {
		t.Fatalf("received %d messages in %v, want %d: %+v", len(got), total, want, got)
	}
	return got
}

// wantNothing fails if the group hands out a message within wait.
func wantNothing(t *testing.T, s *server, group string, waitSeconds int) {
	t.Helper()
	msgs, _, err := receiveOnce(s, group, 32, waitSeconds)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 0 {
		t.Fatalf("group %s received %+v, want nothing", group, msgs)
	}
}

// poller is a set of long-polling receivers acking everything they get,
// recording when each message arrived.
type poller struct {
	s     *server
	group string
	stop  atomic.Bool
	wg    sync.WaitGroup

	mu      sync.Mutex
	arrived []arrival
	errs    int
	// nackFirst, when set, picks messages to nack (level 1) on their
	// first delivery instead of acking them; nacked records those nacks
	// that answered ok.
	nackFirst func(d delivered) bool
	nacked    map[string]bool
	seen      map[string]bool
}

// arrival is one delivery as a receiver saw it.
type arrival struct {
	msg        delivered
	at         time.Time // the receive answer arrived
	acked      bool      // the ack answered ok
	nacked     bool      // nacked instead (nackFirst), answered ok
	answeredAt time.Time // when that ack or nack answered
	sentAt     time.Time // when an ack or nack of it was sent (answered or not)
}

// startPollers runs n receivers on group until stopPollers.
func startPollers(s *server, group string, n int, nackFirst func(d delivered) bool) *poller {
	p := &poller{s: s, group: group, nackFirst: nackFirst, nacked: map[string]bool{}, seen: map[string]bool{}}
	for range n {
		p.wg.Go(p.run)
	}
	return p
}

func (p *poller) run() {
	for !p.stop.Load() {
		msgs, at, err := receiveOnce(p.s, p.group, 32, 1)
		if err != nil {
			p.mu.Lock()
			p.errs++
			p.mu.Unlock()
			if p.stop.Load() {
				return
			}
			time.Sleep(50 * time.Millisecond) // the server is being killed or restarted; not a sync point
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		var acks, nacks []string
		var ackIdx, nackIdx []int
		p.mu.Lock()
		base := len(p.arrived)
		for i, m := range msgs {
			p.arrived = append(p.arrived, arrival{msg: m, at: at})
			if p.nackFirst != nil && !p.seen[m.MessageID] && p.nackFirst(m) {
				nacks, nackIdx = append(nacks, m.ReceiptHandle), append(nackIdx, base+i)
			} else {
				acks, ackIdx = append(acks, m.ReceiptHandle), append(ackIdx, base+i)
			}
			p.seen[m.MessageID] = true
		}
		p.mu.Unlock()
		sent := time.Now()
		p.mu.Lock()
		for i := range msgs {
			p.arrived[base+i].sentAt = sent
		}
		p.mu.Unlock()
		if len(acks) > 0 {
			st, err := answer(p.s, p.group, "ack", map[string]any{"receiptHandles": acks})
			done := time.Now()
			p.mu.Lock()
			for i, s := range st {
				if s == "ok" {
					p.arrived[ackIdx[i]].acked, p.arrived[ackIdx[i]].answeredAt = true, done
				}
			}
			if err != nil {
				p.errs++
			}
			p.mu.Unlock()
		}
		if len(nacks) > 0 {
			st, err := answer(p.s, p.group, "nack", map[string]any{"receiptHandles": nacks, "delayLevel": 1})
			done := time.Now()
			p.mu.Lock()
			for i, s := range st {
				if s == "ok" {
					a := &p.arrived[nackIdx[i]]
					a.nacked, a.answeredAt = true, done
					p.nacked[a.msg.MessageID] = true
				}
			}
			if err != nil {
				p.errs++
			}
			p.mu.Unlock()
		}
	}
}

// stopPollers stops the receivers and waits for them (each finishes its
// current long poll, at most a second).
func (p *poller) stopPollers() {
	p.stop.Store(true)
	p.wg.Wait()
}

// snapshot copies what arrived so far.
func (p *poller) snapshot() []arrival {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.arrived)
}

// ackedIDs counts distinct message ids acked ok so far.
func (p *poller) ackedIDs() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := map[string]bool{}
	for _, a := range p.arrived {
		if a.acked {
			ids[a.msg.MessageID] = true
		}
	}
	return len(ids)
}

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// scrape reads /metrics into series → value ("name" or "name{labels}"
// exactly as exposed).
func scrape(t *testing.T, s *server) map[string]float64 {
	t.Helper()
	r := s.do(t, "GET", "/metrics", nil)
	want(t, r, http.StatusOK)
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
