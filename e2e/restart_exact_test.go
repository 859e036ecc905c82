package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLeasedRestartRedeliversOnlyTheLease is issue 9 item 8 (SPEC §8.10):
// one queue; its first message is received with a long lease and never
// answered, the 200 after it are received and acked ok. After a clean
// restart (SIGTERM) only the leased message comes back: the acks above the
// committed offset were persisted as acked ranges, so none of the 200 is
// delivered again.
func TestLeasedRestartRedeliversOnlyTheLease(t *testing.T) {
	const acked = 200
	dir := t.TempDir()
	s := startServer(t, dir)
	createTopic(t, s, "one", 1)
	want(t, s.do(t, "PUT", "/v1/groups/lr", map[string]any{
		"subscriptions": []map[string]any{{"topic": "one"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), http.StatusCreated)
	want(t, s.do(t, "POST", "/v1/topics/one/messages", map[string]any{"body": "leased"}), http.StatusCreated)
	publishBatches(t, s, "one", "acked", acked, nil)

	var first []recvMsg
	checkFor(t, 10*time.Second, 0, func() error {
		first = receive(t, s, "lr", map[string]any{"maxMessages": 1, "waitSeconds": 1, "invisibleSeconds": 3600})
		if len(first) == 0 {
			return fmt.Errorf("nothing received")
		}
		return nil
	})
	if first[0].Body != "leased" {
		t.Fatalf("first delivery of the queue is %q, want %q", first[0].Body, "leased")
	}
	ackedOK := map[string]bool{}
	checkFor(t, 30*time.Second, 0, func() error {
		ms := receive(t, s, "lr", map[string]any{"maxMessages": 32, "waitSeconds": 1})
		if len(ms) > 0 {
			hs := make([]string, len(ms))
			for i, m := range ms {
				hs[i] = m.ReceiptHandle
			}
			for i, res := range ack(t, s, "lr", hs...).Results {
				if res.Status == "ok" {
					ackedOK[ms[i].Body] = true
				}
			}
		}
		if len(ackedOK) < acked {
			return fmt.Errorf("%d of %d acked", len(ackedOK), acked)
		}
		return nil
	})
	if ackedOK["leased"] {
		t.Fatal("the leased message was delivered again before the restart")
	}

	s.stop(t)
	s = startServer(t, dir)
	var after []string
	leasedBack := false
	// Until the leased message is back and a long poll comes back empty:
	// whatever the group would redeliver has come by then.
	for polls := 0; polls < 60; polls++ {
		ms := receive(t, s, "lr", map[string]any{"maxMessages": 32, "waitSeconds": 1})
		if len(ms) == 0 && leasedBack {
			break
		}
		hs := make([]string, 0, len(ms))
		for _, m := range ms {
			after = append(after, m.Body)
			leasedBack = leasedBack || m.Body == "leased"
			hs = append(hs, m.ReceiptHandle)
		}
		if len(hs) > 0 {
			ack(t, s, "lr", hs...)
		}
	}
	var again []string
	for _, b := range after {
		if ackedOK[b] {
			again = append(again, b)
		}
	}
	t.Logf("after SIGTERM: %d deliveries, leased message back: %v, acked messages delivered again: %d of %d", len(after), leasedBack, len(again), acked)
	if !leasedBack {
		t.Errorf("the leased (never answered) message did not come back after the restart")
	}
	if len(again) > 0 {
		show := again
		if len(show) > 10 {
			show = show[:10]
		}
		t.Errorf("%d messages acked ok before the SIGTERM were delivered again after it (first: %s)", len(again), strings.Join(show, ", "))
	}
}

// TestBroadcastRestartConsumerIDs is issue 9 item 11: a BROADCASTING
// LAST_OFFSET group whose consumerIds b1, b2 and b3 appear at different
// moments — b2 and b3 each 150 ms before a kill -9 — while a publisher
// publishes every 30 ms, across four restarts (kill -9, SIGTERM, kill -9,
// SIGTERM) and no topology change. Each consumerId receives every
// acknowledged publish published after its first receive answered (its
// start is persisted at once), nothing published before its first receive,
// and nothing it acked again after a SIGTERM (checkChaos, rules 1, 3b, 4, 5).
func TestBroadcastRestartConsumerIDs(t *testing.T) {
	seed := chaosSeed(t)
	t.Logf("MQGATE_CHAOS_SEED=%d", seed)
	r := newChaosRun(t, map[string]int{"tk": 4}, []string{"tk"}, []chaosGroupSpec{
		{name: "fan", broadcast: true, lastOffset: true, filters: map[string]string{"tk": "*"},
			consumers: []string{"b1", "b2", "b3"}, scripted: []bool{false, true, true}},
	})
	// appearThenKill: the consumerId's first receive answers, about five
	// publishes follow, then kill -9 — before the consumer's periodic
	// offset persist (1 s) has necessarily run. Consumers are held from
	// just before the kill until about ten publishes reached the new
	// process, so a consumerId that restarts at LAST_OFFSET (its start
	// not persisted) misses them.
	appearThenKill := func(i int) chaosOp {
		return func(r *chaosRun) {
			r.appear("fan", i)
			r.pause(150 * time.Millisecond)
			release := r.holdConsumers()
			r.restart(true)
			r.pause(300 * time.Millisecond)
			release()
		}
	}
	term := func(r *chaosRun) { r.restart(false) }
	script := []chaosOp{appearThenKill(1), term, appearThenKill(2), term}
	pace := func(rng *rand.Rand) time.Duration {
		return 300*time.Millisecond + time.Duration(rng.Int64N(int64(500*time.Millisecond)))
	}
	rep := r.run(seed, 1, 30*time.Millisecond, pace, script, 15*time.Second)
	t.Logf("ops: %s", strings.Join(r.ops, "; "))
	t.Logf("broadcast counts: %s", rep.Summary())
	if r.errs.Load() > 0 {
		t.Errorf("%d unexpected client errors (first ones above)", r.errs.Load())
	}
	if rep.Published == 0 || rep.Required == 0 {
		t.Fatalf("nothing happened: %s", rep.Summary())
	}
	if rules := rep.Rules(); len(rules) > 0 {
		t.Errorf("BROADCASTING consumerIds across restarts broke %v:\n%s", rules, rep.Failure())
	}
}
