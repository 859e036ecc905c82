package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvErrorsNameTheVariable: a bad MQGATE_* value is reported with the
// variable's name, its flag and what a good value looks like.
func TestEnvErrorsNameTheVariable(t *testing.T) {
	for _, c := range []struct{ env, val, want string }{
		{"MQGATE_SHUTDOWN_TIMEOUT", "5", "MQGATE_SHUTDOWN_TIMEOUT=\"5\" (--shutdown-timeout): want a duration with a unit, such as 30s"},
		{"MQGATE_MAX_WAITING", "lots", "MQGATE_MAX_WAITING=\"lots\" (--max-waiting): want a whole number, such as 4096"},
		{"MQGATE_ACCESS_LOG", "maybe", "MQGATE_ACCESS_LOG=\"maybe\" (--access-log): want true or false"},
		{"MQGATE_CACHE_BUDGET_MIB", "0", "--cache-budget-mib (MQGATE_CACHE_BUDGET_MIB) must be at least 1"},
		{"MQGATE_TLS_CERT", "cert.pem", "--tls-cert (MQGATE_TLS_CERT) and --tls-key (MQGATE_TLS_KEY) go together"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(c.env, c.val)
			_, err := parseServeFlags(nil, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestTakenPortCreatesNoData: starting on a port in use fails before the
// data directory is touched.
func TestTakenPortCreatesNoData(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	m := NewMain()
	if err := m.ParseFlags([]string{"--addr", ln.Addr().String(), "--data", data, "--log-level", "error"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	err = m.Run()
	_ = m.Close()
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("Run on a taken port: %v", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("the data directory exists after a failed listen: %v", err)
	}
}
