package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMakeMqgateBuildsOnlyTheGateway: `make mqgate` (README "Get
// started") builds the gateway alone, not the benchmark tool that makes
// `make build` take minutes on 2 cores.
func TestMakeMqgateBuildsOnlyTheGateway(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out, err := exec.Command("make", "-C", "..", "-n", "mqgate").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n mqgate: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "go build") || !strings.Contains(s, "./cmd/mqgate") || strings.Contains(s, "mqbench") {
		t.Fatalf("make mqgate runs:\n%s\nwant one go build of ./cmd/mqgate and nothing of mqbench", s)
	}
}
