package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// binPath is the mqgate binary every test starts.
var binPath string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mqgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "mqgate")
	args := []string{"build", "-o", binPath}
	// The server runs under the race detector too unless asked not to
	// (MQGATE_E2E_RACE=0, e.g. for timing-sensitive local runs).
	if os.Getenv("MQGATE_E2E_RACE") != "0" {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "github.com/mqgate/mqgate/cmd/mqgate")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building mqgate:", err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: leaked goroutines:", err)
			return 1
		}
	}
	return code
}
