package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/core/store"
	"github.com/mqgate/mqgate/gateway"
)

func TestInitFlagAndEnv(t *testing.T) {
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil || c.Init {
		t.Fatalf("default: %+v %v", c.Init, err)
	}
	t.Setenv("MQGATE_INIT", "true")
	if c, err = parseServeFlags(nil, io.Discard); err != nil || !c.Init {
		t.Fatalf("MQGATE_INIT=true: %v %v", c.Init, err)
	}
	t.Setenv("MQGATE_INIT", "maybe")
	if _, err = parseServeFlags(nil, io.Discard); err == nil || !strings.Contains(err.Error(), "MQGATE_INIT") {
		t.Fatalf("bad MQGATE_INIT: %v", err)
	}
}

// A data dir that held a store (gateway.key) but whose mqgate.db is
// missing or empty is refused without --init, and nothing is created; a
// brand-new dir starts without it.
func TestLostStoreNeedsInit(t *testing.T) {
	run := func(dir string, args ...string) error {
		t.Helper()
		m := NewMain()
		if err := m.ParseFlags(append([]string{"--addr", "127.0.0.1:0", "--data", dir, "--log-format", "json", "--log-level", "error"}, args...), io.Discard); err != nil {
			t.Fatal(err)
		}
		err := m.Run()
		if cerr := m.Close(); err == nil && cerr != nil {
			t.Fatal(cerr)
		}
		return err
	}
	fresh := t.TempDir()
	if err := run(fresh); err != nil {
		t.Fatalf("brand-new dir: %v", err)
	}
	for _, empty := range []bool{false, true} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, gateway.KeyFile), make([]byte, 32), 0o600); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, store.FileName)
		if empty {
			if err := os.WriteFile(db, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		err := run(dir)
		if err == nil || !strings.Contains(err.Error(), db) || !strings.Contains(err.Error(), "--init") {
			t.Fatalf("empty=%v: err = %v, want a refusal naming %s and --init", empty, err, db)
		}
		fi, serr := os.Stat(db)
		if empty && (serr != nil || fi.Size() != 0) || !empty && serr == nil {
			t.Fatalf("empty=%v: the refused start touched %s (%v)", empty, db, serr)
		}
		if err := run(dir, "--init"); err != nil {
			t.Fatalf("empty=%v with --init: %v", empty, err)
		}
	}
}
