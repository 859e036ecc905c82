package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"
)

// groupPause is what the pause and resume actions and GET of a group show
// of a pause.
type groupPause struct {
	Paused   *bool  `json:"paused"`
	PausedAt string `json:"pausedAt"`
	Status   *struct {
		Waiting int        `json:"waiting"`
		Empty   *emptyInfo `json:"empty"`
	} `json:"status"`
}

func pauseAction(t *testing.T, s *server, group, action string) groupPause {
	t.Helper()
	r := s.do(t, "POST", "/v1/groups/"+group+"/"+action, nil)
	want(t, r, http.StatusOK)
	var g groupPause
	r.JSON(t, &g)
	if g.Paused == nil || *g.Paused != (action == "pause") || (g.PausedAt != "") != (action == "pause") {
		t.Fatalf("%s %s answered %s", action, group, r.Body)
	}
	return g
}

func getPause(t *testing.T, s *server, group string) groupPause {
	t.Helper()
	r := s.do(t, "GET", "/v1/groups/"+group, nil)
	want(t, r, http.StatusOK)
	var g groupPause
	r.JSON(t, &g)
	if g.Paused == nil {
		t.Fatalf("group %s has no paused field: %s", group, r.Body)
	}
	return g
}

// receivePaused receives with a wait and expects an empty answer with
// reason PAUSED after (about) the whole wait.
func receivePaused(t *testing.T, s *server, group string, wait time.Duration) {
	t.Helper()
	start := time.Now()
	r := s.do(t, "POST", "/v1/groups/"+group+"/receive", map[string]any{"maxMessages": 32, "waitSeconds": int(wait / time.Second)})
	took := time.Since(start)
	want(t, r, http.StatusOK)
	var out struct {
		Messages []recvMsg  `json:"messages"`
		Empty    *emptyInfo `json:"empty"`
	}
	r.JSON(t, &out)
	if len(out.Messages) > 0 || out.Empty == nil || out.Empty.Reason != "PAUSED" {
		t.Fatalf("receive of paused %s: %s", group, r.Body)
	}
	if took < wait-100*time.Millisecond {
		t.Fatalf("receive of paused %s answered after %v, before its wait of %v", group, took, wait)
	}
}

// TestPauseGroup: a paused pull group hands out nothing — receives wait
// and answer empty with reason PAUSED, also messages published while
// paused and after a kill -9 — while what was received before can still
// be acked; PUT keeps the pause; resume wakes a parked receive with
// everything that waited.
// TestPauseGroup runs on both backends (the JetStream one over a
// single-node JetStream server, the pause kept in MQGATE_GROUPS).
func TestPauseGroup(t *testing.T) { backends(t, testPauseGroup) }

func testPauseGroup(t *testing.T, flags []string) {
	dir := t.TempDir()
	s := startServer(t, dir, flags...)
	createTopic(t, s, "pz", 2)
	r := s.do(t, "PUT", "/v1/groups/pg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "pz"}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
	})
	if r.Status == http.StatusServiceUnavailable {
		t.Skip("this binary has no gateway wired")
	}
	want(t, r, http.StatusCreated)
	if g := getPause(t, s, "pg"); *g.Paused || g.PausedAt != "" {
		t.Fatalf("a new group is paused: %+v", g)
	}
	wantProblem(t, s.do(t, "POST", "/v1/groups/nope/pause", nil), http.StatusNotFound)
	wantProblem(t, s.do(t, "POST", "/v1/groups/nope/resume", nil), http.StatusNotFound)

	want(t, s.do(t, "POST", "/v1/topics/pz/messages", map[string]any{"body": "before"}), http.StatusCreated)
	var first recvMsg
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		ms := receive(t, s, "pg", map[string]any{"invisibleSeconds": 60})
		if len(ms) == 0 {
			return fmt.Errorf("nothing yet")
		}
		first = ms[0]
		return nil
	})
	for i := range 4 {
		want(t, s.do(t, "POST", "/v1/topics/pz/messages", map[string]any{"body": fmt.Sprint("m", i)}), http.StatusCreated)
	}

	p1 := pauseAction(t, s, "pg", "pause")
	if p2 := pauseAction(t, s, "pg", "pause"); p2.PausedAt != p1.PausedAt {
		t.Errorf("pausing again moved pausedAt from %s to %s", p1.PausedAt, p2.PausedAt)
	}
	receivePaused(t, s, "pg", time.Second)
	if g := getPause(t, s, "pg"); !*g.Paused || g.Status == nil || g.Status.Empty == nil || g.Status.Empty.Reason != "PAUSED" {
		t.Fatalf("GET of the paused group: %+v", g)
	}
	// What was received before the pause can still be answered.
	if res := ack(t, s, "pg", first.ReceiptHandle); res.Results[0].Status != "ok" {
		t.Fatalf("ack while paused: %+v", res)
	}
	want(t, s.do(t, "POST", "/v1/topics/pz/messages", map[string]any{"body": "m4"}), http.StatusCreated)
	receivePaused(t, s, "pg", time.Second)

	// The pause survives kill -9 and a PUT of the config.
	s.kill()
	s = startServer(t, dir, flags...)
	if g := getPause(t, s, "pg"); !*g.Paused || g.PausedAt != p1.PausedAt {
		t.Fatalf("after kill -9: %+v, want paused since %s", g, p1.PausedAt)
	}
	want(t, s.do(t, "PUT", "/v1/groups/pg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "pz"}}, "consumeFrom": map[string]any{"position": "FIRST_OFFSET"},
		"invisibleSeconds": 30,
	}), http.StatusOK)
	if g := getPause(t, s, "pg"); !*g.Paused {
		t.Fatalf("PUT resumed the group: %+v", g)
	}
	receivePaused(t, s, "pg", time.Second)

	// A receive parked on the paused group gets the messages at resume.
	type result struct {
		msgs []recvMsg
		err  error
		at   time.Time
	}
	done := make(chan result, 1)
	go func() {
		ms, err := tryReceive(s, "pg", map[string]any{"maxMessages": 32, "waitSeconds": 20})
		done <- result{ms, err, time.Now()}
	}()
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if g := getPause(t, s, "pg"); g.Status == nil || g.Status.Waiting != 1 {
			return fmt.Errorf("no receive parked yet")
		}
		return nil
	})
	resumed := time.Now()
	pauseAction(t, s, "pg", "resume")
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if len(res.msgs) == 0 || res.at.Sub(resumed) > 5*time.Second {
		t.Fatalf("parked receive answered %d messages %v after the resume", len(res.msgs), res.at.Sub(resumed))
	}
	var got []string
	for _, m := range res.msgs {
		got = append(got, m.Body)
		ack(t, s, "pg", m.ReceiptHandle)
	}
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, m := range receive(t, s, "pg", map[string]any{"maxMessages": 32, "waitSeconds": 1}) {
			got = append(got, m.Body)
			ack(t, s, "pg", m.ReceiptHandle)
		}
		for i := range 5 {
			if !slices.Contains(got, fmt.Sprint("m", i)) {
				return fmt.Errorf("received %v", got)
			}
		}
		return nil
	})
	// "before" was acked before the kill -9: it may come again (acks since
	// the last commit), nothing else may.
	got = slices.DeleteFunc(got, func(b string) bool { return b == "before" })
	sort.Strings(got)
	if !slices.Equal(got, []string{"m0", "m1", "m2", "m3", "m4"}) {
		t.Fatalf("after the resume received %v", got)
	}
	if g := getPause(t, s, "pg"); *g.Paused || g.PausedAt != "" {
		t.Fatalf("after resume: %+v", g)
	}
}

// TestPausePushGroup: a paused push group's webhook gets nothing, also
// after a kill -9; on resume it gets everything that waited, once.
func TestPausePushGroup(t *testing.T) {
	dir := t.TempDir()
	s := startPushServer(t, dir)
	createTopic(t, s, "pp", 2)
	rc := newReceiver(t, nil) // 204 to everything
	push := map[string]any{"url": rc.srv.URL, "secret": hookSecret}
	putPushGroup(t, s, "ph", "pp", push, nil)
	publishN(t, s, "pp", "a", 3, nil)
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := rc.ackedCount(); n != 3 {
			return fmt.Errorf("%d delivered", n)
		}
		return nil
	})
	pauseAction(t, s, "ph", "pause")
	publishN(t, s, "pp", "b", 5, nil)
	// Nothing may arrive: give delivery time it would need (milliseconds
	// on loopback) many times over.
	time.Sleep(1500 * time.Millisecond)
	if n := rc.ackedCount(); n != 3 {
		t.Fatalf("the paused group pushed: %d bodies delivered, want the 3 from before", n)
	}
	wantProblem(t, s.do(t, "POST", "/v1/groups/ph/receive", map[string]any{}), http.StatusConflict)

	s.kill()
	s = startPushServer(t, dir)
	if g := getPause(t, s, "ph"); !*g.Paused {
		t.Fatalf("after kill -9 the push group is not paused: %+v", g)
	}
	time.Sleep(time.Second)
	if n := rc.ackedCount(); n != 3 {
		t.Fatalf("the paused group pushed after the restart: %d bodies", n)
	}

	pauseAction(t, s, "ph", "resume")
	checkFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := rc.ackedCount(); n != 8 {
			return fmt.Errorf("%d delivered", n)
		}
		return nil
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i := range 5 {
		if c := rc.acked[fmt.Sprint("b", i)]; c != 1 {
			t.Errorf("b%d delivered %d times", i, c)
		}
	}
}
