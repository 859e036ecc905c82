package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The change-chaos runner (issue 9): real mqgate processes on one data dir,
// publishers and consumers on goroutines, an admin loop changing topics and
// groups and restarting the server; everything recorded into a chHistory
// for checkChaos (chaos_check_test.go).

// chaosLevels are the delay levels of chaos runs: a nack with level 1 comes
// back after 200 ms.
const chaosLevels = "200ms 400ms 1s 2s 3s 4s 5s 6s 7s 8s 9s 10s"

// chaosServers is the current mqgate process; clients take it from here
// and wait for the next one when theirs goes away.
type chaosServers struct {
	mu  sync.Mutex
	srv *server
	gen int           // 1 for the first process
	up  chan struct{} // closed while srv serves
}

// get returns the serving process and its generation, waiting while a
// restart is under way; ok is false once stop is closed.
func (c *chaosServers) get(stop <-chan struct{}) (s *server, gen int, ok bool) {
	for {
		select {
		case <-stop:
			return nil, 0, false
		default:
		}
		c.mu.Lock()
		s, gen, up := c.srv, c.gen, c.up
		c.mu.Unlock()
		select {
		case <-up:
			return s, gen, true
		default:
		}
		select {
		case <-up:
		case <-stop:
			return nil, 0, false
		}
	}
}

// current reports whether gen is still the serving generation: an error
// from it is then no restart's doing.
func (c *chaosServers) current(gen int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.up:
		return c.gen == gen
	default:
		return false
	}
}

func (c *chaosServers) down() *server {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.up = make(chan struct{})
	return c.srv
}

func (c *chaosServers) set(s *server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.srv = s
	c.gen++
	close(c.up)
}

// chaosGroupSpec is a group of a run and how it is consumed.
type chaosGroupSpec struct {
	name       string
	orderly    bool
	broadcast  bool
	lastOffset bool
	filters    map[string]string // topic → initial filter
	consumers  []string          // BROADCASTING consumerIds; else len = pollers
	startAfter []time.Duration   // per consumer: first receive after this long
	scripted   []bool            // per consumer: first receive when the script says (appear)
	nackPct    int               // % of first deliveries nacked (delayLevel 1)
	slowPct    int               // % of receives whose messages are answered only after slowFor
	slowFor    time.Duration     // (a slow consumer: its leases sit below later acks)
	// streams: per consumer, true to consume over a consume stream
	// (chaos_stream_test.go) instead of receive; only in groups the
	// script never deletes (a stream's queued deliveries would otherwise
	// straddle two incarnations).
	streams []bool
}

// stream reports whether consumer idx consumes over a stream.
func (g *chaosGroupSpec) stream(idx int) bool { return idx < len(g.streams) && g.streams[idx] }

// chaosGroupState is a group's live incarnation. Receives and their acks
// hold mu for reading, group create and delete hold it for writing, so
// every delivery belongs to exactly one incarnation.
type chaosGroupState struct {
	spec    chaosGroupSpec
	mu      sync.RWMutex
	cur     *chGroup      // nil while deleted
	created chan struct{} // closed when cur is set
	lastOff bool          // consumeFrom of the next create
	filters map[string]string
	appear  []chan struct{} // per consumer: closed by the script (nil: not scripted)
	seen    []chan struct{} // per consumer: closed after its first receive answered
}

// chaosTopicState is a topic as the run knows it (guarded by gate).
type chaosTopicState struct {
	inc    int // current incarnation, 0 while deleted
	incs   int // incarnations so far
	queues int
	rec    int // index in hist.Topics of the current incarnation
}

type chaosRun struct {
	t    *testing.T
	dir  string
	srvs chaosServers
	seq  atomic.Int64
	u    atomic.Int64
	stop chan struct{} // closed: publishers and admin stop
	done chan struct{} // closed: consumers stop

	// hold, taken for writing, keeps every consumer from receiving (each
	// receive and its answers hold it for reading).
	hold sync.RWMutex

	// gate pauses publishing across changes whose meaning depends on
	// which messages came before them (see chaos_check_test.go).
	gate    sync.RWMutex
	topics  map[string]*chaosTopicState
	names   []string // topic names, in a stable order
	initial []string // topics created before the groups

	groups map[string]*chaosGroupState

	hmu  sync.Mutex
	hist chHistory

	errs      atomic.Int64 // unexpected client errors
	terms     int
	kills     int
	ops       []string
	unknownNo atomic.Int64

	// streamPublishers is how many publishers publish over publish
	// streams (beside run's REST publishers); streamStats counts what the
	// streams went through (chaos_stream_test.go).
	streamPublishers int
	streamStats      chaosStreamStats

	// powerCut, when set, replaces each kill -9: it cuts the power under
	// the old process and kills it (powercut_test.go); the restart then
	// starts the next process as usual.
	powerCut func(old *server)

	all []*server // every process of the run, by generation - 1
}

// serverLog returns the lines of generation gen's log that contain any
// of words (for a failure's diagnosis).
func (r *chaosRun) serverLog(gen int, words ...string) string {
	if gen < 1 || gen > len(r.all) {
		return ""
	}
	var b strings.Builder
	for line := range strings.Lines(r.all[gen-1].Logs()) {
		for _, w := range words {
			if strings.Contains(line, w) {
				b.WriteString(line)
				break
			}
		}
	}
	return b.String()
}

func (r *chaosRun) next() int64 { return r.seq.Add(1) }

// unexpected reports a client error that no restart explains (the first
// few in full).
func (r *chaosRun) unexpected(format string, args ...any) {
	if n := r.errs.Add(1); n <= 10 {
		r.t.Errorf(format, args...)
	}
}

// newChaosRun starts the first process; topics are every topic of the run
// with its first queue count, initial those created before the groups.
func newChaosRun(t *testing.T, topics map[string]int, initial []string, groups []chaosGroupSpec) *chaosRun {
	return newChaosRunIn(t, t.TempDir(), topics, initial, groups)
}

// newChaosRunIn is newChaosRun on the data dir dir.
func newChaosRunIn(t *testing.T, dir string, topics map[string]int, initial []string, groups []chaosGroupSpec) *chaosRun {
	t.Setenv("MQGATE_DELAY_LEVELS", chaosLevels)
	r := &chaosRun{t: t, dir: dir, stop: make(chan struct{}), done: make(chan struct{}),
		topics: map[string]*chaosTopicState{}, groups: map[string]*chaosGroupState{}, initial: initial}
	r.srvs.up = make(chan struct{})
	r.all = append(r.all, startServer(t, r.dir))
	r.srvs.set(r.all[0])
	for name, q := range topics {
		r.names = append(r.names, name)
		r.topics[name] = &chaosTopicState{queues: q}
	}
	slices.Sort(r.names)
	for _, g := range groups {
		st := &chaosGroupState{spec: g, created: make(chan struct{}), lastOff: g.lastOffset, filters: map[string]string{}}
		for i := range g.consumers {
			var ch chan struct{}
			if i < len(g.scripted) && g.scripted[i] {
				ch = make(chan struct{})
			}
			st.appear = append(st.appear, ch)
			st.seen = append(st.seen, make(chan struct{}))
		}
		for tp, f := range g.filters {
			st.filters[tp] = f
		}
		r.groups[g.name] = st
	}
	return r
}

// --- admin -----------------------------------------------------------------

// admin sends one admin request to the serving process; any failure is
// the test's (restarts are the admin's own, so the server is up).
func (r *chaosRun) admin(method, path string, body any, okStatus ...int) (*response, bool) {
	s, _, ok := r.srvs.get(r.done)
	if !ok {
		return nil, false
	}
	resp, err := s.try(method, path, body)
	if err != nil {
		r.t.Errorf("admin %s %s: %v", method, path, err)
		return nil, false
	}
	for _, st := range okStatus {
		if resp.Status == st {
			return resp, true
		}
	}
	r.t.Errorf("admin %s %s: %d %s", method, path, resp.Status, resp.Body)
	return resp, false
}

// createTopic creates (or re-creates) a topic; publishing pauses for it.
func (r *chaosRun) createTopic(name string) {
	r.gate.Lock()
	defer r.gate.Unlock()
	ts := r.topics[name]
	if ts.inc != 0 {
		return
	}
	if _, ok := r.admin("PUT", "/v1/topics/"+name, map[string]int{"queues": ts.queues}, http.StatusCreated); !ok {
		return
	}
	done := r.next()
	ts.incs++
	ts.inc = ts.incs
	r.hmu.Lock()
	ts.rec = len(r.hist.Topics)
	r.hist.Topics = append(r.hist.Topics, chTopic{Name: name, TInc: ts.inc, Created: done})
	r.hmu.Unlock()
	r.ops = append(r.ops, fmt.Sprintf("create %s#%d (%d queues)", name, ts.inc, ts.queues))
}

func (r *chaosRun) deleteTopic(name string) {
	r.gate.Lock()
	defer r.gate.Unlock()
	ts := r.topics[name]
	if ts.inc == 0 {
		return
	}
	if _, ok := r.admin("DELETE", "/v1/topics/"+name, nil, http.StatusNoContent); !ok {
		return
	}
	done, at := r.next(), time.Now()
	r.hmu.Lock()
	r.hist.Topics[ts.rec].Deleted, r.hist.Topics[ts.rec].DeletedTime = done, at
	r.hmu.Unlock()
	r.ops = append(r.ops, fmt.Sprintf("delete %s#%d", name, ts.inc))
	ts.inc = 0
	ts.queues = 2
}

// growTopic adds two queues while publishing goes on.
func (r *chaosRun) growTopic(name string) {
	r.gate.RLock()
	ts := r.topics[name]
	live, q := ts.inc != 0, ts.queues+2
	r.gate.RUnlock()
	if !live || q > 8 {
		return
	}
	if _, ok := r.admin("PUT", "/v1/topics/"+name, map[string]int{"queues": q}, http.StatusOK); !ok {
		return
	}
	r.gate.Lock()
	ts.queues = q
	r.gate.Unlock()
	r.ops = append(r.ops, fmt.Sprintf("grow %s to %d", name, q))
}

func (r *chaosRun) groupBody(st *chaosGroupState) map[string]any {
	var subs []map[string]any
	for _, tp := range r.names {
		if f, ok := st.filters[tp]; ok {
			subs = append(subs, map[string]any{"topic": tp, "filter": f})
		}
	}
	body := map[string]any{"subscriptions": subs, "invisibleSeconds": 10}
	if st.spec.orderly {
		body["consumeMode"] = "ORDERLY"
	}
	if st.spec.broadcast {
		body["messageModel"] = "BROADCASTING"
	}
	if st.lastOff {
		body["consumeFrom"] = map[string]any{"position": "LAST_OFFSET"}
	} else {
		body["consumeFrom"] = map[string]any{"position": "FIRST_OFFSET"}
	}
	return body
}

// createGroup creates a group's next incarnation: no receive of it runs,
// and publishing pauses.
func (r *chaosRun) createGroup(name string) {
	st := r.groups[name]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cur != nil {
		return
	}
	r.gate.Lock()
	defer r.gate.Unlock()
	sent := r.next()
	if _, ok := r.admin("PUT", "/v1/groups/"+name, r.groupBody(st), http.StatusCreated); !ok {
		return
	}
	done := r.next()
	g := &chGroup{Name: name, Orderly: st.spec.orderly, Broadcast: st.spec.broadcast, LastOffset: st.lastOff,
		CreateSent: sent, Created: done, FirstSeen: map[string]chFirstSeen{}}
	for _, tp := range r.names {
		if f, ok := st.filters[tp]; ok {
			g.Topics = append(g.Topics, tp)
			g.Filters = append(g.Filters, chFilter{Topic: tp, Filter: f, From: done})
		}
	}
	r.hmu.Lock()
	g.GInc = 1
	for _, old := range r.hist.Groups {
		if old.Name == name {
			g.GInc = old.GInc + 1
		}
	}
	r.hist.Groups = append(r.hist.Groups, g)
	r.hmu.Unlock()
	st.cur = g
	close(st.created)
	from := "FIRST_OFFSET"
	if st.lastOff {
		from = "LAST_OFFSET"
	}
	r.ops = append(r.ops, fmt.Sprintf("create group %s (%s)", g, from))
}

func (r *chaosRun) deleteGroup(name string) {
	st := r.groups[name]
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cur == nil {
		return
	}
	sent := r.next()
	if _, ok := r.admin("DELETE", "/v1/groups/"+name, nil, http.StatusNoContent); !ok {
		return
	}
	r.hmu.Lock()
	st.cur.Deleted = sent
	r.hmu.Unlock()
	r.ops = append(r.ops, fmt.Sprintf("delete group %s", st.cur))
	st.cur = nil
	st.created = make(chan struct{})
	st.lastOff = !st.lastOff // the next incarnation starts the other way
}

// setFilter changes one subscription's filter (publishing paused).
func (r *chaosRun) setFilter(name, topic, filter string) {
	st := r.groups[name]
	st.mu.RLock() // the incarnation stays; receives go on
	defer st.mu.RUnlock()
	if st.cur == nil {
		return
	}
	r.gate.Lock()
	defer r.gate.Unlock()
	st.filters[topic] = filter
	if _, ok := r.admin("PUT", "/v1/groups/"+name, r.groupBody(st), http.StatusOK); !ok {
		return
	}
	done := r.next()
	r.hmu.Lock()
	st.cur.Filters = append(st.cur.Filters, chFilter{Topic: topic, Filter: filter, From: done})
	r.hmu.Unlock()
	r.ops = append(r.ops, fmt.Sprintf("filter %s %s %q", st.cur, topic, filter))
}

// reset moves a CLUSTERING group's offsets of a live topic to LAST_OFFSET
// (publishing paused).
func (r *chaosRun) reset(name, topic string) {
	st := r.groups[name]
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.cur == nil {
		return
	}
	r.gate.Lock()
	defer r.gate.Unlock()
	if r.topics[topic].inc == 0 {
		return
	}
	if _, ok := r.admin("POST", "/v1/groups/"+name+"/offsets/reset", map[string]any{"topic": topic, "position": "LAST_OFFSET"}, http.StatusOK); !ok {
		return
	}
	done := r.next()
	r.hmu.Lock()
	st.cur.Resets = append(st.cur.Resets, chReset{Topic: topic, At: done})
	r.hmu.Unlock()
	r.ops = append(r.ops, fmt.Sprintf("reset %s %s LAST_OFFSET", st.cur, topic))
}

// restart stops the server (SIGTERM and wait, or SIGKILL) and starts it
// again on the same data dir; clients move to the new address.
func (r *chaosRun) restart(kill bool) {
	old := r.srvs.down()
	r.hmu.Lock()
	gen := r.srvs.gen
	r.hist.Restarts = append(r.hist.Restarts, chRestart{Gen: gen, Kill: kill, At: r.next(), Time: time.Now()})
	r.hmu.Unlock()
	if kill {
		if r.powerCut != nil {
			r.powerCut(old)
		} else {
			old.kill()
		}
		r.kills++
		r.ops = append(r.ops, fmt.Sprintf("kill -9 run %d", gen))
	} else {
		old.stop(r.t)
		r.terms++
		r.ops = append(r.ops, fmt.Sprintf("SIGTERM run %d", gen))
	}
	s := startServer(r.t, r.dir)
	r.all = append(r.all, s) // only the admin goroutine touches all
	r.srvs.set(s)
}

// appear lets a scripted consumer start and waits until its first
// receive answered (at most 30 s).
func (r *chaosRun) appear(group string, idx int) {
	st := r.groups[group]
	close(st.appear[idx])
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case <-st.seen[idx]:
		name := st.spec.name
		if idx < len(st.spec.consumers) && st.spec.consumers[idx] != "" {
			name += "/" + st.spec.consumers[idx]
		}
		r.ops = append(r.ops, "appear "+name)
	case <-timer.C:
		r.t.Errorf("consumer %d of %s: no receive answered within 30 s of appearing", idx, group)
	}
}

// leaseOne receives one message of a CLUSTERING group with a 60 s lease
// and never answers it: an open lease below later acks when the next
// restart comes (issue 9 item 8). It is recorded like any delivery.
func (r *chaosRun) leaseOne(group string) {
	st := r.groups[group]
	st.mu.RLock()
	defer st.mu.RUnlock()
	g := st.cur
	if g == nil {
		return
	}
	s, gen, ok := r.srvs.get(r.done)
	if !ok {
		return
	}
	for range 3 { // a long poll may find nothing ready
		sent, sentT := r.next(), time.Now()
		resp, err := s.try("POST", "/v1/groups/"+group+"/receive", map[string]any{"maxMessages": 1, "waitSeconds": 1, "invisibleSeconds": 60})
		if err != nil || resp.Status != http.StatusOK {
			r.t.Errorf("lease one of %s: %v %v", g, err, resp)
			return
		}
		var out struct {
			Messages []chaosMsg `json:"messages"`
		}
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			r.t.Errorf("lease one of %s: %v", g, err)
			return
		}
		if len(out.Messages) == 0 {
			continue
		}
		m := out.Messages[0]
		r.hmu.Lock()
		r.hist.Deliveries = append(r.hist.Deliveries, chDelivery{Group: group, GInc: g.GInc, U: parseChaosU(m.Body), Topic: m.Topic,
			Reconsume: m.ReconsumeTimes, RecvSent: sent, RecvSentT: sentT, RecvAt: r.next(), Gen: gen, MessageID: m.MessageID})
		r.hmu.Unlock()
		r.ops = append(r.ops, fmt.Sprintf("lease one of %s (u=%d)", g, parseChaosU(m.Body)))
		return
	}
}

// holdConsumers keeps every consumer from receiving until the returned
// func is called (their current receive and answers finish first).
func (r *chaosRun) holdConsumers() (release func()) {
	r.hold.Lock()
	return r.hold.Unlock
}

// pause is deliberate pacing inside a script step.
func (r *chaosRun) pause(d time.Duration) {
	timer := time.NewTimer(d)
	<-timer.C
}

// --- publishers ------------------------------------------------------------

// chaosBody is a message's identity: run-unique u, topic incarnation, key
// and per-key sequence number.
func chaosBody(u int64, topic string, inc int, key string, seq int) string {
	return fmt.Sprintf("chaos u=%d t=%s i=%d k=%s s=%d", u, topic, inc, key, seq)
}

// parseChaosU reads u back from a body; -1 when it has none.
func parseChaosU(body string) int64 {
	for f := range strings.FieldsSeq(body) {
		if v, ok := strings.CutPrefix(f, "u="); ok {
			if u, err := strconv.ParseInt(v, 10, 64); err == nil {
				return u
			}
		}
	}
	return -1
}

var chaosTags = []string{"a", "b", "c"}

// publisher p owns its keys, so each key's messages are published one
// request after another, in sequence order.
func (r *chaosRun) publisher(p int, every time.Duration, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(p)))
	seqs := map[chKey]int{}
	tick := time.NewTicker(every) // deliberate pacing
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		s, gen, ok := r.srvs.get(r.stop)
		if !ok {
			return
		}
		r.gate.RLock()
		var live []string
		for _, name := range r.names {
			if r.topics[name].inc != 0 {
				live = append(live, name)
			}
		}
		if len(live) == 0 {
			r.gate.RUnlock()
			continue
		}
		topic := live[rng.IntN(len(live))]
		inc := r.topics[topic].inc
		n := 1
		if rng.IntN(3) == 0 {
			n = 2 + rng.IntN(5)
		}
		pubs := make([]chPublish, n)
		msgs := make([]map[string]any, n)
		for j := range n {
			key := fmt.Sprintf("p%dk%d", p, rng.IntN(4))
			k := chKey{topic, inc, key}
			seqs[k]++
			u := r.u.Add(1)
			tag := chaosTags[rng.IntN(len(chaosTags))]
			pubs[j] = chPublish{U: u, Topic: topic, TInc: inc, Key: key, Seq: seqs[k], Tag: tag}
			msgs[j] = map[string]any{"body": chaosBody(u, topic, inc, key, seqs[k]), "tags": tag, "shardingKey": key,
				"properties": map[string]string{"u": strconv.FormatInt(u, 10), "k": key, "s": strconv.Itoa(seqs[k]), "i": strconv.Itoa(inc)}}
		}
		sent := r.next()
		var resp *response
		var err error
		if n == 1 {
			resp, err = s.try("POST", "/v1/topics/"+topic+"/messages", msgs[0])
		} else {
			resp, err = s.try("POST", "/v1/topics/"+topic+"/messages/batch", map[string]any{"messages": msgs})
		}
		done := r.next()
		status := chPubOK
		switch {
		case err != nil && strings.Contains(err.Error(), "connection refused"):
			status = chPubRejected // never reached a server
		case err != nil:
			status = chPubUnknown
		case resp.Status >= 500 && r.powerCut != nil && !r.srvs.current(gen):
			// Answered after the power went (a failed fsync): a real
			// power cut lets no answer out, so the outcome is unknown.
			status = chPubUnknown
		case resp.Status != http.StatusCreated:
			status = chPubRejected
		}
		for j := range pubs {
			pubs[j].Sent, pubs[j].Done, pubs[j].Status, pubs[j].QueueID = sent, done, status, -1
		}
		if status == chPubOK {
			var results []publishResult
			if n == 1 {
				var one publishResult
				if json.Unmarshal(resp.Body, &one) == nil {
					results = []publishResult{one}
				}
			} else {
				var br struct{ Results []publishResult }
				if json.Unmarshal(resp.Body, &br) == nil {
					results = br.Results
				}
			}
			for j, res := range results {
				if j < n && res.QueueID != nil && res.QueueOffset != nil {
					pubs[j].QueueID, pubs[j].Offset = *res.QueueID, *res.QueueOffset
				}
			}
		}
		r.hmu.Lock()
		r.hist.Pubs = append(r.hist.Pubs, pubs...)
		r.hmu.Unlock()
		r.gate.RUnlock()
		if status != chPubOK && r.srvs.current(gen) {
			if err != nil {
				r.unexpected("publisher %d: %v", p, err)
			} else {
				r.unexpected("publisher %d: %d %s", p, resp.Status, resp.Body)
			}
		}
	}
}

// --- consumers -------------------------------------------------------------

type chaosMsg struct {
	MessageID      string `json:"messageId"`
	Topic          string `json:"topic"`
	Body           string `json:"body"`
	ReconsumeTimes int    `json:"reconsumeTimes"`
	ReceiptHandle  string `json:"receiptHandle"`
}

// waitStart waits until consumer idx of st may start (startAfter, or the
// script's appear); false when the run ends first.
func (r *chaosRun) waitStart(st *chaosGroupState, idx int) bool {
	spec := st.spec
	if idx < len(spec.startAfter) && spec.startAfter[idx] > 0 {
		timer := time.NewTimer(spec.startAfter[idx]) // deliberate pacing: a consumerId appearing later
		select {
		case <-timer.C:
		case <-r.done:
			timer.Stop()
			return false
		}
	}
	if st.appear[idx] != nil {
		select {
		case <-st.appear[idx]:
		case <-r.done:
			return false
		}
	}
	return true
}

// consumer long-polls one group (as consumerId for BROADCASTING), acks
// what it gets and nacks nackPct % of first deliveries.
func (r *chaosRun) consumer(st *chaosGroupState, idx int, seed uint64) {
	spec := st.spec
	rng := rand.New(rand.NewPCG(seed, uint64(idx)+100))
	consumerID := ""
	if spec.broadcast {
		consumerID = spec.consumers[idx]
	}
	if !r.waitStart(st, idx) {
		return
	}
	seenOnce := false
	var attemptSeq int64 // BROADCASTING: the first receive ever sent by this consumerId (per incarnation)
	var attemptInc int
	for {
		s, gen, ok := r.srvs.get(r.done)
		if !ok {
			return
		}
		r.hold.RLock()
		st.mu.RLock()
		g := st.cur
		if g == nil {
			created := st.created
			st.mu.RUnlock()
			r.hold.RUnlock()
			select {
			case <-created:
				continue
			case <-r.done:
				return
			}
		}
		req := map[string]any{"maxMessages": 16, "waitSeconds": 1, "invisibleSeconds": 10}
		if consumerID != "" {
			req["consumerId"] = consumerID
		}
		sent, sentT := r.next(), time.Now()
		if attemptInc != g.GInc {
			attemptSeq, attemptInc = sent, g.GInc
		}
		resp, err := s.try("POST", "/v1/groups/"+spec.name+"/receive", req)
		if err != nil || resp.Status != http.StatusOK {
			st.mu.RUnlock()
			r.hold.RUnlock()
			if r.srvs.current(gen) {
				if err != nil {
					r.unexpected("receive %s: %v", g, err)
				} else {
					r.unexpected("receive %s: %d %s", g, resp.Status, resp.Body)
				}
				timer := time.NewTimer(100 * time.Millisecond) // no hot loop on a persistent error
				select {
				case <-timer.C:
				case <-r.done:
					timer.Stop()
					return
				}
			}
			continue
		}
		var out struct {
			Messages []chaosMsg `json:"messages"`
		}
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			st.mu.RUnlock()
			r.hold.RUnlock()
			r.unexpected("receive %s: %v: %s", g, err, resp.Body)
			continue
		}
		// Record before acking: a later delivery of the queue cannot be
		// recorded before this one (ORDERLY hands it out after the ack).
		r.hmu.Lock()
		if consumerID != "" {
			if _, ok := g.FirstSeen[consumerID]; !ok {
				g.FirstSeen[consumerID] = chFirstSeen{Sent: attemptSeq, Done: r.next()}
			}
		}
		if !seenOnce {
			seenOnce = true
			close(st.seen[idx])
		}
		base := len(r.hist.Deliveries)
		for _, m := range out.Messages {
			r.hist.Deliveries = append(r.hist.Deliveries, chDelivery{Group: spec.name, GInc: g.GInc, Consumer: consumerID,
				U: parseChaosU(m.Body), Topic: m.Topic, Reconsume: m.ReconsumeTimes, MessageID: m.MessageID,
				RecvSent: sent, RecvSentT: sentT, RecvAt: r.next(), Gen: gen})
		}
		r.hmu.Unlock()
		if len(out.Messages) > 0 && rng.IntN(100) < spec.slowPct {
			timer := time.NewTimer(spec.slowFor) // deliberate: a slow consumer holding its leases
			select {
			case <-timer.C:
			case <-r.done:
				timer.Stop()
			}
		}
		var acks, nacks []string
		var ackIdx, nackIdx []int
		for i, m := range out.Messages {
			if !spec.broadcast && m.ReconsumeTimes == 0 && rng.IntN(100) < spec.nackPct {
				nacks, nackIdx = append(nacks, m.ReceiptHandle), append(nackIdx, base+i)
			} else {
				acks, ackIdx = append(acks, m.ReceiptHandle), append(ackIdx, base+i)
			}
		}
		if len(acks) > 0 {
			body := map[string]any{"receiptHandles": acks}
			res, err := answer(s, spec.name, "ack", body)
			at := time.Now()
			r.hmu.Lock()
			for i, status := range res {
				if status == "ok" {
					d := &r.hist.Deliveries[ackIdx[i]]
					d.Acked, d.AckGen, d.AckTime = true, gen, at
				}
			}
			r.hmu.Unlock()
			if err != nil && r.srvs.current(gen) {
				r.unexpected("ack %s: %v", g, err)
			}
		}
		if len(nacks) > 0 {
			res, err := answer(s, spec.name, "nack", map[string]any{"receiptHandles": nacks, "delayLevel": 1})
			r.hmu.Lock()
			for i, status := range res {
				if status == "ok" {
					r.hist.Deliveries[nackIdx[i]].Nacked = true
				}
			}
			r.hmu.Unlock()
			if err != nil && r.srvs.current(gen) {
				r.unexpected("nack %s: %v", g, err)
			}
		}
		st.mu.RUnlock()
		r.hold.RUnlock()
	}
}

// snapshot checks a copy of the history so far.
func (r *chaosRun) check() *chReport {
	r.hmu.Lock()
	h := chHistory{
		Topics:     append([]chTopic(nil), r.hist.Topics...),
		Pubs:       append([]chPublish(nil), r.hist.Pubs...),
		Restarts:   append([]chRestart(nil), r.hist.Restarts...),
		Deliveries: append([]chDelivery(nil), r.hist.Deliveries...),
		KillAckAge: r.hist.KillAckAge,
	}
	for _, g := range r.hist.Groups {
		c := *g
		c.Filters = append([]chFilter(nil), g.Filters...)
		c.Resets = append([]chReset(nil), g.Resets...)
		c.FirstSeen = map[string]chFirstSeen{}
		for k, v := range g.FirstSeen {
			c.FirstSeen[k] = v
		}
		h.Groups = append(h.Groups, &c)
	}
	r.hmu.Unlock()
	return checkChaos(&h)
}

// chaosOp is one step of an admin script.
type chaosOp func(r *chaosRun)

// run starts publishers and consumers, plays the script with pace between
// steps, stops publishing, lets the consumers settle until nothing is
// missing (or settle passes), stops them and returns the final report.
func (r *chaosRun) run(seed uint64, publishers int, pubEvery time.Duration, pace func(rng *rand.Rand) time.Duration, script []chaosOp, settle time.Duration) *chReport {
	t := r.t
	for _, name := range r.initial {
		r.createTopic(name)
	}
	var cwg, pwg sync.WaitGroup
	for _, st := range r.groups {
		r.createGroup(st.spec.name)
		n := len(st.spec.consumers)
		for i := range n {
			if st.spec.stream(i) {
				cwg.Go(func() { r.streamConsumer(st, i, seed) })
			} else {
				cwg.Go(func() { r.consumer(st, i, seed) })
			}
		}
	}
	for p := range publishers {
		pwg.Go(func() { r.publisher(p, pubEvery, seed) })
	}
	for p := range r.streamPublishers {
		pwg.Go(func() { r.streamPublisher(publishers+p, pubEvery, seed) })
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, op := range script {
		timer := time.NewTimer(pace(rng)) // deliberate pacing of the chaos schedule
		<-timer.C
		n := len(r.ops)
		op(r)
		for i := n; i < len(r.ops); i++ { // when, for reading violations against the script
			r.ops[i] += fmt.Sprintf(" @%d", r.seq.Load())
		}
		if t.Failed() {
			break
		}
	}
	timer := time.NewTimer(pace(rng))
	<-timer.C
	close(r.stop)
	pwg.Wait()
	deadline := time.Now().Add(settle)
	tick := time.NewTicker(250 * time.Millisecond)
	for time.Now().Before(deadline) && !t.Failed() {
		if rep := r.check(); rep.Missing == 0 {
			break
		}
		<-tick.C
	}
	tick.Stop()
	// One more second of receives: what comes now would be a redelivery.
	timer = time.NewTimer(time.Second)
	<-timer.C
	close(r.done)
	cwg.Wait()
	return r.check()
}
