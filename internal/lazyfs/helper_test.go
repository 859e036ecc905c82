package lazyfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Tests that map a file on the mount run that part in a child process,
// this test binary started again with LAZYFS_HELPER naming the part.
func TestMain(m *testing.M) {
	if name := os.Getenv("LAZYFS_HELPER"); name != "" {
		args := strings.Split(os.Getenv("LAZYFS_HELPER_ARGS"), "\n")
		var err error
		switch name {
		case "mmap":
			err = helperMmap(args[0])
		case "bbolt":
			err = helperBbolt(args[0], args[1])
		default:
			err = fmt.Errorf("no helper %q", name)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type helper struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *bufio.Reader
	stderr strings.Builder
}

func startHelper(t *testing.T, name string, args ...string) *helper {
	t.Helper()
	h := &helper{t: t, cmd: exec.Command(os.Args[0], "-test.run=^$")}
	h.cmd.Env = append(os.Environ(), "LAZYFS_HELPER="+name, "LAZYFS_HELPER_ARGS="+strings.Join(args, "\n"))
	h.cmd.Stderr = &h.stderr
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.stdout = bufio.NewReader(out)
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			h.kill()
		}
	})
	return h
}

// waitReady waits for the helper's "ready" line.
func (h *helper) waitReady() {
	h.t.Helper()
	line, err := h.stdout.ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		rest, _ := io.ReadAll(h.stdout)
		_ = h.cmd.Wait()
		h.t.Fatalf("helper: %q %v (%s%s)", line, err, rest, h.stderr.String())
	}
}

func (h *helper) Wait() error {
	_, _ = io.Copy(io.Discard, h.stdout)
	if err := h.cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s", err, h.stderr.String())
	}
	return nil
}

func (h *helper) kill() {
	_ = h.cmd.Process.Kill()
	_, _ = io.Copy(io.Discard, h.stdout)
	_ = h.cmd.Wait()
}
