package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestJetStreamFaultsCheckerCanFail feeds the fault run's checker
// synthetic histories: a clean one passes, and each broken rule (a lost
// publish, a dead letter with no or two DLQ copies, an ORDERLY
// inversion, also in a fault window, an idempotency key stored twice, a
// redelivery after an ok ack, a 500, a 503 without Retry-After, a 5xx
// after a fault and its grace) fails it with its own line.
func TestJetStreamFaultsCheckerCanFail(t *testing.T) {
	type history struct {
		r   *jfRun
		dlq map[string]map[string]int
	}
	// clean: a plain message, a poison one, and two of one ordered key,
	// published, delivered in order and settled in both groups.
	clean := func() history {
		r := newJFRun(t, nil, 1)
		msgs := []struct {
			id string
			b  jfBody
		}{
			{"m-plain", jfBody{Key: "u-1"}},
			{"m-poison", jfBody{Key: "u-2", Poison: true}},
			{"m-o1", jfBody{Key: "o0-0", Seq: 1, Idem: "o0-0-1"}},
			{"m-o2", jfBody{Key: "o0-0", Seq: 2, Idem: "o0-0-2"}},
		}
		for _, m := range msgs {
			r.published[m.id] = m.b
			if m.b.Idem != "" {
				r.idemIDs[m.b.Idem] = map[string]bool{m.id: true}
			}
		}
		h := history{r: r, dlq: map[string]map[string]int{}}
		for _, g := range jfGroups {
			h.dlq[g] = map[string]int{"m-poison": 1}
			for _, m := range msgs {
				r.recordDelivery(g, m.id, m.b, 0)
				verb := "ack"
				if m.b.Poison {
					verb = "nack"
				}
				r.settled[g][m.id] = verb
			}
		}
		return h
	}
	h := clean()
	if f := h.r.check(h.dlq).failure(); f != "" {
		t.Fatalf("a clean history fails:\n%s", f)
	}

	for _, tc := range []struct {
		name, want string
		breakIt    func(h history)
	}{
		{"lost", "lost acknowledged publishes: 2", func(h history) {
			h.r.published["m-never"] = jfBody{Key: "u-3"} // in neither group
		}},
		{"no DLQ copy", "dead letters missing from the DLQ", func(h history) {
			delete(h.dlq[jfConc], "m-poison")
		}},
		{"two DLQ copies", "DLQ copies not exactly one", func(h history) {
			h.dlq[jfOrd]["m-poison"] = 2
		}},
		{"not poison in the DLQ", "DLQ copies not exactly one", func(h history) {
			h.dlq[jfOrd]["m-plain"] = 1
		}},
		{"inversion", "ORDERLY per-key inversions: 1", func(h history) {
			h.r.recordDelivery(jfOrd, "m-o1", jfBody{Key: "o0-0", Seq: 1}, 0)
		}},
		{"stored twice", "idempotency keys stored twice: 1", func(h history) {
			h.r.recordDelivery(jfConc, "m-o2-again", jfBody{Key: "o0-0", Seq: 2, Idem: "o0-0-2"}, 0)
		}},
		{"redelivered after ok", "deliveries after an ok settle, outside a stale-leader window: 1", func(h history) {
			h.r.recordDelivery(jfConc, "m-plain", jfBody{Key: "u-1"}, 0)
		}},
		{"500", "500 answers: 1", func(h history) {
			answerWith(t, h.r, 500, "")
		}},
		{"503 without Retry-After", "503 without Retry-After: 1", func(h history) {
			answerWith(t, h.r, 503, "")
		}},
	} {
		h := clean()
		tc.breakIt(h)
		f := h.r.check(h.dlq).failure()
		if !strings.Contains(f, tc.want) {
			t.Errorf("%s: failure %q, want it to contain %q", tc.name, f, tc.want)
		}
	}
	// After an ok settle, a delivery while a stale leader may act is
	// counted, not failed.
	h = clean()
	h.r.setWindow("r0 after stop-leader")
	h.r.recordDelivery(jfOrd, "m-o2", jfBody{Key: "o0-0", Seq: 2}, 1)
	if rep := h.r.check(h.dlq); rep.failure() != "" || rep.dupStale[jfOrd] != 1 {
		t.Fatalf("a stale-leader redelivery: failure %q, counted %v", rep.failure(), rep.dupStale)
	}
	// An ORDERLY redelivery of a message after a later one of its key
	// fails, also while a stale leader may act.
	h = clean()
	h.r.setWindow("r1 partition n1")
	h.r.recordDelivery(jfOrd, "m-o1", jfBody{Key: "o0-0", Seq: 1}, 1)
	if f := h.r.check(h.dlq).failure(); !strings.Contains(f, "ORDERLY per-key inversions: 1") {
		t.Fatalf("an inversion in a partition: failure %q", f)
	}
	// A 503 with Retry-After is counted per window; it is no failure
	// while a fault lasts or within jfGrace after it ended, and one
	// later; one before the first fault is a start-up failure.
	for _, tc := range []struct {
		name string
		win  jfWindow
		fail bool
	}{
		{"in a fault", jfWindow{name: "r0 partition n1", fault: true}, false},
		{"within the grace", jfWindow{name: "r0 after partition", ended: time.Now().Add(-jfGrace / 2)}, false},
		{"after the grace", jfWindow{name: "r0 after partition", ended: time.Now().Add(-jfGrace - time.Second)}, true},
		{"before any fault (start-up)", jfWindow{name: "steady"}, true},
	} {
		h = clean()
		h.r.window.Store(tc.win)
		answerWith(t, h.r, 503, "1")
		rep := h.r.check(h.dlq)
		f := rep.failure()
		wantIn := "5xx after a fault and its"
		if tc.win.name == "steady" {
			wantIn = "5xx before the first fault (start-up): 1"
		}
		if rep.answers[tc.win.name][503] != 1 || (f != "") != tc.fail || tc.fail && !strings.Contains(f, wantIn) {
			t.Errorf("a 503 with Retry-After %s: failure %q (want one: %v), counted %v", tc.name, f, tc.fail, rep.answers)
		}
	}
	// A request sent in a quiet window and answered 503 after a fault
	// began belongs to that fault: before the first one, and long after
	// the grace of the last.
	for _, quiet := range []jfWindow{{name: "steady"}, {name: "r0 after partition", ended: time.Now().Add(-jfGrace - time.Second)}} {
		h = clean()
		h.r.window.Store(quiet)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			h.r.setWindow("r1 kill -9 leader n1")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
		}))
		h.r.gws[0] = &server{base: ts.URL}
		if _, err := h.r.call(0, "publish", "POST", "/v1/topics/x/messages", map[string]any{}); err != nil {
			t.Fatal(err)
		}
		ts.Close()
		if rep := h.r.check(h.dlq); rep.failure() != "" || rep.overlapped != 1 || rep.answers[quiet.name][503] != 1 {
			t.Errorf("a 503 sent in %q, answered in a fault: failure %q, overlapped %d, counted %v", quiet.name, rep.failure(), rep.overlapped, rep.answers)
		}
	}
	// The windows the nemesis names: faults, and what is none.
	for w, fault := range map[string]bool{"steady": false, "drain": false, "r0 after partition": false, "r0 catching up n1": true,
		"r0 partition n1": true, "r0 SIGSTOP leader n2": true, "r0 kill -9 leader n1": true, "r0 restart n1": true,
		"r0 kill -9 gw1": true, "r0 rolling restart": true} {
		if jfFaultWindow(w) != fault {
			t.Errorf("jfFaultWindow(%q) = %v", w, !fault)
		}
	}
}

// answerWith sends one request through r.call to a stand-in gateway
// answering status (with Retry-After when retryAfter is set).
func answerWith(t *testing.T, r *jfRun, status int, retryAfter string) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
	}))
	defer ts.Close()
	r.gws[0] = &server{base: ts.URL}
	if _, err := r.call(0, "publish", "POST", "/v1/topics/x/messages", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	r.http.CloseIdleConnections()
}
