package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `mqgate pub` and `mqgate sub` over the streams, as processes against the
// real binary: deduplicationIds from a run id and the line number, the
// summary, exit 6 on interrupt, and `sub --count N` never leasing past N.

type pubSummaryLine struct {
	Summary struct {
		RunID       string `json:"runId"`
		Stored      int    `json:"stored"`
		Replayed    int    `json:"replayed"`
		FirstID     string `json:"firstMessageId"`
		LastID      string `json:"lastMessageId"`
		LastLine    int    `json:"lastLine"`
		Interrupted bool   `json:"interrupted"`
	} `json:"summary"`
}

func TestStreamCLIPubRunIDAndSub(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "cp", 2)
	want(t, s.do(t, "PUT", "/v1/groups/cpg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "cp"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), 201)

	// Rows per line (line numbers count the empty one), then the summary.
	r := runCLI(t, s, "a\nb\n\nc\n", "pub", "cp", "--run-id", "r7").want(t, 0, "pub stdin")
	rows := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(rows) != 5 || !strings.HasPrefix(rows[0], "LINE") || !strings.HasPrefix(rows[3], "4 ") ||
		!strings.HasPrefix(rows[4], "stored 3 messages") || !strings.Contains(rows[4], "every line up to 4") {
		t.Fatalf("pub stdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "run id r7") {
		t.Fatalf("run id not printed at start: %q", r.stderr)
	}
	// The same run again stores nothing new; --quiet -o json is the summary alone.
	r = runCLI(t, s, "a\nb\n\nc\n", "pub", "cp", "--run-id", "r7", "--quiet", "-o", "json").want(t, 0, "pub re-run")
	var sum pubSummaryLine
	r.json(t, &sum)
	if sum.Summary.Stored != 3 || sum.Summary.Replayed != 3 || sum.Summary.LastLine != 4 || sum.Summary.RunID != "r7" || sum.Summary.Interrupted {
		t.Fatalf("re-run summary %+v", sum.Summary)
	}
	// Another run id stores them again; --no-dedup too.
	runCLI(t, s, "d\ne\n", "pub", "cp", "--quiet").want(t, 0, "pub with a new run id")
	runCLI(t, s, "x\n", "pub", "cp", "--no-dedup", "--run-id", "r8").want(t, 1, "--no-dedup with --run-id")
	runCLI(t, s, "x\n", "pub", "cp", "--run-id", "has space").want(t, 1, "a run id with a space")
	runCLI(t, s, "x\n", "pub", "nope").want(t, 2, "pub to an unknown topic")
	runCLI(t, s, "", "sub", "nope", "--count", "1").want(t, 2, "sub of an unknown group")

	// 5 messages: --count 3 with 2 in hand at once must lower the stream's
	// limit before its ack, or a fourth is delivered to it: handed back
	// (nacked), it comes to the next sub as a retry, reconsumeTimes 1.
	r = runCLI(t, s, "", "sub", "cpg", "--count", "3", "--batch", "2", "--invisible-seconds", "60").want(t, 0, "sub --count 3")
	first := strings.Fields(r.stdout)
	start := time.Now()
	r = runCLI(t, s, "", "sub", "cpg", "--count", "2", "-o", "json").want(t, 0, "sub --count 2")
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("the second sub took %v: the first leased past its --count", d)
	}
	all := first
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m struct {
			Body           string `json:"body"`
			ReconsumeTimes int    `json:"reconsumeTimes"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("sub -o json line %q: %v", l, err)
		}
		if m.ReconsumeTimes != 0 {
			t.Fatalf("%q came back with reconsumeTimes %d: the first sub was delivered more than its --count", m.Body, m.ReconsumeTimes)
		}
		all = append(all, m.Body)
	}
	got := map[string]bool{}
	for _, b := range all {
		got[b] = true
	}
	if len(all) != 5 || len(got) != 5 || !got["a"] || !got["c"] || !got["e"] {
		t.Fatalf("subs printed %q then %q", first, r.stdout)
	}
	if r := runCLI(t, s, "", "sub", "cpg", "--once", "--wait", "1").want(t, 0, "sub --once"); r.stdout != "" {
		t.Fatalf("left over: %q", r.stdout)
	}
}

// TestStreamCLIPubInterrupt: SIGINT during a stdin pub prints what was
// stored on stdout and exits 6; a re-run with the run id completes it
// without duplicates.
func TestStreamCLIPubInterrupt(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "ci", 2)
	cmd := exec.Command(binPath, "pub", "ci", "-o", "json", "--run-id", "int1")
	cmd.Env = append(os.Environ(), "MQGATE_URL="+s.base, "MQGATE_KEY=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(stdin, "m-%d\n", i)
	}
	// Each row is printed once confirmed; stdin stays open, as a slow
	// producer's would.
	deadline := time.After(30 * time.Second)
	for rows := 0; rows < 10; {
		select {
		case l := <-lines:
			var row struct {
				Line int `json:"line"`
			}
			json.Unmarshal([]byte(l), &row)
			if row.Line == 0 {
				t.Fatalf("not a row: %q", l)
			}
			rows++
		case <-deadline:
			t.Fatalf("rows did not come: %s", stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	var last string
	for l := range lines {
		last = l
	}
	err = cmd.Wait()
	stdin.Close()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 6 {
		t.Fatalf("exit after SIGINT: %v, want 6; stderr %s", err, stderr.String())
	}
	var sum pubSummaryLine
	if err := json.Unmarshal([]byte(last), &sum); err != nil {
		t.Fatalf("last stdout line %q: %v", last, err)
	}
	if sum.Summary.Stored != 10 || sum.Summary.LastLine != 10 || !sum.Summary.Interrupted || sum.Summary.FirstID == "" {
		t.Fatalf("summary after SIGINT %+v", sum.Summary)
	}
	// The re-run: lines 1..10 replayed, 11..15 stored.
	var in strings.Builder
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&in, "m-%d\n", i)
	}
	r := runCLI(t, s, in.String(), "pub", "ci", "--run-id", "int1", "--quiet", "-o", "json").want(t, 0, "re-run")
	r.json(t, &sum)
	if sum.Summary.Stored != 15 || sum.Summary.Replayed != 10 {
		t.Fatalf("re-run summary %+v", sum.Summary)
	}
	var tp struct {
		Stats struct {
			Messages int `json:"messages"`
		} `json:"stats"`
	}
	s.do(t, "GET", "/v1/topics/ci", nil).JSON(t, &tp)
	if tp.Stats.Messages != 15 {
		t.Fatalf("topic holds %d messages, want 15", tp.Stats.Messages)
	}
}

// TestStreamCLIKeys: pub and sub send --key on the stream upgrade; a key
// without the grant exits 5.
func TestStreamCLIKeys(t *testing.T) {
	s, _ := startAuthServer(t)
	want(t, s.do(t, "PUT", "/v1/topics/orders", map[string]int{"queues": 1}, bearer(e2eAdminKey)...), 201)
	want(t, s.do(t, "PUT", "/v1/groups/billing", map[string]any{
		"subscriptions": []map[string]any{{"topic": "orders"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}, bearer(e2eAdminKey)...), 201)
	runCLI(t, s, "k1\nk2\n", "pub", "orders", "--quiet").want(t, 5, "pub without a key")
	runCLI(t, s, "k1\nk2\n", "pub", "orders", "--quiet", "--key", e2eSubKey).want(t, 5, "pub with a sub key")
	runCLI(t, s, "k1\nk2\n", "pub", "orders", "--quiet", "--key", e2ePubKey).want(t, 0, "pub with the pub key")
	runCLI(t, s, "", "sub", "billing", "--count", "1", "--key", e2ePubKey).want(t, 5, "sub with a pub key")
	r := runCLI(t, s, "", "sub", "billing", "--count", "2", "--key", e2eSubKey).want(t, 0, "sub with the sub key")
	if got := strings.Fields(r.stdout); len(got) != 2 || got[0] == got[1] {
		t.Fatalf("sub printed %q", r.stdout)
	}
}
