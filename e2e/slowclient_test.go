package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Issue 10 item 4: clients that send a request and never read the answer
// are cut after --write-timeout, so they cannot pin the responses' memory:
// three waves of 100 such clients, each asking for a 4 MiB answer (more
// than the socket buffers hold), are each disconnected shortly after the
// write timeout, the server's RSS levels off (later waves reuse the
// memory of earlier ones) under a stated bound, and a long poll longer
// than the write timeout is not cut.
func TestUnreadResponsesAreCut(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the server's RSS and sockets")
	}
	const (
		writeTimeout = 2 * time.Second
		clients      = 100
		msgs, size   = 8, 1 << 20
	)
	// The server is built without the race detector here: its shadow
	// memory would swamp the RSS figures, and race-instrumented JSON
	// encoding of 100 answers of 4 MiB keeps the handlers busy for tens
	// of seconds, long after their writes timed out.
	// A soft memory limit makes the collector reclaim a cut wave's
	// answers before the heap grows past it; the limit holds only if
	// they are garbage, i.e. only if the connections were cut (three
	// waves pinned would be about 2.4 GiB live).
	t.Setenv("GOMEMLIMIT", "1GiB")
	s := startServerBin(t, plainBinary(t), t.TempDir(), "--write-timeout", writeTimeout.String(), "--idle-timeout", "5s")
	pid := s.cmd.Process.Pid
	want(t, s.do(t, "PUT", "/v1/topics/big", map[string]any{"queues": 1}), http.StatusCreated)
	body := strings.Repeat("x", size)
	for range msgs {
		want(t, s.do(t, "POST", "/v1/topics/big/messages", map[string]any{"body": body}), http.StatusCreated)
	}
	path := fmt.Sprintf("/v1/topics/big/messages?queueId=0&offset=0&limit=%d", msgs)
	// A client that reads gets the whole answer.
	full := s.do(t, "GET", path, nil)
	want(t, full, http.StatusOK)
	answer := len(full.Body)

	// A long poll longer than the write timeout answers normally.
	want(t, s.do(t, "PUT", "/v1/groups/slow", map[string]any{"subscriptions": []map[string]any{{"topic": "big"}}}), http.StatusCreated)
	parked := make(chan *response, 1)
	go func() {
		r, _ := s.try("POST", "/v1/groups/slow/receive", map[string]any{"waitSeconds": 3})
		parked <- r
	}()

	baseSockets := sockets(t, pid)
	baseRSS := rssKiB(t, pid)
	var peaks []int64
	for wave := range 3 {
		conns := make([]net.Conn, clients)
		for i := range conns {
			conns[i] = dialSmallWindow(t, s.addr)
			if _, err := fmt.Fprintf(conns[i], "GET %s HTTP/1.1\r\nHost: mqgate\r\n\r\n", path); err != nil {
				t.Fatal(err)
			}
		}
		sent := time.Now()
		peak := int64(0)
		var cut time.Duration
		checkFor(t, writeTimeout+20*time.Second, 20*time.Millisecond, func() error {
			peak = max(peak, rssKiB(t, pid))
			if n := sockets(t, pid); n > baseSockets {
				return fmt.Errorf("%d client connections still open", n-baseSockets)
			}
			cut = time.Since(sent)
			return nil
		})
		for _, c := range conns {
			c.Close()
		}
		peaks = append(peaks, peak)
		t.Logf("wave %d: %d clients asking %d KiB each, not reading: all cut %v after the requests (write timeout %v); server RSS %d MiB before, peak %d MiB",
			wave+1, clients, answer>>10, cut.Round(10*time.Millisecond), writeTimeout, baseRSS>>10, peak>>10)
		if cut < writeTimeout-100*time.Millisecond {
			t.Fatalf("connections cut after %v, before the write timeout %v", cut, writeTimeout)
		}
	}
	// Bounded: one wave's answers are live at once, about twice their
	// size (the messages read and their JSON encoding, ~800 MiB); the
	// cut makes them garbage, so later waves reuse that memory and RSS
	// stays near the soft limit instead of adding a wave each time.
	const bound = 1280 << 10 // KiB: GOMEMLIMIT 1 GiB + 25%
	for i, p := range peaks {
		if p > bound {
			t.Fatalf("wave %d: RSS peak %d MiB above the bound %d MiB", i+1, p>>10, bound>>10)
		}
	}
	t.Logf("RSS bound %d MiB (GOMEMLIMIT 1 GiB + 25%%; base %d MiB); peaks %d, %d, %d MiB", bound>>10, baseRSS>>10,
		peaks[0]>>10, peaks[1]>>10, peaks[2]>>10)
	if r := <-parked; r == nil || r.Status != http.StatusOK {
		t.Fatalf("long poll over the write timeout: %+v", r)
	}
}

var plain struct {
	once sync.Once
	path string
	err  error
}

// plainBinary builds mqgate without -race (once), or returns binPath when
// that is already such a build (MQGATE_E2E_RACE=0).
func plainBinary(t *testing.T) string {
	t.Helper()
	if os.Getenv("MQGATE_E2E_RACE") == "0" {
		return binPath
	}
	plain.once.Do(func() {
		plain.path = filepath.Join(filepath.Dir(binPath), "mqgate-norace")
		out, err := exec.Command("go", "build", "-o", plain.path, "github.com/mqgate/mqgate/cmd/mqgate").CombinedOutput()
		if err != nil {
			plain.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if plain.err != nil {
		t.Fatal(plain.err)
	}
	return plain.path
}

// dialSmallWindow connects with a 4 KiB receive buffer, set before the
// handshake so the advertised window stays small: the server's writes
// block once its socket buffer is full.
func dialSmallWindow(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rssKiB is the VmRSS of pid.
func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// sockets counts pid's open sockets.
func sockets(t *testing.T, pid int) int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
