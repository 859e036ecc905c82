package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// server is one running mqgate process.
type server struct {
	t      testing.TB
	dir    string
	cmd    *exec.Cmd
	addr   string
	base   string
	exited chan struct{} // closed when the process has exited
	err    error         // Wait's result, valid after exited

	mu   sync.Mutex
	logs bytes.Buffer // everything the process wrote to stderr
}

// startServer runs mqgate serve on 127.0.0.1:0 over dataDir and waits for
// its "listening" log line. The process is stopped (SIGTERM) at cleanup.
// extra flags are appended to the command line.
func startServer(t testing.TB, dataDir string, extra ...string) *server {
	t.Helper()
	return startServerBin(t, binPath, dataDir, extra...)
}

// startServerBin is startServer with another build of mqgate.
func startServerBin(t testing.TB, bin, dataDir string, extra ...string) *server {
	t.Helper()
	s := &server{t: t, dir: dataDir, exited: make(chan struct{})}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir,
		"--log-format", "json", "--log-level", "info"}, extra...)
	s.cmd = exec.Command(bin, args...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Bytes()
			s.mu.Lock()
			s.logs.Write(line)
			s.logs.WriteByte('\n')
			s.mu.Unlock()
			var rec struct {
				Message string `json:"message"`
				Addr    string `json:"addr"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Message == "listening" && rec.Addr != "" {
				select {
				case addrc <- rec.Addr:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		<-readDone // Wait closes the pipe; read it to the end first
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case s.addr = <-addrc:
	case <-s.exited:
		t.Fatalf("mqgate exited before listening: %v\n%s", s.err, s.Logs())
	case <-timer.C:
		s.kill()
		t.Fatalf("mqgate did not log its address within 30s\n%s", s.Logs())
	}
	s.base = "http://" + s.addr
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			s.stop(t)
		}
		if strings.Contains(s.Logs(), "WARNING: DATA RACE") {
			t.Errorf("the server reported a data race:\n%s", s.Logs())
		}
	})
	return s
}

// Logs returns the process's stderr so far.
func (s *server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(t testing.TB) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("mqgate exited with %v after SIGTERM\n%s", s.err, s.Logs())
		}
	case <-timer.C:
		s.kill()
		t.Errorf("mqgate did not stop within 30s of SIGTERM\n%s", s.Logs())
	}
}

// kill sends SIGKILL (kill -9) and waits for the process to be gone.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// client is shared by all tests: keep-alive connections, a generous
// timeout so a hung server fails the test instead of hanging it.
var client = &http.Client{Timeout: 60 * time.Second}

// response is an answer read to the end.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v or fails the test.
func (r *response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// do sends a request. body may be nil, a string or []byte (sent as is,
// Content-Type application/json unless hdr says otherwise) or any other
// value (JSON-encoded).
func (s *server) do(t testing.TB, method, path string, body any, hdr ...string) *response {
	t.Helper()
	r, err := s.try(method, path, body, hdr...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// try is do without failing: for requests racing a kill.
func (s *server) try(method, path string, body any, hdr ...string) (*response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// want fails the test unless r has the status; every answer must also
// carry X-Request-Id.
func want(t testing.TB, r *response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatalf("no X-Request-Id on a %d answer", r.Status)
	}
}

// problem is the problem+json shape of every error.
type problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	RequestID string `json:"requestId"`
	Errors    []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

// wantProblem checks an error answer: status, content type, body shape,
// and (when fields are given) that each names an offending field.
func wantProblem(t testing.TB, r *response, status int, fields ...string) problem {
	t.Helper()
	want(t, r, status)
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q on a %d answer, want application/problem+json; body %s", ct, status, r.Body)
	}
	var p problem
	r.JSON(t, &p)
	if p.Status != status || p.Type == "" || p.Title == "" || p.Detail == "" {
		t.Fatalf("problem body %s: want status %d with type, title and detail", r.Body, status)
	}
	if p.RequestID != r.Header.Get("X-Request-Id") {
		t.Fatalf("problem requestId %q, header %q", p.RequestID, r.Header.Get("X-Request-Id"))
	}
	for _, f := range fields {
		found := false
		for _, e := range p.Errors {
			if e.Field == f && e.Message != "" {
				found = true
			}
		}
		if !found {
			t.Fatalf("problem %s: want an error on field %q", r.Body, f)
		}
	}
	return p
}

// checkFor retries fn until it returns nil or total elapses.
func checkFor(t testing.TB, total, every time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", total, err)
		}
		time.Sleep(every)
	}
}
