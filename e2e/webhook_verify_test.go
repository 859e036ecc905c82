package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Receivers in other languages verify every delivery with the official
// Standard Webhooks library (e2e/receivers: receiver.py with standardwebhooks
// from PyPI, receiver.js with standardwebhooks from npm). The libraries are
// installed, pinned, by e2e/receivers/setup.sh into build/e2e-deps
// (MQGATE_E2E_DEPS overrides); .ci/run installs python3, node and runs it.
// A test installs them itself when the directory is missing, and skips
// only when the interpreter is absent.

var (
	depsOnce sync.Once
	depsErr  error
)

func e2eDeps() string {
	if d := os.Getenv("MQGATE_E2E_DEPS"); d != "" {
		return d
	}
	d, _ := filepath.Abs(filepath.Join("..", "build", "e2e-deps"))
	return d
}

// receiverDeps installs the libraries once per test binary when missing.
func receiverDeps(t *testing.T, probe string) string {
	t.Helper()
	dir := e2eDeps()
	if _, err := os.Stat(filepath.Join(dir, probe)); err != nil {
		depsOnce.Do(func() {
			out, err := exec.Command("bash", filepath.Join("receivers", "setup.sh"), dir).CombinedOutput()
			if err != nil {
				depsErr = fmt.Errorf("e2e/receivers/setup.sh: %v\n%s", err, out)
			}
		})
		if depsErr != nil {
			t.Fatal(depsErr)
		}
	}
	return dir
}

// hookRecord is one line of a receiver's output.
type hookRecord struct {
	ID         string   `json:"id"`
	Attempt    string   `json:"attempt"`
	Verified   bool     `json:"verified"`
	MessageIDs []string `json:"messageIds"`
	Status     int      `json:"status"`
}

// extReceiver is a receiver process.
type extReceiver struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}

	mu      sync.Mutex
	records []hookRecord
	stderr  strings.Builder
}

func startExtReceiver(t *testing.T, lang string) *extReceiver {
	t.Helper()
	var cmd *exec.Cmd
	switch lang {
	case "python":
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed: the Python standardwebhooks receiver test needs it (.ci/run installs it)")
		}
		dir := receiverDeps(t, filepath.Join("venv", "bin", "python"))
		cmd = exec.Command(filepath.Join(dir, "venv", "bin", "python"), filepath.Join("receivers", "receiver.py"))
	case "node":
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("node is not installed: the JavaScript standardwebhooks receiver test needs it (.ci/run installs it)")
		}
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("npm is not installed: the JavaScript standardwebhooks receiver test needs it (.ci/run installs it)")
		}
		dir := receiverDeps(t, filepath.Join("node", "node_modules", "standardwebhooks"))
		cmd = exec.Command("node", filepath.Join("receivers", "receiver.js"))
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node", "node_modules"))
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "WEBHOOK_SECRET="+hookSecret)
	rc := &extReceiver{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &rc.mu, b: &rc.stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		defer close(rc.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if port, ok := strings.CutPrefix(line, "LISTEN "); ok {
				listening <- port
				continue
			}
			var r hookRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Errorf("%s receiver printed %q", lang, line)
				continue
			}
			rc.mu.Lock()
			rc.records = append(rc.records, r)
			rc.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-rc.done
		_ = cmd.Wait()
	})
	select {
	case port := <-listening:
		rc.url = "http://127.0.0.1:" + port + "/hook"
	case <-rc.done:
		t.Fatalf("%s receiver exited: %s", lang, rc.stderrText())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s receiver did not listen within 30s: %s", lang, rc.stderrText())
	}
	return rc
}

func (rc *extReceiver) stderrText() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.stderr.String()
}

func (rc *extReceiver) snapshot() []hookRecord {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookRecord(nil), rc.records...)
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestWebhookStandardLibraries: the official Python and JavaScript
// Standard Webhooks libraries verify 100% of deliveries, retries
// included; each message keeps one webhook-id (its message id) across
// attempts, and webhook-attempt counts them.
func TestWebhookStandardLibraries(t *testing.T) {
	for _, lang := range []string{"python", "node"} {
		t.Run(lang, func(t *testing.T) {
			rc := startExtReceiver(t, lang)
			s := startPushServer(t, t.TempDir())
			createTopic(t, s, "sw", 2)
			putPushGroup(t, s, "sw", "sw", map[string]any{"url": rc.url, "secret": hookSecret, "maxInFlight": 4}, nil)
			const n = 60
			var msgs []map[string]any
			failFirst := map[string]bool{}
			for i := range n {
				body := fmt.Sprint("m-", i)
				if i%4 == 0 {
					body = fmt.Sprint("fail-first-", i)
				}
				msgs = append(msgs, map[string]any{"body": body})
			}
			r := s.do(t, "POST", "/v1/topics/sw/messages/batch", map[string]any{"messages": msgs})
			want(t, r, 201)
			var res struct {
				Results []pubResult `json:"results"`
			}
			r.JSON(t, &res)
			for i, pr := range res.Results {
				if i%4 == 0 {
					failFirst[pr.MessageID] = true
				}
			}
			var recs []hookRecord
			checkFor(t, 60*time.Second, 20*time.Millisecond, func() error {
				recs = rc.snapshot()
				ok := map[string]bool{}
				for _, r := range recs {
					if r.Status < 300 {
						for _, id := range r.MessageIDs {
							ok[id] = true
						}
					}
				}
				if len(ok) < n {
					return fmt.Errorf("%d of %d messages acknowledged (%d requests)", len(ok), n, len(recs))
				}
				return nil
			})
			attempts := map[string]map[string]bool{} // webhook-id → attempts seen
			for _, r := range recs {
				if !r.Verified {
					t.Fatalf("%s library refused a delivery: %+v; stderr %s", lang, r, rc.stderrText())
				}
				if len(r.MessageIDs) != 1 || r.ID != r.MessageIDs[0] {
					t.Fatalf("webhook-id %q for messages %v: want the message id", r.ID, r.MessageIDs)
				}
				if attempts[r.ID] == nil {
					attempts[r.ID] = map[string]bool{}
				}
				attempts[r.ID][r.Attempt] = true
			}
			if len(attempts) != n {
				t.Fatalf("%d distinct webhook-ids for %d messages", len(attempts), n)
			}
			for id, seen := range attempts {
				switch {
				case failFirst[id] && !(seen["1"] && seen["2"]):
					t.Fatalf("message %s failed once: attempts %v, want 1 and 2 under one webhook-id", id, seen)
				case !failFirst[id] && !seen["1"]:
					t.Fatalf("message %s: attempts %v", id, seen)
				}
			}
			t.Logf("%s: %d requests, all verified, %d webhook-ids", lang, len(recs), len(attempts))
		})
	}
}
