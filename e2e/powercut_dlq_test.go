package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// dlqDelayLoad is the power-cut run's delayed messages and dead letters:
// messages published with delaySeconds 1 to topic td, which group gd
// (maxReconsumeTimes 1) nacks on every delivery, so each goes delay ->
// retry -> DLQ. It checks that no delayed message is delivered before its
// deliverAt, and at the end that every acknowledged one is in the DLQ,
// exactly once.
type dlqDelayLoad struct {
	r *chaosRun

	mu      sync.Mutex
	due     map[string]time.Time // message id -> deliverAt, publish answered 201
	bodies  map[string]string
	firsts  int // first deliveries checked against their deliverAt
	nacks   int
	early   []string
	unknown int // publishes whose answer was lost
}

func newDLQDelayLoad(t *testing.T, r *chaosRun, s *server) *dlqDelayLoad {
	t.Helper()
	createTopic(t, s, "td", 2)
	want(t, s.do(t, "PUT", "/v1/groups/gd", map[string]any{
		"subscriptions":     []map[string]any{{"topic": "td"}},
		"consumeFrom":       map[string]any{"position": "FIRST_OFFSET"},
		"maxReconsumeTimes": 1,
		"invisibleSeconds":  5,
	}), http.StatusCreated)
	return &dlqDelayLoad{r: r, due: map[string]time.Time{}, bodies: map[string]string{}}
}

func (l *dlqDelayLoad) publisher(stop <-chan struct{}) {
	tick := time.NewTicker(60 * time.Millisecond) // deliberate pacing
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		s, gen, ok := l.r.srvs.get(stop)
		if !ok {
			return
		}
		body := fmt.Sprintf("delayed-%d", i)
		resp, err := s.try("POST", "/v1/topics/td/messages", map[string]any{"body": body, "delaySeconds": 1})
		var res publishResult
		switch {
		case err != nil && strings.Contains(err.Error(), "connection refused"):
		case err != nil || resp.Status >= 500:
			l.mu.Lock()
			l.unknown++
			l.mu.Unlock()
		case resp.Status != http.StatusCreated || jsonUnmarshal(resp.Body, &res) != nil:
			if l.r.srvs.current(gen) {
				l.r.unexpected("delayed publish: %d %s", resp.Status, resp.Body)
			}
		default:
			at, perr := time.Parse(time.RFC3339Nano, res.DeliverAt)
			if perr != nil {
				l.r.unexpected("delayed publish answered deliverAt %q: %v", res.DeliverAt, perr)
				continue
			}
			l.mu.Lock()
			l.due[res.MessageID], l.bodies[res.MessageID] = at, body
			l.mu.Unlock()
		}
	}
}

// consumer nacks everything it receives until done.
func (l *dlqDelayLoad) consumer(done <-chan struct{}) {
	for {
		s, _, ok := l.r.srvs.get(done)
		if !ok {
			return
		}
		msgs, at, err := receiveOnce(s, "gd", 16, 1)
		if err != nil || len(msgs) == 0 {
			continue
		}
		var hs []string
		l.mu.Lock()
		for _, m := range msgs {
			hs = append(hs, m.ReceiptHandle)
			if due, ok := l.due[m.MessageID]; ok && m.ReconsumeTimes == 0 {
				l.firsts++
				// at is after the server's answer: earlier than deliverAt
				// means delivered early (one clock, one machine).
				if at.Before(due) {
					l.early = append(l.early, fmt.Sprintf("%s delivered by %v, due %v", m.MessageID, at.Format(time.StampMicro), due.Format(time.StampMicro)))
				}
			}
		}
		l.mu.Unlock()
		st, err := answer(s, "gd", "nack", map[string]any{"receiptHandles": hs, "delayLevel": 1})
		if err == nil {
			l.mu.Lock()
			for _, x := range st {
				if x == "ok" {
					l.nacks++
				}
			}
			l.mu.Unlock()
		}
	}
}

// settle waits (at most 30 s) until every acknowledged delayed message is
// in gd's DLQ, then checks the DLQ holds each at most once and nothing
// early was delivered. It returns the DLQ's size and how many
// acknowledged ones are missing from it.
func (l *dlqDelayLoad) settle(t *testing.T, s *server) (size, lost int) {
	t.Helper()
	var dlq []delivered
	deadline := time.Now().Add(30 * time.Second)
	var missing []string
	for {
		var err error
		if dlq, err = readDLQ(s, "gd"); err != nil {
			t.Fatal(err)
		}
		in := map[string]bool{}
		for _, m := range dlq {
			in[m.MessageID] = true
		}
		missing = missing[:0]
		l.mu.Lock()
		for id, body := range l.bodies {
			if !in[id] {
				missing = append(missing, fmt.Sprintf("%s (%s)", id, body))
			}
		}
		l.mu.Unlock()
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		timer := time.NewTimer(250 * time.Millisecond) // the retries come due
		<-timer.C
	}
	if len(missing) > 0 {
		t.Errorf("%d acknowledged delayed publishes never reached the DLQ (lost or stuck), e.g. %v", len(missing), missing[:min(len(missing), 10)])
	}
	count := map[string]int{}
	for _, m := range dlq {
		if count[m.MessageID]++; count[m.MessageID] == 2 {
			t.Errorf("DLQ holds %s more than once", m.MessageID)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.early {
		if i == 10 {
			break
		}
		t.Errorf("delayed message early: %s", e)
	}
	return len(dlq), len(missing)
}

// stateLoad is the power-cut run's admin state: group gp (subscribed to
// td, never consumed) paused and resumed in turn, and redrive jobs of
// gd's DLQ. After every start, gp's paused state is the last one answered
// (or the one in flight at the cut) and every job answered 202 is there.
type stateLoad struct {
	r *chaosRun

	paused   bool // the last state answered
	inFlight bool // a change was sent and not answered: either state is right
	jobs     []string
	checked  int // states and jobs checked after a start
	bad      []string
}

func newStateLoad(t *testing.T, r *chaosRun, s *server) *stateLoad {
	t.Helper()
	want(t, s.do(t, "PUT", "/v1/groups/gp", map[string]any{
		"subscriptions": []map[string]any{{"topic": "td"}},
	}), http.StatusCreated)
	return &stateLoad{r: r}
}

// toggle pauses gp, or resumes it, on the serving process.
func (l *stateLoad) toggle() {
	s, _, ok := l.r.srvs.get(l.r.stop)
	if !ok {
		return
	}
	verb := "pause"
	if l.paused {
		verb = "resume"
	}
	l.inFlight = true
	resp, err := s.try("POST", "/v1/groups/gp/"+verb, nil)
	if err == nil && resp.Status == http.StatusOK {
		l.paused, l.inFlight = !l.paused, false
	}
}

// redrive starts a redrive job over gd's dead letters.
func (l *stateLoad) redrive() {
	s, gen, ok := l.r.srvs.get(l.r.stop)
	if !ok {
		return
	}
	// A filter that matches nothing: the job walks the whole DLQ and moves
	// nothing, so the DLQ checks stay exact (a job that moved dead letters
	// back would have the nacking consumer send them round again).
	resp, err := s.try("POST", "/v1/groups/gd/dlq/redrive", map[string]any{"filter": map[string]any{"reason": "no reason matches this"}, "ratePerSecond": 2000})
	switch {
	case err != nil:
	case resp.Status == http.StatusAccepted:
		var job struct{ ID string }
		if jsonUnmarshal(resp.Body, &job) == nil && job.ID != "" {
			l.jobs = append(l.jobs, job.ID)
		}
	case l.r.srvs.current(gen):
		l.r.unexpected("redrive job: %d %s", resp.Status, resp.Body)
	}
}

// finish waits (at most 30 s) until every job answered 202 is DONE.
func (l *stateLoad) finish(t *testing.T, s *server) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range l.jobs {
		for {
			r := s.do(t, "GET", "/v1/jobs/"+id, nil)
			var job struct{ State, Error string }
			if r.Status != 200 || jsonUnmarshal(r.Body, &job) != nil {
				l.bad = append(l.bad, fmt.Sprintf("redrive job %s at the end: %d %s", id, r.Status, r.Body))
				break
			}
			if job.State == "DONE" {
				break
			}
			if job.State != "RUNNING" || time.Now().After(deadline) {
				l.bad = append(l.bad, fmt.Sprintf("redrive job %s at the end: %s", id, r.Body))
				break
			}
			timer := time.NewTimer(100 * time.Millisecond) // the job works in the background
			<-timer.C
		}
	}
}

// check runs after a start, on it.
func (l *stateLoad) check(t *testing.T, s *server, cut int) {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/gp", nil)
	var g struct{ Paused bool }
	if r.Status != 200 || jsonUnmarshal(r.Body, &g) != nil {
		l.bad = append(l.bad, fmt.Sprintf("cut %d: group gp: %d %s", cut, r.Status, r.Body))
	} else if g.Paused != l.paused && !l.inFlight {
		l.bad = append(l.bad, fmt.Sprintf("cut %d: group gp paused=%v, the last answer before the cut said %v", cut, g.Paused, l.paused))
	} else {
		l.paused, l.inFlight = g.Paused, false
		l.checked++
	}
	for _, id := range l.jobs {
		r := s.do(t, "GET", "/v1/jobs/"+id, nil)
		if r.Status != 200 {
			l.bad = append(l.bad, fmt.Sprintf("cut %d: redrive job %s, answered 202 before the cut, is gone: %d %s", cut, id, r.Status, r.Body))
			continue
		}
		l.checked++
	}
}
