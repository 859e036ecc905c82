package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

// TestRedeliveryAfterOutage plays the consume service's part (nacked
// messages come back with reconsumeTimes+1, as through %RETRY%<group>):
// a receiver that answers 500 for a while loses nothing, each attempt has
// the same webhook-id (the message's) with its own webhook-attempt, and
// the status recovers.
func TestRedeliveryAfterOutage(t *testing.T) {
	var (
		requests atomic.Int32
		mu       sync.Mutex
		okIDs    = map[string]int{}
		hookIDs  = map[string]bool{}
	)
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if Verify(testSecret, r.Header, b) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		attempt := r.Header.Get(HeaderID) + "/" + r.Header.Get(HeaderAttempt)
		mu.Lock()
		dupHook := hookIDs[attempt]
		hookIDs[attempt] = true
		mu.Unlock()
		if dupHook {
			t.Errorf("webhook-id/attempt %s sent twice", attempt)
		}
		if !strings.Contains(string(b), `"messageId":"`+r.Header.Get(HeaderID)+`"`) {
			t.Errorf("webhook-id %s is not the message's id: %s", r.Header.Get(HeaderID), b)
		}
		if requests.Add(1) <= 60 { // the outage
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var pl struct {
			Messages []struct {
				MessageID string `json:"messageId"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(b, &pl)
		mu.Lock()
		for _, m := range pl.Messages {
			okIDs[m.MessageID]++
		}
		mu.Unlock()
	})
	p := newTestPusher(t, core.PushConfig{URL: srv.URL, MaxInFlight: 8}, Options{AllowLoopback: true})

	const total = 200
	pending := makeMsgs("m", 0, total)
	acked := map[string]bool{}
	for round := 0; len(pending) > 0; round++ {
		if round > 5 {
			t.Fatalf("%d messages still failing after %d rounds", len(pending), round)
		}
		rec := newRecorder()
		p.Consume(rec.deliver(0, false, pending))
		rec.wait(t, len(pending), 10*time.Second)
		var again []*core.Message
		for _, m := range pending {
			a, _ := rec.get(m.ID)
			if a.ok {
				acked[m.ID] = true
				continue
			}
			retry := *m
			retry.ReconsumeTimes++
			again = append(again, &retry)
		}
		pending = again
	}
	if len(acked) != total {
		t.Fatalf("acked %d of %d", len(acked), total)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range total {
		if id := fmt.Sprintf("m-%d", i); okIDs[id] != 1 {
			t.Fatalf("%s answered 2xx %d times", id, okIDs[id])
		}
	}
	st := p.Status()
	if st.ConsecutiveFailures != 0 || st.Delivered != total || st.Failed != 60 || !strings.Contains(st.LastError, "HTTP 500") {
		t.Fatalf("status %+v", st)
	}
}
