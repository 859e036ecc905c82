package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqgate/mqgate/internal/lazyfs"
)

// The power-cut run (issue 23): the real binary on internal/lazyfs, a
// filesystem that forgets what was not synced, with the power cut under
// load. See TestPowerCut.

// powerCutCuts is how many cuts a run makes: MQGATE_POWERCUT_CUTS, else a
// bounded run for make test.
func powerCutCuts() int {
	if v, err := strconv.Atoi(os.Getenv("MQGATE_POWERCUT_CUTS")); err == nil && v > 0 {
		return v
	}
	return 20
}

// powerCutAckAge is how long before a cut an ack the cut takes back may
// have been answered (rule 5 of the chaos checker; see TestPowerCut).
const powerCutAckAge = 1500 * time.Millisecond

// powerRig is a lazyfs mount the server's data dir lives on.
type powerRig struct {
	t       *testing.T
	backing string
	mnt     string
	fs      *lazyfs.FS

	cuts, held, kept, lost, torn int
}

func newPowerRig(t *testing.T) *powerRig {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse (%v): the power-cut run mounts a FUSE filesystem", err)
	}
	p := &powerRig{t: t, backing: t.TempDir(), mnt: t.TempDir()}
	p.mount()
	// Registered before any server: cleanups run last-first, so every
	// server using the mount has stopped when it is unmounted.
	t.Cleanup(func() {
		if p.fs != nil {
			if err := p.fs.Unmount(); err != nil {
				t.Error(err)
			}
		}
	})
	return p
}

func (p *powerRig) mount() {
	p.t.Helper()
	fs, err := lazyfs.Mount(p.backing, p.mnt)
	if err != nil {
		p.t.Fatal(err)
	}
	p.fs = fs
}

// cut cuts the power under s and kills it at the same moment (the cut
// first: nothing s does after it reaches the disk, and every fsync from
// then on fails), then "reboots": unmount and mount the backing dir
// again, with empty kernel caches. Half of the cuts first hold every
// fsync for a while, so requests pile up between their write and their
// sync; the cut then keeps a random subset of the unsynced page writes
// and tears one, or not.
func (p *powerRig) cut(s *server, rng *rand.Rand) lazyfs.CutReport {
	p.t.Helper()
	if rng.IntN(2) == 0 {
		p.fs.HoldSyncs()
		p.held++
		// Deliberate: the window. Longer holds only lose more acks (each
		// one redelivered, within the bound, after the start).
		timer := time.NewTimer(time.Duration(10+rng.IntN(30)) * time.Millisecond)
		<-timer.C
	}
	opts := lazyfs.CutOptions{Keep: []float64{0, 0.3, 0.7}[rng.IntN(3)], Tear: rng.IntN(2) == 0, Seed: rng.Uint64() | 1}
	rep, err := p.fs.Cut(opts)
	if err != nil {
		p.t.Fatal(err)
	}
	s.kill()
	if err := p.fs.Unmount(); err != nil {
		p.t.Fatal(err)
	}
	p.fs = nil
	p.mount()
	p.cuts++
	p.kept += rep.PagesKept
	p.lost += rep.PagesLost
	if rep.TornBytes > 0 {
		p.torn++
	}
	return rep
}

// idemLoad publishes with Idempotency-Key to its own topic, each publish
// raced by a retry of it, and after every cut checks that each message
// an answer named is there and that a retry still answers it.
type idemLoad struct {
	r     *chaosRun
	topic string

	mu        sync.Mutex
	ids       map[string]string // key -> the message id its 2xx answers named
	bodies    map[string]string
	pending   map[string]bool      // keys with no 2xx answer yet: retried after a restart
	unchecked []string             // keys answered since the last check
	how       map[string][2]int    // key -> 2xx answers [stored, replayed]
	firstAt   map[string]time.Time // key -> its first 2xx answer
	answers   int                  // 2xx answers (originals and replays)
	replays   int
	checked   int // answers checked after a cut: by id, and by a retry
	bad       []string
}

func newIdemLoad(r *chaosRun, topic string) *idemLoad {
	return &idemLoad{r: r, topic: topic, ids: map[string]string{}, bodies: map[string]string{}, pending: map[string]bool{},
		how: map[string][2]int{}, firstAt: map[string]time.Time{}}
}

func (l *idemLoad) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bad = append(l.bad, fmt.Sprintf(format, args...))
}

// record takes one answer to a publish of key by generation gen.
func (l *idemLoad) record(key string, gen int, resp *response, res pubResult, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || resp.Status != 201 {
		if _, ok := l.ids[key]; !ok {
			l.pending[key] = true
		}
		if err == nil && resp.Status < 500 && l.r.srvs.current(gen) {
			l.bad = append(l.bad, fmt.Sprintf("key %s: %d %s", key, resp.Status, resp.Body))
		}
		return
	}
	l.answers++
	h := l.how[key]
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		l.replays++
		h[1]++
	} else {
		h[0]++
	}
	l.how[key] = h
	prev, ok := l.ids[key]
	switch {
	case !ok:
		l.ids[key] = res.MessageID
		l.firstAt[key] = time.Now()
		l.unchecked = append(l.unchecked, key)
		delete(l.pending, key)
	case prev != res.MessageID:
		l.bad = append(l.bad, fmt.Sprintf("key %s: answered %s, then %s (replayed %v, run %d): the first answer named a message that is gone",
			key, prev, res.MessageID, res.Replayed, gen))
	}
}

// worker publishes key after key until stop, each raced by a retry.
func (l *idemLoad) worker(w int, seed uint64, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(seed, uint64(w)+500))
	tick := time.NewTicker(15 * time.Millisecond) // deliberate pacing
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
		key := fmt.Sprintf("w%d-%d", w, i)
		body := "idem " + key
		l.mu.Lock()
		l.bodies[key] = body
		l.mu.Unlock()
		var wg sync.WaitGroup
		for try := range 2 {
			wg.Go(func() {
				if try == 1 {
					// The retry lands while the original is being stored.
					timer := time.NewTimer(time.Duration(rng.IntN(3000)) * time.Microsecond)
					<-timer.C
				}
				resp, res, err := publishIdem(s, l.topic, key, body)
				l.record(key, gen, resp, res, err)
			})
		}
		wg.Wait()
	}
}

// check runs after a restart, before the load resumes against the new
// process: every message named by an answer since the last check is
// there with its body; keys never answered are retried; and a sample of
// all answered keys, retried, answers the same id.
func (l *idemLoad) check(t *testing.T, s *server, cut int, rng *rand.Rand) {
	t.Helper()
	l.mu.Lock()
	keys := l.unchecked
	l.unchecked = nil
	var pending []string
	for k := range l.pending {
		pending = append(pending, k)
	}
	// Retries within the dedup window (5 minutes by default) answer the
	// original; after it a key is forgotten.
	all := make([]string, 0, len(l.ids))
	for k := range l.ids {
		if time.Since(l.firstAt[k]) < 4*time.Minute {
			all = append(all, k)
		}
	}
	l.mu.Unlock()
	for _, key := range keys {
		l.mu.Lock()
		id, body, how := l.ids[key], l.bodies[key], l.how[key]
		l.mu.Unlock()
		r := s.do(t, "GET", "/v1/topics/"+l.topic+"/messages/"+id, nil)
		if r.Status != 200 {
			l.fail("cut %d: message %s (key %s), answered before the cut (%d answers as stored, %d as replayed), is gone: %d %s",
				cut, id, key, how[0], how[1], r.Status, r.Body)
			continue
		}
		var m message
		r.JSON(t, &m)
		if m.Body == nil || *m.Body != body {
			l.fail("cut %d: message %s (key %s) came back with another body: %s", cut, id, key, r.Body)
		}
		l.mu.Lock()
		l.checked++
		l.mu.Unlock()
	}
	for _, key := range pending {
		l.mu.Lock()
		body := l.bodies[key]
		l.mu.Unlock()
		resp, res, err := publishIdem(s, l.topic, key, body)
		if err != nil || resp.Status != 201 {
			l.fail("cut %d: retry of key %s after the restart: %v %v", cut, key, err, resp)
			continue
		}
		l.record(key, 0, resp, res, nil)
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for _, key := range all[:min(len(all), 20)] {
		l.mu.Lock()
		id, body := l.ids[key], l.bodies[key]
		l.mu.Unlock()
		resp, res, err := publishIdem(s, l.topic, key, body)
		if err != nil || resp.Status != 201 || !res.Replayed || res.MessageID != id {
			l.fail("cut %d: retry of key %s after the restart answered %v %+v, want a replay of %s", cut, key, err, res, id)
			continue
		}
		l.mu.Lock()
		l.checked++
		l.mu.Unlock()
	}
}

// mqgateCheck runs `mqgate check -o json DATA_DIR` on the stopped data
// dir and returns its status (healthy, unsettled: the log-ahead holds
// commits a start redoes, damaged, ...), or "" when this build has no
// check command. A status not in ok is returned as a problem (reported at
// the end, so the run still settles and its other counts stay true).
func mqgateCheck(dir string, ok ...string) (status, problem string) {
	cmd := exec.Command(binPath, "check", "-o", "json", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && strings.Contains(stderr.String(), `unknown command "check"`) {
		return "", ""
	}
	var rep struct {
		Status, Problem string
	}
	if jerr := jsonUnmarshal(out, &rep); jerr != nil {
		return "?", fmt.Sprintf("mqgate check %s: %v, %v\n%s%s", dir, err, jerr, out, stderr.String())
	}
	if !slices.Contains(ok, rep.Status) {
		return rep.Status, fmt.Sprintf("mqgate check %s: %s (%s), want %v", dir, rep.Status, rep.Problem, ok)
	}
	return rep.Status, ""
}

// keepCopy copies the data dir for a look after the test (a t.TempDir is
// removed) and returns where.
func keepCopy(t *testing.T, dir string, cut int) string {
	dst, err := os.MkdirTemp("", fmt.Sprintf("mqgate-powercut-cut%d-", cut))
	if err == nil {
		err = exec.Command("cp", "-a", dir+"/.", dst).Run()
	}
	if err != nil {
		t.Logf("keeping a copy of %s: %v", dir, err)
		return ""
	}
	return dst
}

// TestPowerCut is issue 23's power-cut run: the change-chaos load of
// TestChangeChaos (single and batch publishes, receive and ack, nacks into
// retry, ORDERLY and CONCURRENTLY groups, topic growth, filter changes,
// offset resets, a group deleted and created again), idempotent publishes
// each raced by a retry, delayed messages nacked into a DLQ, redrive jobs
// of that DLQ and a group paused and resumed, on a lazyfs mount; MQGATE_POWERCUT_CUTS
// times (20 in make test) the power is cut and the server killed at the
// same moment, half of the time with the fsyncs held first, and the
// server started again on what the disk kept. Then:
//   - 0 acknowledged publishes lost: the chaos checker's rule 1 (every
//     2xx publish is delivered to every group that must see it), and
//     every message an idempotent answer named is there after the next
//     start, byte for byte;
//   - no idempotency answer names a message that is gone: every answer
//     for one key names one id, before and after cuts, and retries after
//     a start answer that id, replayed;
//   - every start succeeds and never starts empty (startServer fails the
//     test on a start that does not listen, with its log; the checks above
//     read what was there before);
//   - acks are redelivered only within the documented bound (rule 5:
//     answered at most powerCutAckAge before the cut);
//   - the DLQ holds each message at most once and holds every
//     acknowledged delayed one at the end; no delayed message is
//     delivered before its deliverAt;
//   - every redrive job answered 202 is there after each start, and the
//     paused group's state is the last one answered;
//   - `mqgate check` after each cut finds the file healthy or unsettled
//     (commits in the log-ahead for the start to redo), never damaged,
//     and healthy after the last, clean, stop (when the build has it).
//
// Run longer with MQGATE_POWERCUT_CUTS=500 (and MQGATE_CHAOS_SEED to
// replay a run's choices).
func TestPowerCut(t *testing.T) {
	cuts := powerCutCuts()
	seed := chaosSeed(t)
	t.Logf("MQGATE_CHAOS_SEED=%d MQGATE_POWERCUT_CUTS=%d", seed, cuts)
	p := newPowerRig(t)
	dir := filepath.Join(p.mnt, "data")
	r := newChaosRunIn(t, dir, map[string]int{"ta": 2, "tb": 2}, []string{"ta", "tb"}, []chaosGroupSpec{
		{name: "gc", filters: map[string]string{"ta": "*", "tb": "*"}, consumers: []string{"", ""}, nackPct: 10},
		{name: "go", orderly: true, filters: map[string]string{"ta": "*", "tb": "*"}, consumers: []string{"", ""}, nackPct: 3},
		{name: "gx", lastOffset: true, filters: map[string]string{"ta": "a || b", "tb": "*"}, consumers: []string{""}, nackPct: 10},
	})
	// Acks are written with the store's next group commit (docs/consuming.md:
	// the last 10 ms and one group commit). On lazyfs every write of the
	// store goes through this test process's FUSE server, under -race, and
	// a commit may wait for a checkpoint's writes: up to ~930 ms measured on
	// a loaded 2-core machine, against ~150 ms on a plain disk.
	r.hist.KillAckAge = powerCutAckAge
	s0, _, _ := r.srvs.get(r.stop)
	createTopic(t, s0, "ti", 2)
	idem := newIdemLoad(r, "ti")
	dl := newDLQDelayLoad(t, r, s0)
	st := newStateLoad(t, r, s0)
	idemStop, dlDone := make(chan struct{}), make(chan struct{})
	var iwg, dwg sync.WaitGroup
	for w := range 2 {
		iwg.Go(func() { idem.worker(w, seed, idemStop) })
	}
	iwg.Go(func() { dl.publisher(idemStop) })
	dwg.Go(func() { dl.consumer(dlDone) })

	rng := rand.New(rand.NewPCG(seed, 23))
	starts := 1
	checks := map[string]int{} // mqgate check's statuses
	var checkBad []string
	hasCheck := true
	r.powerCut = func(old *server) {
		p.cut(old, rng)
		if hasCheck {
			// After a crash the log-ahead may hold commits the next start
			// redoes: unsettled is a clear answer, damaged is not.
			status, problem := mqgateCheck(dir, "healthy", "unsettled")
			if hasCheck = status != ""; hasCheck {
				checks[status]++
			}
			if problem != "" {
				checkBad = append(checkBad, fmt.Sprintf("cut %d: %s; a copy of the data dir before the start: %s", p.cuts, problem, keepCopy(t, dir, p.cuts)))
			}
		}
	}
	grows := 0
	ops := []chaosOp{
		func(r *chaosRun) {
			if grows < 2 {
				grows++
				r.growTopic([]string{"ta", "tb"}[grows%2])
			}
		},
		func(r *chaosRun) { r.setFilter("gx", "ta", []string{"*", "a || b"}[rng.IntN(2)]) },
		func(r *chaosRun) { r.reset("gx", "tb") },
		func(r *chaosRun) { r.deleteGroup("gx"); r.createGroup("gx") },
		func(r *chaosRun) { r.leaseOne("gc"); st.redrive() },
	}
	var script []chaosOp
	for i := range cuts {
		script = append(script, ops[i%len(ops)], func(r *chaosRun) {
			st.toggle()
			r.restart(true)
			starts++
			s, _, _ := r.srvs.get(r.stop)
			// Never silently empty: what was there before the cut is.
			if resp := s.do(t, "GET", "/v1/topics/ti", nil); resp.Status != 200 {
				st.bad = append(st.bad, fmt.Sprintf("start %d after cut %d: topic ti: %d %s", starts, p.cuts, resp.Status, resp.Body))
			}
			idem.check(t, s, p.cuts, rng)
			st.check(t, s, p.cuts)
		})
	}
	pace := func(rng *rand.Rand) time.Duration {
		return 150*time.Millisecond + time.Duration(rng.Int64N(int64(200*time.Millisecond)))
	}
	start := time.Now()
	go func() {
		<-r.stop // the chaos publishers stop: so do the idempotent ones
		close(idemStop)
	}()
	rep := r.run(seed, 2, 40*time.Millisecond, pace, script, 20*time.Second)
	iwg.Wait()
	last, _, _ := r.srvs.get(make(chan struct{}))
	idem.check(t, last, p.cuts, rng)
	dlqSize, dlLost := dl.settle(t, last)
	st.finish(t, last)
	close(dlDone)
	dwg.Wait()
	if hasCheck {
		// A clean stop settles the log-ahead: the file must be healthy.
		last.stop(t)
		status, problem := mqgateCheck(dir, "healthy")
		checks[status+" after the last stop"]++
		if problem != "" {
			checkBad = append(checkBad, "after the last stop: "+problem)
		}
	}

	idem.mu.Lock()
	defer idem.mu.Unlock()
	lost := rep.Missing + dlLost
	for _, b := range idem.bad {
		if strings.Contains(b, "is gone") {
			lost++
		}
	}
	t.Logf("power cuts %d (%d with fsyncs held; unsynced pages lost %d, kept %d; %d torn) in %v; starts %d; "+
		"acknowledged publishes %d (chaos %d, idempotent keys %d, delayed below); lost %d; idempotency answers %d (%d replays), checked %d; "+
		"acked messages redelivered %d %v (bound %v before the cut; oldest %v); "+
		"delayed %d acknowledged (%d unknown), %d first deliveries checked for earliness, %d nacks, DLQ %d; "+
		"redrive jobs %d, pause states and jobs checked %d; mqgate check %v",
		p.cuts, p.held, p.lost, p.kept, p.torn, time.Since(start).Round(time.Millisecond), starts,
		rep.Published+len(idem.ids)+len(dl.bodies), rep.Published, len(idem.ids), lost, idem.answers, idem.replays, idem.checked,
		rep.AckedKill, rep.AckedKillPerKill, powerCutAckAge, rep.MaxKillAckAge.Round(time.Millisecond),
		len(dl.bodies), dl.unknown, dl.firsts, dl.nacks, dlqSize, len(st.jobs), st.checked, checks)
	if !hasCheck {
		t.Logf("mqgate check: this build has no check command; skipped")
	}
	t.Logf("chaos counts: %s", rep.Summary())
	if r.errs.Load() > 0 {
		t.Errorf("%d unexpected client errors (first ones above)", r.errs.Load())
	}
	if rep.Published == 0 || len(idem.ids) == 0 || p.cuts == 0 {
		t.Fatalf("nothing happened: %d cuts, %s", p.cuts, rep.Summary())
	}
	for i, b := range idem.bad {
		if i == 20 {
			t.Errorf("... %d more", len(idem.bad)-20)
			break
		}
		t.Errorf("idempotent publishes: %s", b)
	}
	for _, b := range checkBad {
		t.Errorf("%s", b)
	}
	for _, b := range st.bad {
		t.Errorf("pause and jobs: %s", b)
	}
	if rules := rep.Rules(); len(rules) > 0 {
		t.Errorf("power cuts broke %v:\n%s", rules, rep.Failure())
	}
}
