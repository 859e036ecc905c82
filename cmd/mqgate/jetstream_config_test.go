package main

import (
	"io"
	"strings"
	"testing"
)

func TestBackendFlags(t *testing.T) {
	c, err := parseServeFlags([]string{"--backend", "jetstream", "--handle-key-file", "/k", "--nats-url", "nats://a:4222,nats://b:4222"}, io.Discard)
	if err != nil || c.Backend != "jetstream" || c.HandleKeyFile != "/k" || c.NATSReplicas != 3 {
		t.Fatalf("config %+v, %v", c, err)
	}
	if _, err := parseServeFlags([]string{"--backend", "jetstream"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--handle-key-file") {
		t.Fatalf("jetstream without a key file: %v", err)
	}
	if _, err := parseServeFlags([]string{"--backend", "kafka"}, io.Discard); err == nil {
		t.Fatal("unknown backend accepted")
	}
	t.Setenv("MQGATE_BACKEND", "jetstream")
	t.Setenv("MQGATE_HANDLE_KEY_FILE", "/env-key")
	if c, err := parseServeFlags(nil, io.Discard); err != nil || c.Backend != "jetstream" || c.HandleKeyFile != "/env-key" {
		t.Fatalf("env config %+v, %v", c, err)
	}
}
