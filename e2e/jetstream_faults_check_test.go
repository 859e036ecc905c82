package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestJetStreamFaultsCheckerCanFail feeds the fault run's checker
// synthetic histories: a clean one passes, and each broken rule (a lost
// publish, a dead letter with no or two DLQ copies, an ORDERLY
// inversion, an idempotency key stored twice, a redelivery after an ok
// ack, a 500, a 503 without Retry-After) fails it with its own line.
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
	// An ORDERLY redelivery of a message settled ok after a later one of
	// its key, while a stale leader may act, is counted, not failed.
	h = clean()
	h.r.setWindow("r1 partition n1")
	h.r.recordDelivery(jfOrd, "m-o1", jfBody{Key: "o0-0", Seq: 1}, 1)
	if rep := h.r.check(h.dlq); rep.failure() != "" || len(rep.staleInversions) != 1 {
		t.Fatalf("a stale-leader inversion: failure %q, counted %v", rep.failure(), rep.staleInversions)
	}
	// A 503 with Retry-After is counted per window but is no failure.
	h = clean()
	answerWith(t, h.r, 503, "1")
	rep := h.r.check(h.dlq)
	if f := rep.failure(); f != "" || rep.answers["steady"][503] != 1 {
		t.Fatalf("a 503 with Retry-After: failure %q, counted %v", f, rep.answers)
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
