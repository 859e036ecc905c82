package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runCLIEnv runs `mqgate args...` with env added to the test's
// environment (MQGATE_URL and MQGATE_KEY cleared first).
func runCLIEnv(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(append(os.Environ(), "MQGATE_URL=", "MQGATE_KEY=", "MQGATE_API_KEY="), env...)
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

// TestCLIGlobalFlagsAnywhere: the global flags work before the command
// word as after it (docs/cli.md), for client commands, backup and
// healthcheck alike; usage errors exit 1, never 2 ("not found").
func TestCLIGlobalFlagsAnywhere(t *testing.T) {
	s := startServer(t, t.TempDir())
	nowhere := []string{"MQGATE_URL=http://127.0.0.1:1"} // the flag must win over it

	runCLIEnv(t, nowhere, "--url", s.base, "topic", "create", "orders", "--queues", "2").want(t, 0, "--url before topic create")
	r := runCLIEnv(t, nowhere, "--url="+s.base, "-o", "json", "topic", "list").want(t, 0, "--url= -o json before topic list")
	if !strings.Contains(r.stdout, `"orders"`) || !strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
		t.Fatalf("-o json before the command: %q", r.stdout)
	}
	runCLIEnv(t, nowhere, "topic", "list", "--url", s.base).want(t, 0, "--url after")
	runCLIEnv(t, nil, "--url").want(t, 1, "--url without a value")
	runCLIEnv(t, nil).want(t, 1, "no command")
	runCLIEnv(t, nil, "--url", s.base, "nonsense").want(t, 1, "unknown command after a global flag")
	if r := runCLIEnv(t, nil, "--queues", "2", "topic", "list").want(t, 1, "a command flag before the command"); !strings.Contains(r.stderr, "before the command") {
		t.Fatalf("a command's flag before the command: %q", r.stderr)
	}
	runCLIEnv(t, nil, "--url", s.base, "topic", "get", "missing").want(t, 2, "not found is 2")

	// healthcheck: --url (or MQGATE_URL) like every client command.
	runCLIEnv(t, nil, "healthcheck", "--url", s.base).want(t, 0, "healthcheck --url")
	runCLIEnv(t, []string{"MQGATE_URL=" + s.base}, "healthcheck").want(t, 0, "healthcheck with MQGATE_URL")
	runCLIEnv(t, nowhere, "--url", s.base, "healthcheck").want(t, 0, "--url before healthcheck")
	runCLIEnv(t, nil, "healthcheck", "--url", "http://127.0.0.1:1").want(t, 1, "healthcheck, no server")
	runCLIEnv(t, nil, "healthcheck", "--bogus").want(t, 1, "healthcheck usage error (Docker reserves 2)")

	// backup: --url / MQGATE_URL, usage errors 1.
	dir := t.TempDir()
	runCLIEnv(t, []string{"MQGATE_URL=" + s.base}, "backup", "--out", filepath.Join(dir, "a.db")).want(t, 0, "backup with MQGATE_URL")
	runCLIEnv(t, nowhere, "--url", s.base, "backup", "--out", filepath.Join(dir, "b.db")).want(t, 0, "--url before backup")
	runCLIEnv(t, nil, "backup").want(t, 1, "backup without --out")
	runCLIEnv(t, nil, "backup", "--out", filepath.Join(dir, "c.db"), "--url", s.base, "--data", dir).want(t, 1, "backup --url and --data")
	runCLIEnv(t, nil, "compact", "--bogus").want(t, 1, "compact usage error")
	runCLIEnv(t, nil, "serve", "--bogus").want(t, 1, "serve usage error")
}

// TestCLIBackupKey: backup takes the admin key as --key / MQGATE_KEY like
// every client command; --api-key / MQGATE_API_KEY still work (hidden).
func TestCLIBackupKey(t *testing.T) {
	s, _ := startAuthServer(t)
	dir := t.TempDir()
	url := "MQGATE_URL=" + s.base
	r := runCLIEnv(t, []string{url}, "backup", "--out", filepath.Join(dir, "none.db"))
	if r.code == 0 || !strings.Contains(r.stderr, "401") {
		t.Fatalf("backup without a key: %d %s", r.code, r.stderr)
	}
	runCLIEnv(t, []string{url, "MQGATE_KEY=" + e2eAdminKey}, "backup", "--out", filepath.Join(dir, "a.db")).want(t, 0, "MQGATE_KEY")
	runCLIEnv(t, []string{url}, "--key", e2eAdminKey, "backup", "--out", filepath.Join(dir, "b.db")).want(t, 0, "--key before backup")
	runCLIEnv(t, []string{url}, "backup", "--api-key", e2eAdminKey, "--out", filepath.Join(dir, "c.db")).want(t, 0, "--api-key alias")
	runCLIEnv(t, []string{url, "MQGATE_API_KEY=" + e2eAdminKey}, "backup", "--out", filepath.Join(dir, "d.db")).want(t, 0, "MQGATE_API_KEY alias")
	r = runCLIEnv(t, nil, "backup", "-h")
	if strings.Contains(r.stderr, "-api-key string") || !strings.Contains(r.stderr, "-key string") {
		t.Fatalf("backup -h shows the hidden alias or lacks --key:\n%s", r.stderr)
	}
}

// TestCLITopicWording: re-creating an unchanged topic says so, a change
// says "updated", and counts are singular when they are one.
func TestCLITopicWording(t *testing.T) {
	s := startServer(t, t.TempDir())
	env := []string{"MQGATE_URL=" + s.base}
	r := runCLIEnv(t, env, "topic", "create", "orders", "--queues", "4").want(t, 0, "create")
	if want := "topic orders created: 4 queues, retention 72 hours\n"; r.stdout != want {
		t.Fatalf("create: %q, want %q", r.stdout, want)
	}
	r = runCLIEnv(t, env, "topic", "create", "orders", "--queues", "4").want(t, 0, "re-create")
	if want := "topic orders unchanged: 4 queues, retention 72 hours\n"; r.stdout != want {
		t.Fatalf("re-create: %q, want %q", r.stdout, want)
	}
	r = runCLIEnv(t, env, "topic", "create", "orders", "--queues", "6").want(t, 0, "grow")
	if !strings.HasPrefix(r.stdout, "topic orders updated: 6 queues") {
		t.Fatalf("grow: %q", r.stdout)
	}
	r = runCLIEnv(t, env, "topic", "create", "one", "--queues", "1", "--retention-hours", "1").want(t, 0, "singular")
	if want := "topic one created: 1 queue, retention 1 hour\n"; r.stdout != want {
		t.Fatalf("singular: %q, want %q", r.stdout, want)
	}

	// Groups the same way.
	for i, want := range []string{"group audit created\n", "group audit unchanged\n"} {
		r = runCLIEnv(t, env, "group", "create", "audit", "--subscribe", "orders", "--from", "FIRST_OFFSET").want(t, 0, "group create")
		if r.stdout != want {
			t.Fatalf("group create #%d: %q, want %q", i+1, r.stdout, want)
		}
	}
	r = runCLIEnv(t, env, "group", "create", "audit", "--subscribe", "orders", "--from", "FIRST_OFFSET", "--max-reconsume", "3").want(t, 0, "group change")
	if r.stdout != "group audit updated\n" {
		t.Fatalf("group change: %q", r.stdout)
	}
}
