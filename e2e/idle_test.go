package e2e

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIdleServerUsesNoCPU: a server with topics, CLUSTERING, ORDERLY and
// BROADCASTING groups and a parked long poll does nothing
// while nothing happens — no polling loops anywhere (issues 2 and 3).
func TestIdleServerUsesNoCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to read the server's CPU time")
	}
	s := startServer(t, t.TempDir())
	want(t, s.do(t, "PUT", "/v1/topics/idle", map[string]any{"queues": 8}), http.StatusCreated)
	for _, g := range []struct{ name, model, mode string }{
		{"idle-c", "CLUSTERING", "CONCURRENTLY"},
		{"idle-o", "CLUSTERING", "ORDERLY"},
		{"idle-b", "BROADCASTING", "CONCURRENTLY"},
	} {
		want(t, s.do(t, "PUT", "/v1/groups/"+g.name, map[string]any{
			"subscriptions": []map[string]any{{"topic": "idle"}},
			"messageModel":  g.model, "consumeMode": g.mode,
		}), http.StatusCreated)
	}
	// A round trip first, so every code path has run once.
	want(t, s.do(t, "POST", "/v1/topics/idle/messages", map[string]any{"body": "warm"}), http.StatusCreated)
	want(t, s.do(t, "POST", "/v1/groups/idle-c/receive", map[string]any{"waitSeconds": 5}), http.StatusOK)
	want(t, s.do(t, "POST", "/v1/groups/idle-b/receive", map[string]any{"consumerId": "b1", "waitSeconds": 1}), http.StatusOK)

	// A long poll parked for the whole measurement.
	parked := make(chan *response, 1)
	go func() {
		r, _ := s.try("POST", "/v1/groups/idle-c/receive", map[string]any{"waitSeconds": 8})
		parked <- r
	}()
	time.Sleep(2 * time.Second) // let start-up work (first persists, rebalances) settle

	const window = 4 * time.Second
	before := cpuTicks(t, s.cmd.Process.Pid)
	time.Sleep(window)
	used := cpuTicks(t, s.cmd.Process.Pid) - before
	// USER_HZ is 100 on Linux: one tick is 10 ms. Periodic work that is
	// due anyway (offset persistence skipping clean stores, heartbeats)
	// may cost a tick; a polling loop costs hundreds.
	t.Logf("server CPU over %v idle: %d ticks (%d ms)", window, used, used*10)
	if used > 5 {
		t.Fatalf("idle server used %d ms of CPU in %v", used*10, window)
	}
	if r := <-parked; r == nil || r.Status != http.StatusOK {
		t.Fatalf("parked receive: %+v", r)
	}
}

// cpuTicks is utime+stime of pid in clock ticks (/proc/PID/stat fields 14, 15).
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces; fields restart after ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st
}
