package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// dlqKills is how many times TestDLQKill9 kills the server.
const dlqKills = 7

// readDLQ pages through a group's whole DLQ listing without failing the
// test (the server may be going away).
func readDLQ(s *server, group string) ([]delivered, error) {
	var out []delivered
	cursor := ""
	for range 1000 {
		q := "?limit=500"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r, err := s.try("GET", "/v1/groups/"+group+"/dlq"+q, nil)
		if err != nil {
			return nil, err
		}
		if r.Status != http.StatusOK {
			return nil, fmt.Errorf("dlq: %d %s", r.Status, r.Body)
		}
		var p dlqPage
		if err := json.Unmarshal(r.Body, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Messages...)
		if p.NextCursor == "" || len(p.Messages) == 0 {
			return out, nil
		}
		cursor = p.NextCursor
	}
	return nil, fmt.Errorf("dlq: more than 1000 pages")
}

// TestDLQKill9 is SPEC §8.4 under repeated kill -9: a group with
// maxReconsumeTimes 2 and 100 ms delay levels; three consumers nack every
// delivery (delayLevel 1) while a publisher publishes batches; the server
// is killed with SIGKILL dlqKills times at random moments (0.4–1.5 s apart)
// and restarted on the same data dir. Then, with publishing stopped and the
// consumers still nacking, the test waits until every acknowledged publish
// is in the DLQ and the retry queue is empty, and asserts on the DLQ
// listing: no original message id twice, every acknowledged publish
// exactly once, nothing that was never published.
func TestDLQKill9(t *testing.T) {
	seed := chaosSeed(t)
	t.Logf("MQGATE_CHAOS_SEED=%d", seed)
	dir := t.TempDir()
	var srvs chaosServers
	srvs.up = make(chan struct{})
	srvs.set(startDelayServer(t, dir, shortLevels))
	s0, _, _ := srvs.get(nil)
	createTopic(t, s0, "dl", 4)
	want(t, s0.do(t, "PUT", "/v1/groups/dg", map[string]any{
		"subscriptions":     []map[string]any{{"topic": "dl"}},
		"consumeFrom":       map[string]any{"position": "FIRST_OFFSET"},
		"maxReconsumeTimes": 2,
		"invisibleSeconds":  5,
	}), http.StatusCreated)

	var (
		mu       sync.Mutex
		okIDs    = map[string]string{} // messageId → body, publish answered 201
		unknown  = map[string]bool{}   // bodies whose publish answer was lost
		nacks    int
		stop     = make(chan struct{}) // publisher
		done     = make(chan struct{}) // consumers
		pwg, cwg sync.WaitGroup
		errMu    sync.Mutex
		errs     []string
	)
	report := func(gen int, format string, args ...any) {
		if srvs.current(gen) {
			errMu.Lock()
			errs = append(errs, fmt.Sprintf(format, args...))
			errMu.Unlock()
		}
	}
	pwg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond) // deliberate pacing
		defer tick.Stop()
		for b := 0; ; b++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			s, gen, ok := srvs.get(stop)
			if !ok {
				return
			}
			var msgs []map[string]any
			for i := range 5 {
				msgs = append(msgs, map[string]any{"body": fmt.Sprintf("dlq-%d-%d", b, i)})
			}
			r, err := s.try("POST", "/v1/topics/dl/messages/batch", map[string]any{"messages": msgs})
			mu.Lock()
			switch {
			case err != nil && !strings.Contains(err.Error(), "connection refused"):
				for _, m := range msgs {
					unknown[m["body"].(string)] = true
				}
			case err == nil && r.Status == http.StatusCreated:
				var br struct{ Results []publishResult }
				if json.Unmarshal(r.Body, &br) == nil && len(br.Results) == len(msgs) {
					for i, res := range br.Results {
						okIDs[res.MessageID] = msgs[i]["body"].(string)
					}
				} else {
					report(gen, "publish answer %s", r.Body)
				}
			case err == nil:
				report(gen, "publish: %d %s", r.Status, r.Body)
			}
			mu.Unlock()
			if err != nil {
				report(gen, "publish: %v", err)
			}
		}
	})
	for c := range 3 {
		cwg.Go(func() {
			for {
				s, gen, ok := srvs.get(done)
				if !ok {
					return
				}
				msgs, _, err := receiveOnce(s, "dg", 16, 1)
				if err != nil {
					report(gen, "consumer %d: %v", c, err)
					continue
				}
				if len(msgs) == 0 {
					continue
				}
				hs := make([]string, len(msgs))
				for i, m := range msgs {
					hs[i] = m.ReceiptHandle
				}
				st, err := answer(s, "dg", "nack", map[string]any{"receiptHandles": hs, "delayLevel": 1})
				if err != nil {
					report(gen, "consumer %d: nack: %v", c, err)
				}
				mu.Lock()
				for _, x := range st {
					if x == "ok" {
						nacks++
					}
				}
				mu.Unlock()
			}
		})
	}
	rng := rand.New(rand.NewPCG(seed, 9))
	for k := range dlqKills {
		timer := time.NewTimer(400*time.Millisecond + time.Duration(rng.Int64N(int64(1100*time.Millisecond)))) // deliberate pacing
		<-timer.C
		if k == dlqKills-2 {
			close(stop) // the last kills hit retries and dead-lettering only
			pwg.Wait()
		}
		old := srvs.down()
		old.kill()
		srvs.set(startDelayServer(t, dir, shortLevels))
	}
	s, _, _ := srvs.get(nil)

	// Settle: every acknowledged publish dead-lettered, nothing left to retry.
	mu.Lock()
	published := len(okIDs)
	mu.Unlock()
	var dlq []delivered
	var settleErr error
	deadline := time.Now().Add(40 * time.Second)
	for {
		settleErr = nil
		var err error
		dlq, err = readDLQ(s, "dg")
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]bool{}
		for _, m := range dlq {
			in[m.MessageID] = true
		}
		mu.Lock()
		for id, body := range okIDs {
			if !in[id] {
				settleErr = fmt.Errorf("%s (%s) not in the DLQ yet; %d of %d are", id, body, len(in), published)
				break
			}
		}
		mu.Unlock()
		if settleErr == nil {
			if retry, _ := groupDepths(t, s, "dg"); retry != 0 {
				settleErr = fmt.Errorf("retryDepth %d", retry)
			} else if _, err := drained(t, s, "dg", ""); err != nil {
				settleErr = err
			}
		}
		if settleErr == nil || time.Now().After(deadline) {
			break
		}
		timer := time.NewTimer(250 * time.Millisecond)
		<-timer.C
	}
	close(done)
	cwg.Wait()
	dlq, err := readDLQ(s, "dg")
	if err != nil {
		t.Fatal(err)
	}
	_, depth := groupDepths(t, s, "dg")

	errMu.Lock()
	for i, e := range errs {
		if i == 10 {
			t.Errorf("… %d more client errors", len(errs)-i)
			break
		}
		t.Errorf("unexpected client error: %s", e)
	}
	errMu.Unlock()

	mu.Lock()
	defer mu.Unlock()
	count := map[string]int{}
	var dups, strays, unknownIn []string
	for _, m := range dlq {
		count[m.MessageID]++
		if count[m.MessageID] == 2 {
			dups = append(dups, m.MessageID)
		}
		body := deref(m.Body)
		if _, ok := okIDs[m.MessageID]; !ok && count[m.MessageID] == 1 {
			if unknown[body] {
				unknownIn = append(unknownIn, m.MessageID)
			} else {
				strays = append(strays, fmt.Sprintf("%s (%q)", m.MessageID, body))
			}
		} else if ok && okIDs[m.MessageID] != body {
			t.Errorf("DLQ entry %s has body %q, published %q", m.MessageID, body, okIDs[m.MessageID])
		}
	}
	var missing []string
	for id, body := range okIDs {
		if count[id] == 0 {
			missing = append(missing, fmt.Sprintf("%s (%s)", id, body))
		}
	}
	t.Logf("%d kill -9; published %d acknowledged (+%d unknown), %d nacks answered ok; DLQ: %d entries, %d distinct, dlqDepth %d, duplicated ids %d, missing %d, unknown publishes dead-lettered %d, strays %d",
		dlqKills, published, len(unknown), nacks, len(dlq), len(count), depth, len(dups), len(missing), len(unknownIn), len(strays))
	if settleErr != nil {
		t.Errorf("did not settle within 40 s: %v", settleErr)
	}
	show := func(xs []string) string {
		if len(xs) > 10 {
			return strings.Join(xs[:10], ", ") + fmt.Sprintf(", … %d more", len(xs)-10)
		}
		return strings.Join(xs, ", ")
	}
	if len(dups) > 0 {
		var ds []string
		for _, id := range dups {
			ds = append(ds, fmt.Sprintf("%s ×%d (%s)", id, count[id], okIDs[id]))
		}
		t.Errorf("DLQ holds %d message ids more than once (entries %d != distinct %d): %s", len(dups), len(dlq), len(count), show(ds))
	}
	if len(missing) > 0 {
		t.Errorf("%d acknowledged publishes are not in the DLQ: %s", len(missing), show(missing))
	}
	if len(strays) > 0 {
		t.Errorf("DLQ holds %d messages never published: %s", len(strays), show(strays))
	}
	if depth != int64(len(dlq)) {
		t.Errorf("dlqDepth %d, listing %d entries", depth, len(dlq))
	}
}
