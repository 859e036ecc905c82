package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestJetStreamFaults is the Jepsen-style run of issue 26 ("proven under
// faults"): a real 3-node nats-server cluster (separate processes,
// sync_interval always, R3 streams) with its routes through in-test TCP
// proxies, two real mqgate gateways (--backend jetstream) with load on
// both, and a nemesis that per round kills -9 the topic stream's leader,
// SIGSTOPs the leader until another node is elected (then SIGCONT),
// isolates one node by cutting its routes both ways, kills -9 a gateway
// (and starts it again) and restarts both gateways with SIGTERM, one
// after the other. The checker (jfRun.check) then asserts: no
// acknowledged publish lost, no ORDERLY per-key inversion (in any window),
// exactly one DLQ copy per dead-lettered message, no idempotency key
// stored twice, no 500 (every 5xx a 503 with Retry-After), a 5xx only to
// a request sent while a fault lasts or within jfGrace after it ended, and
// duplicates only where a delivery was not acknowledged "ok".
//
// One round runs in `make test` (about a minute); MQGATE_JSFAULTS_ROUNDS=N
// runs N (the first in a fixed order, the others shuffled by the seed,
// MQGATE_JSFAULTS_SEED to replay one).
func TestJetStreamFaults(t *testing.T) {
	rounds := 1
	if v := os.Getenv("MQGATE_JSFAULTS_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("MQGATE_JSFAULTS_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("MQGATE_JSFAULTS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("MQGATE_JSFAULTS_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d (MQGATE_JSFAULTS_SEED=%d replays the order), %d round(s)", seed, seed, rounds)

	cl := startNATSProcs(t, 3)
	r := newJFRun(t, cl, seed)
	r.setup()
	r.startLoad()
	r.nemesis(rounds)
	rep := r.finish()
	t.Log(rep.summary())
	if msg := rep.failure(); msg != "" || rep.dupStale[jfConc]+rep.dupStale[jfOrd] > 0 {
		keepLogs(t, cl, r, seed)
		if msg != "" {
			t.Fatal(msg)
		}
	}
}

const (
	jfTopic  = "jfaults"
	jfStream = "MQ_" + jfTopic
	jfQueues = 8
	jfConc   = "jfconc"
	jfOrd    = "jford"
)

var jfGroups = []string{jfConc, jfOrd}

// jfBody is what every published body carries, for the checker.
type jfBody struct {
	Key    string `json:"k"`           // sharding key
	Seq    int    `json:"s"`           // per-key sequence (ordered keys)
	Poison bool   `json:"p,omitempty"` // consumers dead-letter it (nack -1)
	Idem   string `json:"i,omitempty"` // the Idempotency-Key it was sent with
}

// jfRun is one run: the cluster, the gateways and the history.
type jfRun struct {
	t    *testing.T
	cl   *natsProcCluster
	rng  *rand.Rand
	http *http.Client

	flags  []string
	gwMu   sync.Mutex
	gws    [2]*server
	allGWs []*server // every process started, for their logs

	window atomic.Value // jfWindow: the current window
	// faultBegan is when the latest fault began (unix ns): a request sent
	// before it and answered after it overlapped that fault, whatever the
	// window it was sent in.
	faultBegan atomic.Int64
	stop       chan struct{}
	pubs       sync.WaitGroup
	cons       sync.WaitGroup
	stopC      chan struct{}

	mu          sync.Mutex
	published   map[string]jfBody            // message id → body, answered 201
	idemIDs     map[string]map[string]bool   // idempotency key → ids answered or delivered
	delivered   map[string]map[string]int    // group → id → deliveries
	settled     map[string]map[string]string // group → id → "ack" / "nack" answered ok
	unsure      map[string]map[string]string // group → id → the last settle answer that was not "ok"
	dupAfterOK  map[string]int               // group → deliveries of an id already settled ok
	dupAfterOKs []string                     // those outside stale-leader windows: a failure
	dupStale    map[string]int               // group → those inside one (at-least-once allows them)
	settledIn   map[string]string            // "group id" → the window its ok settle was sent in
	maxSeq      map[string]int               // ORDERLY: key → highest seq delivered
	poisonIDs   map[string]bool              // ids delivered with a poison body
	inversions  []string                     // ORDERLY: a key's message after a later one, in any window
	answers     map[string]map[int]int       // window → status ≥ 500 → count
	late5xx     []string                     // 5xx to requests sent after a fault and its grace
	// 5xx to requests sent and answered before the first fault: the
	// set-up's warm-up makes the cluster ready, so each is a failure.
	startup5xx   []string
	overlapped   int               // 5xx to requests sent in a quiet window and answered after a fault began
	graced       int               // 5xx to requests sent after a fault ended
	latestGraced time.Duration     // the latest of them, after its fault ended
	noRetry      []string          // 503 answers without Retry-After
	reqWindow    map[string]string // request id of a 5xx → its window
	five00       []string          // 500 answers (op, window, body)
	neterrs      map[string]int    // window → requests with no answer
	wrong        []string          // answers that break a rule outright (422 on a retry, …)
	windows      []string          // in order
	faults       []string          // what the nemesis did
}

func newJFRun(t *testing.T, cl *natsProcCluster, seed uint64) *jfRun {
	r := &jfRun{
		t: t, cl: cl, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		http:  &http.Client{Timeout: 20 * time.Second},
		stop:  make(chan struct{}),
		stopC: make(chan struct{}),

		published:  map[string]jfBody{},
		idemIDs:    map[string]map[string]bool{},
		delivered:  map[string]map[string]int{},
		settled:    map[string]map[string]string{},
		unsure:     map[string]map[string]string{},
		reqWindow:  map[string]string{},
		dupAfterOK: map[string]int{},
		maxSeq:     map[string]int{},
		poisonIDs:  map[string]bool{},
		settledIn:  map[string]string{},
		dupStale:   map[string]int{},
		answers:    map[string]map[int]int{},
		neterrs:    map[string]int{},
	}
	for _, g := range jfGroups {
		r.delivered[g] = map[string]int{}
		r.settled[g] = map[string]string{}
		r.unsure[g] = map[string]string{}
	}
	if cl == nil { // the checker's own test: no cluster, no gateways
		r.setWindow("steady")
		return r
	}
	keyFile := filepath.Join(t.TempDir(), "handle.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.flags = []string{"--backend", "jetstream", "--nats-url", cl.URLs(), "--nats-replicas", "3",
		"--handle-key-file", keyFile, "--nats-max-batch", "50000", "--access-log=false",
		// Debug: a failing run's kept gateway logs show every ORDERLY
		// claim move (backend/jetstream/orderclaim.go).
		"--log-level", "debug"}
	r.setWindow("steady")
	return r
}

// jfWindow is a stretch of the run the nemesis names: a fault lasting
// (a node killed or restarting, SIGSTOPped, cut off, or back and not yet
// caught up; a gateway killed or restarting) or none ("steady", "rN
// after …", "drain").
type jfWindow struct {
	name  string
	fault bool
	// ended is when the last fault ended (zero before the first).
	ended time.Time
}

// jfGrace is how long after a fault ends a 5xx to a request sent then
// still counts to it: the cluster is healthy again only once its groups
// have leaders that caught up, and a request sent meanwhile can wait out
// one JetStream request timeout (the gateway's 5 s) and fail. Runs on the
// loaded 2-core VM saw 503s to requests sent up to 5.6 s after a heal.
const jfGrace = 6 * time.Second

// jfFaultWindow: the window's name says a fault is under way.
func jfFaultWindow(name string) bool {
	return name != "steady" && name != "drain" && !strings.Contains(name, " after ")
}

func (r *jfRun) setWindow(w string) {
	nw := jfWindow{name: w, fault: jfFaultWindow(w)}
	if old, ok := r.window.Load().(jfWindow); ok {
		nw.ended = old.ended
		if old.fault && !nw.fault {
			nw.ended = time.Now()
		}
	}
	if nw.fault {
		r.faultBegan.Store(time.Now().UnixNano())
	}
	r.window.Store(nw)
	r.mu.Lock()
	r.windows = append(r.windows, w)
	r.mu.Unlock()
}

func (r *jfRun) curWindow() string { return r.window.Load().(jfWindow).name }

// fiveXXAllowed reports whether a 5xx to a request sent in win, after
// the first fault began, is allowed: during a fault, or within jfGrace
// after one ended.
func fiveXXAllowed(win jfWindow, sent time.Time) bool {
	return win.fault || !win.ended.IsZero() && sent.Sub(win.ended) <= jfGrace
}

func (r *jfRun) gw(i int) *server {
	r.gwMu.Lock()
	defer r.gwMu.Unlock()
	return r.gws[i%2]
}

func (r *jfRun) setGW(i int, s *server) {
	r.gwMu.Lock()
	r.gws[i] = s
	r.allGWs = append(r.allGWs, s)
	r.gwMu.Unlock()
}

// call sends one request to gateway i and records 5xx answers and
// requests that got none by fault window.
func (r *jfRun) call(i int, op, method, path string, body any, hdr ...string) (*response, error) {
	s := r.gw(i)
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			r.t.Error(err)
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k := 0; k+1 < len(hdr); k += 2 {
		req.Header.Set(hdr[k], hdr[k+1])
	}
	win := r.window.Load().(jfWindow)
	w, sent := win.name, time.Now()
	resp, err := r.http.Do(req)
	if err != nil {
		r.mu.Lock()
		r.neterrs[w]++
		r.mu.Unlock()
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.mu.Lock()
		r.neterrs[w]++
		r.mu.Unlock()
		return nil, err
	}
	out := &response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if out.Status >= 500 {
		// A request a fault overlapped belongs to the fault: one sent in
		// the last seconds of a quiet window can wait out a JetStream
		// request timeout (5 s) that the next fault caused.
		overlapped := r.faultBegan.Load() > sent.UnixNano()
		r.mu.Lock()
		if r.answers[w] == nil {
			r.answers[w] = map[int]int{}
		}
		r.answers[w][out.Status]++
		r.reqWindow[out.Header.Get("X-Request-Id")] = w
		switch {
		case win.fault:
		case overlapped:
			r.overlapped++
		case win.ended.IsZero():
			r.startup5xx = append(r.startup5xx, fmt.Sprintf("%s %d in %q: %.200s", op, out.Status, w, b))
		case fiveXXAllowed(win, sent):
			r.graced++
			r.latestGraced = max(r.latestGraced, sent.Sub(win.ended))
		default:
			r.late5xx = append(r.late5xx, fmt.Sprintf("%s %d in %q, sent %v after the last fault ended: %.200s",
				op, out.Status, w, sent.Sub(win.ended).Round(10*time.Millisecond), b))
		}
		if out.Status == 500 {
			r.five00 = append(r.five00, fmt.Sprintf("%s in %q: %s", op, w, b))
		}
		if out.Status == 503 && out.Header.Get("Retry-After") == "" {
			r.noRetry = append(r.noRetry, fmt.Sprintf("%s in %q: %s", op, w, b))
		}
		r.mu.Unlock()
	}
	return out, nil
}

func (r *jfRun) setup() {
	t := r.t
	r.setGW(0, startServer(t, t.TempDir(), r.flags...))
	r.setGW(1, startServer(t, t.TempDir(), r.flags...))
	want(t, r.gw(0).do(t, "PUT", "/v1/topics/"+jfTopic, map[string]any{"queues": jfQueues}), 201)
	for _, g := range []struct{ name, mode string }{{jfConc, "CONCURRENTLY"}, {jfOrd, "ORDERLY"}} {
		want(t, r.gw(1).do(t, "PUT", "/v1/groups/"+g.name, map[string]any{
			"subscriptions": []map[string]any{{"topic": jfTopic}},
			"consumeMode":   g.mode, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
			"maxReconsumeTimes": 16, "invisibleSeconds": 5,
		}), 201)
	}
	// Warm-up, before the load and the "5xx only while a fault lasts"
	// rule start: both gateways receive from both groups once (their 18
	// R3 consumers made and led), bounded. Without it, the first
	// seconds answered 503s as the cluster still elected their leaders.
	checkFor(t, 60*time.Second, 200*time.Millisecond, func() error {
		for i := range 2 {
			for _, g := range jfGroups {
				resp := r.gw(i).do(t, "POST", "/v1/groups/"+g+"/receive", map[string]any{"maxMessages": 1, "waitSeconds": 0})
				if resp.Status != 200 {
					return fmt.Errorf("gateway %d, receive %s: %d %s", i, g, resp.Status, resp.Body)
				}
			}
		}
		return nil
	})
}

// sleep waits d or until the run stops; false when it stopped.
func (r *jfRun) sleep(stop <-chan struct{}, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-stop:
		return false
	case <-tm.C:
		return true
	}
}

func (r *jfRun) startLoad() {
	// Ordered publishers: each owns 3 keys and publishes their sequences
	// in order, every message with an Idempotency-Key, retried (on the
	// other gateway) until answered; one in 8 is poison.
	for p := range 4 {
		r.pubs.Add(1)
		go func() {
			defer r.pubs.Done()
			r.orderedPublisher(p)
		}()
	}
	// Shared keys: the same request sent at once to both gateways.
	r.pubs.Add(1)
	go func() {
		defer r.pubs.Done()
		r.sharedKeyPublisher()
	}()
	// Plain publishes without a key: an unanswered one is not retried.
	r.pubs.Add(1)
	go func() {
		defer r.pubs.Done()
		r.plainPublisher()
	}()
	for _, g := range jfGroups {
		for i := range 2 {
			for c := range 2 {
				r.cons.Add(1)
				go func() {
					defer r.cons.Done()
					r.consumer(g, i, fmt.Sprintf("%s-gw%d-%d", g, i, c))
				}()
			}
		}
	}
}

// publish sends one message until it is answered 201 (retrying 5xx, 409
// and no answer when idem is set) and records the answer.
func (r *jfRun) publish(start int, b jfBody, idem string, retry bool) {
	raw, _ := json.Marshal(b)
	body := map[string]any{"body": string(raw), "shardingKey": b.Key}
	var hdr []string
	if idem != "" {
		hdr = []string{"Idempotency-Key", idem}
	}
	for attempt := 0; ; attempt++ {
		resp, err := r.call(start+attempt, "publish", "POST", "/v1/topics/"+jfTopic+"/messages", body, hdr...)
		switch {
		case err == nil && resp.Status == 201:
			var res struct {
				MessageID string `json:"messageId"`
			}
			if json.Unmarshal(resp.Body, &res) != nil || res.MessageID == "" {
				r.addWrong("publish 201 without a messageId: %s", resp.Body)
				return
			}
			r.mu.Lock()
			r.published[res.MessageID] = b
			if idem != "" {
				if r.idemIDs[idem] == nil {
					r.idemIDs[idem] = map[string]bool{}
				}
				r.idemIDs[idem][res.MessageID] = true
			}
			r.mu.Unlock()
			return
		case err == nil && resp.Status != 409 && resp.Status < 500:
			r.addWrong("publish %s attempt %d: %d %s", idem, attempt, resp.Status, resp.Body)
			return
		}
		// A publish with a key is retried to an answer (its order must
		// be known), also after the stop; boundedly, so a cluster that
		// never recovers fails the run instead of hanging it.
		if !retry {
			return
		}
		if attempt == 600 {
			r.addWrong("publish %s: no 201 after %d attempts", idem, attempt)
			return
		}
		r.sleep(nil, 50*time.Millisecond)
	}
}

func (r *jfRun) addWrong(format string, args ...any) {
	r.mu.Lock()
	r.wrong = append(r.wrong, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *jfRun) orderedPublisher(p int) {
	seqs := map[string]int{}
	for n := 0; ; n++ {
		select {
		case <-r.stop:
			return
		default:
		}
		key := fmt.Sprintf("o%d-%d", p, n%3)
		seqs[key]++
		b := jfBody{Key: key, Seq: seqs[key], Poison: (n*7+p)%8 == 0}
		b.Idem = fmt.Sprintf("%s-%d", key, b.Seq)
		r.publish(p+n, b, b.Idem, true)
		if !r.sleep(r.stop, 60*time.Millisecond) {
			return
		}
	}
}

func (r *jfRun) sharedKeyPublisher() {
	for n := 0; ; n++ {
		if !r.sleep(r.stop, 150*time.Millisecond) {
			return
		}
		b := jfBody{Key: fmt.Sprintf("s-%d", n), Idem: fmt.Sprintf("s-%d", n), Poison: n%5 == 0}
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { r.publish(i, b, b.Idem, true) })
		}
		wg.Wait()
	}
}

func (r *jfRun) plainPublisher() {
	for n := 0; ; n++ {
		if !r.sleep(r.stop, 40*time.Millisecond) {
			return
		}
		r.publish(n, jfBody{Key: fmt.Sprintf("u-%d", n%16), Poison: n%10 == 0}, "", false)
	}
}

// consumer receives from gateway i, acks every message and dead-letters
// (nack -1) the poison ones, recording each delivery before settling it.
func (r *jfRun) consumer(group string, i int, name string) {
	for {
		select {
		case <-r.stopC:
			return
		default:
		}
		resp, err := r.call(i, "receive", "POST", "/v1/groups/"+group+"/receive",
			map[string]any{"maxMessages": 16, "waitSeconds": 1})
		if err != nil || resp.Status != 200 {
			if err == nil && resp.Status < 500 {
				r.addWrong("receive %s: %d %s", group, resp.Status, resp.Body)
			}
			if !r.sleep(r.stopC, 100*time.Millisecond) {
				return
			}
			continue
		}
		var out struct {
			Messages []delivered `json:"messages"`
		}
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			r.addWrong("receive %s: %v", group, err)
			continue
		}
		var acks, nacks []string
		ids := map[string]string{}
		for _, m := range out.Messages {
			var b jfBody
			if m.Body == nil || json.Unmarshal([]byte(*m.Body), &b) != nil {
				r.addWrong("%s: message %s with body %v", group, m.MessageID, m.Body)
				continue
			}
			r.recordDelivery(group, m.MessageID, b, m.ReconsumeTimes)
			ids[m.ReceiptHandle] = m.MessageID
			if b.Poison {
				nacks = append(nacks, m.ReceiptHandle)
			} else {
				acks = append(acks, m.ReceiptHandle)
			}
		}
		r.settle(i, group, "ack", acks, ids, nil)
		r.settle(i, group, "nack", nacks, ids, map[string]any{"delayLevel": -1, "reason": "poison"})
	}
}

func (r *jfRun) recordDelivery(group, id string, b jfBody, reconsume int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delivered[group][id]++
	if b.Poison {
		r.poisonIDs[id] = true
	}
	if v := r.settled[group][id]; v != "" {
		r.dupAfterOK[group]++
		if w := r.curWindow(); jfStaleLeaderWindow(w) {
			r.dupStale[group]++
		} else {
			r.dupAfterOKs = append(r.dupAfterOKs, fmt.Sprintf("%s: %s %+v delivered again (delivery %d, reconsumeTimes %d) in %q after a %s sent in %q answered ok",
				group, id, b, r.delivered[group][id], reconsume, w, v, r.settledIn[group+" "+id]))
		}
	}
	r.recordKeyed(group, id, b, reconsume)
}

// recordKeyed records the idempotency key and the ORDERLY sequence of a
// delivery (r.mu held).
func (r *jfRun) recordKeyed(group, id string, b jfBody, reconsume int) {
	if b.Idem != "" {
		if r.idemIDs[b.Idem] == nil {
			r.idemIDs[b.Idem] = map[string]bool{}
		}
		r.idemIDs[b.Idem][id] = true
	}
	if group == jfOrd && b.Seq > 0 {
		if b.Seq < r.maxSeq[b.Key] {
			// Also in a fault window: a stale consumer leader's
			// redelivery is fenced off (backend/jetstream/orderclaim.go).
			r.inversions = append(r.inversions, fmt.Sprintf("key %s: seq %d (id %s, delivery %d, reconsumeTimes %d, earlier settle %q sent in %q) delivered after seq %d, in %q",
				b.Key, b.Seq, id, r.delivered[group][id], reconsume, r.settled[group][id], r.settledIn[group+" "+id], r.maxSeq[b.Key], r.curWindow()))
		} else {
			r.maxSeq[b.Key] = b.Seq
		}
	}
}

func (r *jfRun) settle(i int, group, verb string, handles []string, ids map[string]string, extra map[string]any) {
	if len(handles) == 0 {
		return
	}
	body := map[string]any{"receiptHandles": handles}
	for k, v := range extra {
		body[k] = v
	}
	w := r.curWindow()
	resp, err := r.call(i, verb, "POST", "/v1/groups/"+group+"/"+verb, body)
	if err != nil || resp.Status != 200 {
		// Unknown whether it took effect: if not, the leases run out
		// and the messages come again.
		why := fmt.Sprintf("%s: %v", verb, err)
		if err == nil {
			why = fmt.Sprintf("%s: %d", verb, resp.Status)
		}
		r.mu.Lock()
		for _, h := range handles {
			r.unsure[group][ids[h]] = why
		}
		r.mu.Unlock()
		return
	}
	var res handleResults
	if err := json.Unmarshal(resp.Body, &res); err != nil || len(res.Results) != len(handles) {
		r.addWrong("%s %s: %s", verb, group, resp.Body)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, x := range res.Results {
		if x.Status == "ok" {
			r.settled[group][ids[handles[k]]] = verb
			r.settledIn[group+" "+ids[handles[k]]] = w
		} else {
			r.unsure[group][ids[handles[k]]] = verb + ": " + x.Status
		}
	}
}

// nemesis runs the faults, round after round, each in its own window.
func (r *jfRun) nemesis(rounds int) {
	ops := []struct {
		name string
		fn   func(round int)
	}{
		{"kill-leader", r.killLeader},
		{"stop-leader", r.stopLeader},
		{"partition", r.partitionOne},
		{"kill-gateway", r.killGateway},
		{"rolling-restart", r.rollingRestart},
	}
	r.quiet("steady", 3*time.Second)
	for round := range rounds {
		order := []int{0, 1, 2, 3, 4}
		if round > 0 {
			r.rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		}
		for _, k := range order {
			ops[k].fn(round)
			r.quiet(fmt.Sprintf("r%d after %s", round, ops[k].name), 3*time.Second)
		}
	}
}

func (r *jfRun) quiet(w string, d time.Duration) {
	r.setWindow(w)
	r.sleep(nil, d)
}

func (r *jfRun) fault(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.t.Log("nemesis: " + msg)
	r.mu.Lock()
	r.faults = append(r.faults, msg)
	r.mu.Unlock()
}

// leader finds the topic stream's leader (retrying through elections).
func (r *jfRun) leader(except ...string) *natsProc {
	var name string
	checkFor(r.t, 30*time.Second, 100*time.Millisecond, func() error {
		var err error
		name, err = r.cl.streamLeader(jfStream, except...)
		if err == nil && slices.Contains(except, name) {
			return fmt.Errorf("leader still %s", name)
		}
		return err
	})
	return r.cl.node(name)
}

func (r *jfRun) killLeader(round int) {
	l := r.leader()
	r.setWindow(fmt.Sprintf("r%d kill -9 leader %s", round, l.name))
	r.fault("kill -9 stream leader %s", l.name)
	l.kill()
	r.sleep(nil, 4*time.Second)
	r.setWindow(fmt.Sprintf("r%d restart %s", round, l.name))
	l.start()
	r.fault("%s started again", l.name)
	r.caughtUp(l.name)
}

func (r *jfRun) stopLeader(round int) {
	l := r.leader()
	r.setWindow(fmt.Sprintf("r%d SIGSTOP leader %s", round, l.name))
	t0 := time.Now()
	l.signal(syscall.SIGSTOP)
	// Beyond the election timeout: until another node leads the stream.
	next := r.leader(l.name)
	r.sleep(nil, time.Second)
	l.signal(syscall.SIGCONT)
	r.fault("SIGSTOP stream leader %s for %v (%s elected), SIGCONT", l.name, time.Since(t0).Round(100*time.Millisecond), next.name)
	r.setWindow(fmt.Sprintf("r%d catching up %s", round, l.name))
	r.caughtUp(l.name)
}

func (r *jfRun) partitionOne(round int) {
	l := r.leader()
	victim := l
	if round%2 == 1 { // odd rounds isolate a follower
		victim = r.cl.nodes[(r.cl.index(l.name)+1+round/2%2)%len(r.cl.nodes)]
	}
	r.setWindow(fmt.Sprintf("r%d partition %s", round, victim.name))
	r.fault("partition: %s cut off its peers (leader was %s)", victim.name, l.name)
	r.cl.partition(r.cl.index(victim.name), true)
	r.sleep(nil, 8*time.Second)
	r.setWindow(fmt.Sprintf("r%d catching up %s", round, victim.name))
	r.cl.partition(r.cl.index(victim.name), false)
	r.fault("partition of %s healed", victim.name)
	r.caughtUp(victim.name)
}

// jfStreams are the streams every request of the run needs: the topic's,
// the backend's buckets and the groups' DLQs.
var jfStreams = []string{jfStream, "KV_MQGATE_GROUPS", "KV_MQGATE_LEASES", "KV_MQGATE_ORDER_CLAIMS", "MQD_" + jfConc, "MQD_" + jfOrd}

// caughtUp waits (bounded) until each of jfStreams has a leader and both
// other replicas current: a node back from a kill, a SIGSTOP or a
// partition is part of the fault until then.
func (r *jfRun) caughtUp(node string) {
	t0 := time.Now()
	deadline := t0.Add(30 * time.Second)
	for _, st := range jfStreams {
		for {
			err := r.cl.streamCurrent(st)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				r.fault("%s: %s not caught up after %v: %v", node, st, time.Since(t0).Round(100*time.Millisecond), err)
				return
			}
			r.sleep(nil, 100*time.Millisecond)
		}
	}
	r.fault("%s caught up after %v", node, time.Since(t0).Round(100*time.Millisecond))
}

func (r *jfRun) killGateway(round int) {
	i := round % 2
	r.setWindow(fmt.Sprintf("r%d kill -9 gw%d", round, i))
	r.fault("kill -9 gateway %d", i)
	r.gw(i).kill()
	r.setGW(i, startServer(r.t, r.t.TempDir(), r.flags...))
}

func (r *jfRun) rollingRestart(round int) {
	r.setWindow(fmt.Sprintf("r%d rolling restart", round))
	for i := range 2 {
		r.fault("SIGTERM gateway %d, start again", i)
		r.gw(i).stop(r.t)
		r.setGW(i, startServer(r.t, r.t.TempDir(), r.flags...))
		r.sleep(nil, time.Second)
	}
}

// finish stops the publishers, lets the consumers drain what was
// published (bounded), stops them and checks the history.
func (r *jfRun) finish() *jfReport {
	r.setWindow("drain")
	close(r.stop)
	r.pubs.Wait()
	// Drained: every published id settled ok in every group, or at least
	// delivered there with both groups idle (nothing pending, nothing
	// leased: an ack or nack whose answer was lost took effect).
	// Bounded: 40 s, and up to 120 s while deliveries still progress (an
	// ORDERLY backlog built up during the faults drains one message per
	// queue at a time; several rounds on a loaded machine outgrew 40 s).
	start := time.Now()
	idle := false
	last, lastAt := -1, start
	for now := start; now.Sub(start) < 40*time.Second || now.Sub(lastAt) < 10*time.Second && now.Sub(start) < 120*time.Second; now = time.Now() {
		strict, undelivered := r.unsettled()
		if strict == 0 {
			break
		}
		if undelivered == 0 && r.idle() {
			idle = true
			break
		}
		if undelivered != last {
			last, lastAt = undelivered, now
		}
		r.sleep(nil, 250*time.Millisecond)
	}
	r.t.Logf("drain took %v", time.Since(start).Round(100*time.Millisecond))
	close(r.stopC)
	r.cons.Wait()
	if !idle {
		idle = r.idle()
	}
	dlq := map[string]map[string]int{}
	for _, g := range jfGroups {
		dlq[g] = r.dlqCopies(g)
	}
	rep := r.check(dlq)
	rep.idle = idle
	rep.gwErrors = r.gatewayErrors()
	return rep
}

// idle reports whether no group has lag or messages in flight.
func (r *jfRun) idle() bool {
	for _, g := range jfGroups {
		resp, err := r.call(0, "offsets", "GET", "/v1/groups/"+g+"/offsets", nil)
		if err != nil || resp.Status != 200 {
			return false
		}
		var out struct {
			Offsets []struct {
				Lag      int64 `json:"lag"`
				InFlight int   `json:"inFlight"`
			} `json:"offsets"`
		}
		if json.Unmarshal(resp.Body, &out) != nil {
			return false
		}
		for _, o := range out.Offsets {
			if o.Lag != 0 || o.InFlight != 0 {
				return false
			}
		}
	}
	return true
}

// unsettled counts published ids some group has not yet settled ok,
// and those it has not even had delivered.
func (r *jfRun) unsettled() (strict, undelivered int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.published {
		for _, g := range jfGroups {
			if r.settled[g][id] == "" {
				strict++
				if r.delivered[g][id] == 0 {
					undelivered++
				}
			}
		}
	}
	return strict, undelivered
}

// dlqCopies reads a group's whole DLQ: copies per message id.
func (r *jfRun) dlqCopies(group string) map[string]int {
	out := map[string]int{}
	cursor := ""
	for {
		q := "?limit=100"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		resp := r.gw(0).do(r.t, "GET", "/v1/groups/"+group+"/dlq"+q, nil)
		want(r.t, resp, 200)
		var p dlqPage
		resp.JSON(r.t, &p)
		for _, m := range p.Messages {
			out[m.MessageID]++
		}
		if p.NextCursor == "" || len(p.Messages) == 0 {
			return out
		}
		cursor = p.NextCursor
	}
}

// jfReport is the checker's verdict.
type jfReport struct {
	published, poison, idemKeys         int
	deliveries, dups, dupAfterOK        map[string]int
	lost, dlqWrong, idemTwice, wrong    []string
	unconfirmed                         map[string][]string // group → delivered, settle answer lost, not redelivered
	idle                                bool
	gwErrors                            map[string]map[string]int // window → the gateways' logged causes of its 5xx → count
	dlqExactlyOne, dlqMissing, dlqExtra map[string]int
	inversions, five00, noRetry         []string
	late5xx, startup5xx                 []string
	graced, overlapped                  int
	latestGraced                        time.Duration
	dupAfterOKs                         []string
	dupStale                            map[string]int
	answers                             map[string]map[int]int
	neterrs                             map[string]int
	windows, faults                     []string
}

// check judges the history against dlq (group → id → DLQ copies).
func (r *jfRun) check(dlq map[string]map[string]int) *jfReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := &jfReport{
		published: len(r.published), idemKeys: len(r.idemIDs),
		deliveries: map[string]int{}, dups: map[string]int{}, dupAfterOK: r.dupAfterOK,
		dlqExactlyOne: map[string]int{}, dlqMissing: map[string]int{}, dlqExtra: map[string]int{},
		inversions: r.inversions, five00: r.five00, noRetry: r.noRetry, wrong: r.wrong,
		answers: r.answers, neterrs: r.neterrs, windows: r.windows, faults: r.faults,
		unconfirmed: map[string][]string{}, dupAfterOKs: r.dupAfterOKs, late5xx: r.late5xx, startup5xx: r.startup5xx, graced: r.graced, overlapped: r.overlapped, latestGraced: r.latestGraced, dupStale: r.dupStale,
	}
	for _, b := range r.published {
		if b.Poison {
			rep.poison++
		}
	}
	for _, g := range jfGroups {
		for _, n := range r.delivered[g] {
			rep.deliveries[g] += n
			rep.dups[g] += n - 1
		}
		// Lost: answered 201 and never delivered to this group, or
		// poison and not in its DLQ. A message delivered whose settle
		// answer was lost (no answer, 503) and that never came again is
		// not lost when the group ends idle: the settle took effect.
		for id, b := range r.published {
			switch {
			case r.delivered[g][id] == 0:
				rep.lost = append(rep.lost, fmt.Sprintf("%s: %s %+v never delivered", g, id, b))
			case b.Poison && dlq[g][id] == 0:
				rep.lost = append(rep.lost, fmt.Sprintf("%s: poison %s %+v delivered %d times (settled %q, last other answer %q), no DLQ copy",
					g, id, b, r.delivered[g][id], r.settled[g][id], r.unsure[g][id]))
			case r.settled[g][id] == "":
				rep.unconfirmed[g] = append(rep.unconfirmed[g], fmt.Sprintf("%s %s: %s", id, b.Key, r.unsure[g][id]))
			}
		}
		// Every message delivered as poison (published 201 or not) has
		// exactly one DLQ copy once its nack answered ok; nothing else
		// is there.
		for id := range r.delivered[g] {
			if !r.poison(id) {
				continue
			}
			switch c := dlq[g][id]; {
			case c == 1:
				rep.dlqExactlyOne[g]++
			case c == 0:
				rep.dlqMissing[g]++
			default:
				rep.dlqExtra[g]++
				rep.dlqWrong = append(rep.dlqWrong, fmt.Sprintf("%s: %s has %d DLQ copies", g, id, c))
			}
		}
		for id, c := range dlq[g] {
			if !r.poison(id) {
				rep.dlqWrong = append(rep.dlqWrong, fmt.Sprintf("%s: %s in the DLQ (%d copies) but not poison (settled %q)", g, id, c, r.settled[g][id]))
			}
		}
	}
	for key, ids := range r.idemIDs {
		if len(ids) > 1 {
			rep.idemTwice = append(rep.idemTwice, fmt.Sprintf("key %s stored as %v", key, slices.Sorted(mapKeys(ids))))
		}
	}
	return rep
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (rep *jfReport) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jsfaults checker: %d publishes answered 201 (%d poison), %d idempotency keys\n", rep.published, rep.poison, rep.idemKeys)
	fmt.Fprintf(&b, "  faults: %s\n", strings.Join(rep.faults, "; "))
	fmt.Fprintf(&b, "  lost acknowledged publishes: %d\n", len(rep.lost))
	for _, g := range jfGroups {
		fmt.Fprintf(&b, "  %s: %d deliveries, %d duplicates, %d of them after an ok settle (%d in stale-leader windows); DLQ exactly 1: %d, missing: %d, extra: %d\n",
			g, rep.deliveries[g], rep.dups[g], rep.dupAfterOK[g], rep.dupStale[g], rep.dlqExactlyOne[g], rep.dlqMissing[g], rep.dlqExtra[g])
		fmt.Fprintf(&b, "    settle answer lost, never redelivered (took effect; group idle at the end: %v): %d %v\n",
			rep.idle, len(rep.unconfirmed[g]), rep.unconfirmed[g])
	}
	fmt.Fprintf(&b, "  ORDERLY per-key inversions (any window): %d\n", len(rep.inversions))
	fmt.Fprintf(&b, "  idempotency keys stored twice: %d\n", len(rep.idemTwice))
	fmt.Fprintf(&b, "  500 answers: %d; 503 without Retry-After: %d; other wrong answers: %d\n", len(rep.five00), len(rep.noRetry), len(rep.wrong))
	fmt.Fprintf(&b, "  5xx to requests sent after a fault ended: %d, the latest sent %v after; beyond the %v grace: %d\n",
		rep.graced, rep.latestGraced.Round(10*time.Millisecond), jfGrace, len(rep.late5xx))
	fmt.Fprintf(&b, "  5xx to requests sent in a quiet window that a fault then overlapped: %d\n", rep.overlapped)
	fmt.Fprintf(&b, "  5xx before the first fault (start-up): %d\n", len(rep.startup5xx))
	for _, x := range rep.startup5xx {
		fmt.Fprintf(&b, "    %s\n", x)
	}
	fmt.Fprintf(&b, "  5xx and unanswered requests per window (* a fault lasts):\n")
	seen := map[string]bool{}
	for _, w := range rep.windows {
		if seen[w] {
			continue
		}
		seen[w] = true
		var codes []string
		for _, c := range slices.Sorted(mapKeys(rep.answers[w])) {
			codes = append(codes, fmt.Sprintf("%d×%d", rep.answers[w][c], c))
		}
		sort.Strings(codes)
		mark := " "
		if jfFaultWindow(w) {
			mark = "*"
		}
		fmt.Fprintf(&b, "   %s%-28s 5xx [%s], no answer %d\n", mark, w, strings.Join(codes, " "), rep.neterrs[w])
		for _, e := range slices.Sorted(mapKeys(rep.gwErrors[w])) {
			fmt.Fprintf(&b, "      %d× %s\n", rep.gwErrors[w][e], e)
		}
	}
	return b.String()
}

// failure is "" when every rule holds.
func (rep *jfReport) failure() string {
	var b strings.Builder
	list := func(what string, xs []string) {
		if len(xs) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s: %d\n", what, len(xs))
		for k, x := range xs {
			if k == 20 {
				fmt.Fprintf(&b, "  … %d more\n", len(xs)-20)
				break
			}
			fmt.Fprintf(&b, "  %s\n", x)
		}
	}
	list("lost acknowledged publishes", rep.lost)
	list("DLQ copies not exactly one", rep.dlqWrong)
	list("ORDERLY per-key inversions", rep.inversions)
	list("idempotency keys stored twice", rep.idemTwice)
	list("500 answers", rep.five00)
	list("503 without Retry-After", rep.noRetry)
	list("5xx before the first fault (start-up)", rep.startup5xx)
	list(fmt.Sprintf("5xx after a fault and its %v grace", jfGrace), rep.late5xx)
	list("wrong answers", rep.wrong)
	// The duplicate bound: a message comes again only after a delivery
	// of it that was not settled ok, or while a paused or cut-off leader
	// may still act on its stale state (jfStaleLeaderWindow).
	list("deliveries after an ok settle, outside a stale-leader window", rep.dupAfterOKs)
	for _, g := range jfGroups {
		if len(rep.unconfirmed[g]) > 0 && !rep.idle {
			fmt.Fprintf(&b, "%s: %d messages delivered, never settled ok, and the groups are not idle\n", g, len(rep.unconfirmed[g]))
		}
	}
	for _, g := range jfGroups {
		if rep.dlqMissing[g] > 0 {
			fmt.Fprintf(&b, "%s: %d dead letters missing from the DLQ\n", g, rep.dlqMissing[g])
		}
	}
	return b.String()
}

// poison reports whether a delivered id carried a poison body.
func (r *jfRun) poison(id string) bool { return r.poisonIDs[id] }

// gatewayErrors counts, per window, the causes the gateways logged for
// the 5xx answers (matched by request id).
func (r *jfRun) gatewayErrors() map[string]map[string]int {
	out := map[string]map[string]int{}
	r.gwMu.Lock()
	all := slices.Clone(r.allGWs)
	r.gwMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range all {
		for _, line := range strings.Split(s.Logs(), "\n") {
			var rec struct {
				Level   string `json:"level"`
				Message string `json:"message"`
				Error   string `json:"error"`
				Path    string `json:"path"`
				ReqID   string `json:"request_id"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil || (rec.Level != "warn" && rec.Level != "error") || rec.Message == "request" {
				continue
			}
			// Ids and numbers vary: keep the shape of the cause.
			w, ok := r.reqWindow[rec.ReqID]
			if !ok {
				continue // not an answer the clients got (start-up warnings)
			}
			if out[w] == nil {
				out[w] = map[string]int{}
			}
			out[w][fmt.Sprintf("%s: %.200s", jfPathShape(rec.Path), strings.ReplaceAll(rec.Error, "\n", " | "))]++
		}
	}
	return out
}

func jfPathShape(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// jfStaleLeaderWindow: a SIGSTOPped consumer leader continued, or an
// isolated one (until it steps down, it still answers the clients that
// reach it), can deliver again, from its stale state, a message its
// successor has seen acknowledged — at-least-once allows it. Such
// duplicates are counted and printed there, not failed; anywhere else
// they fail the run. So can a consumer leader killed with -9: it answers
// an ack before its peers have it, and its successor, without that state,
// delivers the message again (delivery count 1 again) while the node is
// down, restarts, and just after. An ORDERLY one after a later message of
// its key fails everywhere: the gateway fences it off
// (backend/jetstream/orderclaim.go).
func jfStaleLeaderWindow(w string) bool {
	for _, s := range []string{"SIGSTOP", "after stop-leader", "partition", "catching up", "kill -9 leader", "restart n", "after kill-leader"} {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// keepLogs copies the nodes' and the gateways' logs to
// build/jsfaults-<seed>/ (the test's temporary directory goes away) for a
// run worth reading: n1.log…, and gw-<k>.log per gateway process in the
// order they started.
func keepLogs(t *testing.T, cl *natsProcCluster, r *jfRun, seed uint64) {
	dir, err := filepath.Abs(filepath.Join("..", "build", fmt.Sprintf("jsfaults-%d", seed)))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	for _, nd := range cl.nodes {
		if err != nil {
			break
		}
		var b []byte
		if b, err = os.ReadFile(nd.logPath); err == nil {
			err = os.WriteFile(filepath.Join(dir, nd.name+".log"), b, 0o644)
		}
	}
	r.gwMu.Lock()
	gws := slices.Clone(r.allGWs)
	r.gwMu.Unlock()
	for k, s := range gws {
		if err != nil {
			break
		}
		err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("gw-%d.log", k)), []byte(s.Logs()), 0o644)
	}
	if err != nil {
		t.Logf("keeping the logs: %v", err)
		return
	}
	t.Logf("nats-server and gateway logs kept in %s", dir)
}
