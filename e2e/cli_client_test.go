package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliResult is one run of a CLI command.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs `mqgate args...` against s (MQGATE_URL) with stdin.
func runCLI(t *testing.T, s *server, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(os.Environ(), "MQGATE_URL="+s.base, "MQGATE_KEY=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mqgate %v did not finish: %s %s", args, out.String(), errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mqgate %v: %v", args, err)
	}
	return cliResult{out.String(), errb.String(), code}
}

func (r cliResult) want(t *testing.T, code int, what string) cliResult {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
	return r
}

func (r cliResult) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
}

// TestCLIClient runs every client command as a process against the real
// server: tables by default, -o json for scripts, and exit codes.
func TestCLIClient(t *testing.T) {
	s := startServer(t, t.TempDir())

	r := runCLI(t, s, "", "help").want(t, 0, "help")
	for _, c := range []string{"topic", "group", "pub", "sub", "ack", "nack", "dlq", "redrive", "offsets", "reset"} {
		if !strings.Contains(r.stdout, "mqgate "+c) {
			t.Fatalf("help does not list %s:\n%s", c, r.stdout)
		}
	}

	// topic
	runCLI(t, s, "", "topic", "create", "orders", "--queues", "2").want(t, 0, "topic create")
	r = runCLI(t, s, "", "topic", "list").want(t, 0, "topic list")
	if !strings.HasPrefix(r.stdout, "TOPIC") || !strings.Contains(r.stdout, "orders") {
		t.Fatalf("topic list table:\n%s", r.stdout)
	}
	var tp struct {
		Name   string `json:"name"`
		Queues int    `json:"queues"`
	}
	runCLI(t, s, "", "topic", "get", "orders", "-o", "json").want(t, 0, "topic get").json(t, &tp)
	if tp.Name != "orders" || tp.Queues != 2 {
		t.Fatalf("topic get: %+v", tp)
	}
	runCLI(t, s, "", "topic", "get", "nope").want(t, 2, "unknown topic")
	runCLI(t, s, "", "topic", "create", "orders", "--queues", "1").want(t, 3, "shrinking a topic")
	runCLI(t, s, "", "topic", "frobnicate").want(t, 1, "unknown verb")
	runCLI(t, s, "", "topic", "list", "-o", "yaml").want(t, 1, "bad -o")

	// pub: one message, idempotent retries, stdin lines.
	var pr struct {
		MessageID string `json:"messageId"`
		Replayed  bool   `json:"replayed"`
	}
	runCLI(t, s, "", "pub", "orders", "first", "--tags", "created", "--keys", "order-1", "--idempotency-key", "k1", "-o", "json").want(t, 0, "pub").json(t, &pr)
	var again struct {
		MessageID string `json:"messageId"`
		Replayed  bool   `json:"replayed"`
	}
	runCLI(t, s, "", "pub", "orders", "first", "--tags", "created", "--keys", "order-1", "--idempotency-key", "k1", "-o", "json").want(t, 0, "pub retry").json(t, &again)
	if again.MessageID != pr.MessageID || !again.Replayed {
		t.Fatalf("retry %+v of %+v", again, pr)
	}
	runCLI(t, s, "", "pub", "orders", "changed", "--idempotency-key", "k1").want(t, 3, "key reused with another body")
	r = runCLI(t, s, "l1\nl2\n\nl3\n", "pub", "orders", "--batch", "2").want(t, 0, "pub stdin")
	if n := strings.Count(r.stdout, "\n"); n != 5 { // header + 3 + the summary
		t.Fatalf("pub stdin table:\n%s", r.stdout)
	}
	runCLI(t, s, "", "pub", "nope", "x").want(t, 2, "pub to an unknown topic")
	runCLI(t, s, "", "pub").want(t, 1, "pub without a topic")

	// group, sub (acks what it wrote), offsets.
	runCLI(t, s, "", "group", "create", "g", "--subscribe", "orders", "--from", "FIRST_OFFSET").want(t, 0, "group create")
	r = runCLI(t, s, "", "group", "list").want(t, 0, "group list")
	if !strings.Contains(r.stdout, "g ") || !strings.Contains(r.stdout, "CLUSTERING") {
		t.Fatalf("group list:\n%s", r.stdout)
	}
	r = runCLI(t, s, "", "sub", "g", "--count", "4", "--wait", "5").want(t, 0, "sub")
	got := strings.Fields(r.stdout)
	if len(got) != 4 || !strings.Contains(r.stdout, "first") || !strings.Contains(r.stdout, "l3") {
		t.Fatalf("sub printed %q", r.stdout)
	}
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var ol struct {
			Offsets []struct {
				Topic string `json:"topic"`
				Lag   int    `json:"lag"`
			} `json:"offsets"`
		}
		runCLI(t, s, "", "offsets", "g", "-o", "json").want(t, 0, "offsets").json(t, &ol)
		for _, o := range ol.Offsets {
			if o.Lag != 0 {
				return fmt.Errorf("lag %d on %s after sub acked everything", o.Lag, o.Topic)
			}
		}
		return nil
	})

	// nack to the DLQ, list, redrive, and the handles' exit codes.
	runCLI(t, s, "", "pub", "orders", "doomed").want(t, 0, "pub")
	r = runCLI(t, s, "", "sub", "g", "--count", "1", "--no-ack", "-o", "json").want(t, 0, "sub --no-ack")
	var m struct {
		Body          string `json:"body"`
		ReceiptHandle string `json:"receiptHandle"`
	}
	json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &m)
	if m.Body != "doomed" || m.ReceiptHandle == "" {
		t.Fatalf("sub -o json line %q", r.stdout)
	}
	runCLI(t, s, "", "nack", "g", m.ReceiptHandle, "--delay-level", "-1").want(t, 0, "nack to DLQ")
	runCLI(t, s, "", "ack", "g", m.ReceiptHandle).want(t, 3, "ack after nack")
	runCLI(t, s, "", "ack", "g", "forged").want(t, 3, "ack of a forged handle")
	checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		r := runCLI(t, s, "", "dlq", "g").want(t, 0, "dlq")
		if !strings.Contains(r.stdout, "doomed") {
			return fmt.Errorf("dlq:\n%s", r.stdout)
		}
		return nil
	})
	var rd struct {
		Redriven int `json:"redriven"`
	}
	runCLI(t, s, "", "redrive", "g", "-o", "json").want(t, 0, "redrive").json(t, &rd)
	if rd.Redriven != 1 {
		t.Fatalf("redriven %d", rd.Redriven)
	}
	r = runCLI(t, s, "", "sub", "g", "--count", "1", "--wait", "10").want(t, 0, "sub the redriven message")
	if strings.TrimSpace(r.stdout) != "doomed" {
		t.Fatalf("after redrive sub printed %q", r.stdout)
	}

	// reset back to the start: everything is lag again.
	r = runCLI(t, s, "", "reset", "g", "--topic", "orders", "--to", "first_offset").want(t, 0, "reset")
	if !strings.Contains(r.stdout, "COMMITTED") {
		t.Fatalf("reset table:\n%s", r.stdout)
	}
	runCLI(t, s, "", "reset", "g", "--topic", "orders", "--to", "yesterday").want(t, 1, "bad position")
	runCLI(t, s, "", "offsets", "nope").want(t, 2, "unknown group")
	runCLI(t, s, "", "group", "delete", "g").want(t, 0, "group delete")
	runCLI(t, s, "", "topic", "delete", "orders").want(t, 0, "topic delete")

	// Transport errors: 4.
	dead := &server{base: "http://127.0.0.1:1"}
	runCLI(t, dead, "", "topic", "list").want(t, 4, "no server")
}

// TestCLISubInterrupt: `mqgate sub` streams until SIGINT, exits 0, and has
// acked exactly what it wrote: nothing comes back to a later consumer.
func TestCLISubInterrupt(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "st", 2)
	want(t, s.do(t, "PUT", "/v1/groups/sg", map[string]any{
		"subscriptions": []map[string]any{{"topic": "st"}},
		"consumeFrom":   map[string]any{"position": "FIRST_OFFSET"},
	}), 201)
	cmd := exec.Command(binPath, "sub", "sg", "-o", "json", "--wait", "20", "--batch", "3")
	cmd.Env = append(os.Environ(), "MQGATE_URL="+s.base)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	const n = 10
	for i := range n {
		want(t, s.do(t, "POST", "/v1/topics/st/messages", map[string]any{"body": fmt.Sprint("s-", i)}), 201)
	}
	seen := map[string]bool{}
	deadline := time.After(30 * time.Second)
	for len(seen) < n {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("sub ended early: %s", stderr.String())
			}
			var m struct {
				Body string `json:"body"`
			}
			json.Unmarshal([]byte(l), &m)
			if seen[m.Body] {
				t.Fatalf("%s printed twice", m.Body)
			}
			seen[m.Body] = true
		case <-deadline:
			t.Fatalf("sub printed %d of %d messages: %s", len(seen), n, stderr.String())
		}
	}
	// Now parked in a long poll: SIGINT ends it at once, cleanly.
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("sub after SIGINT: %v %s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("sub did not exit within 15s of SIGINT")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("sub took %v to exit", d)
	}
	// Everything written was acked: a new message is the only one left.
	want(t, s.do(t, "POST", "/v1/topics/st/messages", map[string]any{"body": "after"}), 201)
	r := runCLI(t, s, "", "sub", "sg", "--count", "1", "--wait", "10").want(t, 0, "sub after")
	if strings.TrimSpace(r.stdout) != "after" {
		t.Fatalf("a later consumer got %q, want only the new message", r.stdout)
	}
	if rest := runCLI(t, s, "", "sub", "sg", "--once", "--wait", "2").want(t, 0, "sub --once"); rest.stdout != "" {
		t.Fatalf("messages left after the interrupt: %q", rest.stdout)
	}
}
