package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestDocsClaimsMatchHelp checks the grep-able claims of README.md and
// docs/*.md against the binary's own help: every `mqgate COMMAND` written
// in code (backticks or a fenced block) is a command `mqgate help` lists,
// every --flag written after it is one `mqgate COMMAND -h` lists, and
// every row of the README's configuration table names a `serve` flag
// with the variable `serve -h` gives it.
func TestDocsClaimsMatchHelp(t *testing.T) {
	help, _ := exec.Command(binPath, "help").CombinedOutput()
	commands := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+mqgate ([a-z]+)`).FindAllStringSubmatch(string(help), -1) {
		commands[m[1]] = true
	}
	for _, c := range []string{"serve", "topic", "pub", "sub", "backup", "healthcheck", "version"} {
		if !commands[c] {
			t.Fatalf("`mqgate help` does not list %s:\n%s", c, help)
		}
	}
	commands["help"] = true
	// Every command's -h, gathered at once (each is a process start).
	flagHelp := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for cmd := range commands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, _ := exec.Command(binPath, cmd, "-h").CombinedOutput()
			mu.Lock()
			flagHelp[cmd] = string(out)
			mu.Unlock()
		}()
	}
	wg.Wait()
	flagsOf := func(cmd string) string { return flagHelp[cmd] }
	hasFlag := func(cmd, flag string) bool {
		return regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(flag) + `(\s|$)`).MatchString(flagsOf(cmd))
	}

	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	invocation := regexp.MustCompile(`(^|[^/\w.-])mqgate ([a-z][a-z-]*)([^|;&#` + "`" + `\n]*)`)
	flagRe := regexp.MustCompile(`(?:^|[\s\[(=])--([a-z][a-z0-9-]+)`)
	span := regexp.MustCompile("`[^`\n]+`")
	serveAddr := regexp.MustCompile(`--addr[ =](\S+)`)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../")
		var code []string // code spans and fenced lines, each with its line number
		var lines []int
		inFence, shell := false, false
		for i, l := range strings.Split(string(raw), "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") {
				inFence = !inFence
				lang := strings.TrimPrefix(t, "```")
				shell = lang == "" || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
				continue
			}
			if inFence {
				if shell { // without its comment: prose, not a command
					if j := strings.Index(l, "#"); j >= 0 && (j == 0 || l[j-1] == ' ') {
						l = l[:j]
					}
					code, lines = append(code, l), append(lines, i+1)
				}
				continue
			}
			for _, s := range span.FindAllString(l, -1) {
				code, lines = append(code, strings.Trim(s, "`")), append(lines, i+1)
			}
		}
		for k, c := range code {
			for _, m := range invocation.FindAllStringSubmatch(c, -1) {
				cmd, rest := m[2], m[3]
				if !commands[cmd] {
					t.Errorf("%s:%d: `mqgate %s` is not a command of `mqgate help`: %q", name, lines[k], cmd, c)
					continue
				}
				if cmd == "help" || cmd == "version" {
					continue
				}
				for _, f := range flagRe.FindAllStringSubmatch(rest, -1) {
					if !hasFlag(cmd, f[1]) {
						t.Errorf("%s:%d: `mqgate %s` has no flag --%s (mqgate %s -h): %q", name, lines[k], cmd, f[1], cmd, c)
					}
				}
				// A serve line beyond loopback that the server would refuse.
				if a := serveAddr.FindStringSubmatch(rest); cmd == "serve" && a != nil && !strings.HasPrefix(a[1], "127.") &&
					!strings.HasPrefix(a[1], "localhost") && !strings.HasPrefix(a[1], "[::1]") &&
					!strings.Contains(rest, "--api-keys") && !strings.Contains(rest, "--insecure-open") {
					t.Errorf("%s:%d: `mqgate serve --addr %s` without --api-keys or --insecure-open is refused at start: %q", name, lines[k], a[1], c)
				}
			}
			// docs/cli.md writes commands without the binary's name in its tables.
			if name == "docs/cli.md" {
				if w, rest, ok := strings.Cut(c, " "); ok && commands[w] && !strings.HasPrefix(c, "mqgate") {
					for _, f := range flagRe.FindAllStringSubmatch(" "+rest, -1) {
						if !hasFlag(w, f[1]) {
							t.Errorf("%s:%d: `%s` has no flag --%s (mqgate %s -h): %q", name, lines[k], w, f[1], w, c)
						}
					}
				}
			}
		}
	}

	// The README's configuration table: | `--flag` | `MQGATE_X` | default | meaning |
	readme, _ := os.ReadFile("../README.md")
	row := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)`(?: / `--([a-z0-9-]+)`)? \\| `(MQGATE_[A-Z0-9_]+)`")
	rows := row.FindAllStringSubmatch(string(readme), -1)
	if len(rows) < 20 {
		t.Fatalf("found %d rows of the README's configuration table", len(rows))
	}
	serveHelp := flagsOf("serve")
	for _, r := range rows {
		if !hasFlag("serve", r[1]) {
			t.Errorf("README configuration table: --%s is not a flag of `mqgate serve -h`", r[1])
			continue
		}
		if r[2] == "" && !strings.Contains(serveHelp, "(env "+r[3]+")") {
			t.Errorf("README configuration table: --%s's variable %s is not the one `serve -h` names", r[1], r[3])
		}
	}
	// And every serve flag is in the table.
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`).FindAllStringSubmatch(serveHelp, -1) {
		if !strings.Contains(string(readme), "`--"+m[1]+"`") {
			t.Errorf("`mqgate serve -h` lists --%s, the README's configuration table does not", m[1])
		}
	}
}
