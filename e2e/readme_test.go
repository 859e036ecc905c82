package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestREADME runs README.md literally, top to bottom, as a new user would
// (README "Development" describes the convention):
//
//   - the block marked <!-- readme-test: server --> holds the server
//     command (`mqgate serve ...`); the test starts it with its flags, on
//     127.0.0.1:0 with a temporary data directory;
//   - every other sh block runs in order, one command at a time, in one
//     bash (variables carry over; pipefail), in a temporary directory,
//     with this build as `mqgate` on PATH, MQGATE_URL set to the server
//     and localhost:8080 / 127.0.0.1:8080 pointed at it;
//   - a command that exits non-zero, a curl answered with an HTTP error
//     (curl runs with --fail-with-body), or a command still running after
//     readmeLineTimeout fails the test, naming the README line;
//   - <!-- readme-test: skip (why) --> above a block leaves it out;
//     <!-- readme-test: allow-http-errors --> lets its curls get 4xx.
func TestREADME(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readmeBlocks(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := runREADME(t, blocks, readmeLineTimeout, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// readmeLineTimeout bounds each README command: the longest waits in it
// (a 5 s long poll, `sub --count`) take a few seconds.
const readmeLineTimeout = 30 * time.Second

// readmeBlock is one fenced shell block of the README.
type readmeBlock struct {
	line int    // the README line of its first command line
	mode string // "", "skip", "server" or "allow-http-errors"
	cmds []readmeCmd
}

// readmeCmd is one complete shell command (continuation lines joined).
type readmeCmd struct {
	line int
	text string
}

var readmeMark = regexp.MustCompile(`^<!--\s*readme-test:\s*([a-z-]+)\b.*-->\s*$`)

// readmeBlocks finds the README's sh/bash/shell fences, each with the
// readme-test mark on the line before its fence (blank lines between
// are allowed), split into complete commands.
func readmeBlocks(md string) ([]readmeBlock, error) {
	lines := strings.Split(md, "\n")
	var blocks []readmeBlock
	mark := ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if m := readmeMark.FindStringSubmatch(l); m != nil {
			switch m[1] {
			case "skip", "server", "allow-http-errors":
			default:
				return nil, fmt.Errorf("README.md:%d: unknown readme-test mark %q", i+1, m[1])
			}
			mark = m[1]
			continue
		}
		if !strings.HasPrefix(l, "```") {
			if l != "" {
				mark = "" // a mark applies to the block right below it only
			}
			continue
		}
		lang := strings.TrimPrefix(l, "```")
		start := i + 1
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("README.md:%d: unclosed fence", i+1)
		}
		i = end
		if lang != "sh" && lang != "bash" && lang != "shell" {
			mark = ""
			continue
		}
		b := readmeBlock{line: start + 1, mode: mark}
		mark = ""
		cmds, err := splitCommands(lines[start:end], start+1)
		if err != nil {
			return nil, err
		}
		b.cmds = cmds
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// splitCommands joins lines into complete shell commands: a command ends
// at the first line where what has been gathered parses (bash -n), so
// continuations, quotes and loops over several lines are one command.
// Blank lines and lines holding only a comment are dropped.
func splitCommands(lines []string, first int) ([]readmeCmd, error) {
	var cmds []readmeCmd
	var cur []string
	curLine := 0
	for i, l := range lines {
		if len(cur) == 0 {
			if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			curLine = first + i
		}
		cur = append(cur, l)
		text := strings.Join(cur, "\n")
		if strings.HasSuffix(strings.TrimRight(l, " "), "\\") {
			continue
		}
		if exec.Command("bash", "-n", "-c", text).Run() != nil {
			continue
		}
		cmds = append(cmds, readmeCmd{line: curLine, text: text})
		cur = nil
	}
	if len(cur) > 0 {
		return nil, fmt.Errorf("README.md:%d: the command does not end: %s", curLine, strings.Join(cur, "\n"))
	}
	return cmds, nil
}

// runREADME starts the server block's command and runs the other blocks
// against it, each command bounded by perLine and all by total. It
// returns the first README command that failed.
func runREADME(t *testing.T, blocks []readmeBlock, perLine, total time.Duration) error {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("the README test needs curl:", err)
	}
	var srv *server
	for _, b := range blocks {
		if b.mode != "server" {
			continue
		}
		for _, c := range b.cmds {
			args := strings.Fields(c.text)
			if len(args) < 2 || args[0] != "mqgate" || args[1] != "serve" || srv != nil {
				return fmt.Errorf("README.md:%d: the server block holds one `mqgate serve` command, not %q", c.line, c.text)
			}
			srv = startServer(t, t.TempDir(), args[2:]...)
		}
	}
	if srv == nil {
		return errors.New("README.md has no <!-- readme-test: server --> block")
	}

	work := t.TempDir()
	sh := exec.Command("bash", "--noprofile", "--norc")
	sh.Dir = work
	sh.Env = append(os.Environ(), "PATH="+filepath.Dir(binPath)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MQGATE_URL="+srv.base, "MQGATE_KEY=", "HOME="+work)
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a hung line is killed with its children
	stdin, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	sh.Stdout, sh.Stderr = pw, pw
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = sh.Wait()
		pw.Close()
		close(exited)
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	defer func() {
		_ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
		<-exited
		for range lines {
		}
	}()

	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	sentinel := "__README_DONE_" + hex.EncodeToString(nonce[:])
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("writing to bash: %v", err)
		}
	}
	send("exec 2>&1; set -o pipefail")
	const failing = `curl() { command curl --fail-with-body "$@"; }`
	send(failing)

	deadline := time.Now().Add(total)
	n := 0
	for _, b := range blocks {
		if b.mode == "skip" || b.mode == "server" {
			continue
		}
		if b.mode == "allow-http-errors" {
			send("unset -f curl")
		}
		for _, c := range b.cmds {
			n++
			text := strings.NewReplacer("localhost:8080", srv.addr, "127.0.0.1:8080", srv.addr).Replace(c.text)
			file := filepath.Join(work, fmt.Sprintf(".readme-%03d.sh", n))
			if err := os.WriteFile(file, []byte(text+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			send(fmt.Sprintf("source %s </dev/null; printf '\\n%s %%d\\n' $?", file, sentinel))
			wait := perLine
			if left := time.Until(deadline); left < wait {
				wait = left
			}
			timer := time.NewTimer(wait)
			var out strings.Builder
			rc := -1
		read:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						timer.Stop()
						return fmt.Errorf("README.md:%d: bash ended during\n%s\noutput:\n%s", c.line, c.text, out.String())
					}
					if rest, ok := strings.CutPrefix(l, sentinel+" "); ok {
						fmt.Sscan(rest, &rc)
						break read
					}
					out.WriteString(l + "\n")
				case <-timer.C:
					return fmt.Errorf("README.md:%d: still running after %v:\n%s\noutput so far:\n%s", c.line, wait, c.text, out.String())
				}
			}
			timer.Stop()
			if rc != 0 {
				return fmt.Errorf("README.md:%d: exit status %d:\n%s\noutput:\n%s", c.line, rc, c.text, out.String())
			}
			t.Logf("README.md:%d ok: %s", c.line, firstLine(c.text))
		}
		if b.mode == "allow-http-errors" {
			send(failing)
		}
	}
	if n == 0 {
		return errors.New("README.md: no command ran")
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestREADMEHarnessFails: the harness fails a README whose block errors,
// whose curl is answered 404, or whose command hangs.
func TestREADMEHarnessFails(t *testing.T) {
	for name, md := range map[string]string{
		"error": "<!-- readme-test: server -->\n```sh\nmqgate serve\n```\n\n```sh\ntrue\nfalse\n```\n",
		"http":  "<!-- readme-test: server -->\n```sh\nmqgate serve\n```\n\n```sh\ncurl -s localhost:8080/v1/topics/none\n```\n",
		"hang": "<!-- readme-test: server -->\n```sh\nmqgate serve\n```\n\n```sh\nmqgate topic create t\n" +
			"mqgate group create g --subscribe t\nmqgate sub g --count 1 --wait 1\n```\n",
	} {
		t.Run(name, func(t *testing.T) {
			blocks, err := readmeBlocks(md)
			if err != nil {
				t.Fatal(err)
			}
			err = runREADME(t, blocks, 3*time.Second, 20*time.Second)
			if err == nil {
				t.Fatalf("the harness passed a README whose %s block is broken", name)
			}
			t.Logf("failed as it should: %v", err)
		})
	}
}
