package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/backend/jetstream/jstest"
)

// natsCluster starts an in-process JetStream cluster of n servers (this
// test process; loopback, random ports, sync always) for the real mqgate
// binary to use, stopped at cleanup.
func natsCluster(t *testing.T, n int) *jstest.Cluster {
	t.Helper()
	cl, err := jstest.Start(filepath.Join(t.TempDir(), "nats"), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	return cl
}

// jsFlags are the flags of a gateway over cl: every instance of one test
// shares the handle key file.
func jsFlags(t *testing.T, cl *jstest.Cluster, keyFile string) []string {
	t.Helper()
	if _, err := os.Stat(keyFile); err != nil {
		if err := os.WriteFile(keyFile, []byte(strings.Repeat("cd", 32)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	replicas := "3"
	if len(cl.Servers()) == 1 {
		replicas = "1"
	}
	return []string{"--backend", "jetstream", "--nats-url", cl.URLs(), "--nats-replicas", replicas,
		"--handle-key-file", keyFile, "--nats-max-batch", "50000"}
}
