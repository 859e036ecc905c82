package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.2:0": true, "[::1]:8080": true, "localhost:8080": true, "LOCALHOST:1": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "192.0.2.2:8080": false, "example.com:80": false,
		"[fe80::1%eth0]:80": false,
	} {
		if got := isLoopbackAddr(addr); got != want {
			t.Errorf("isLoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
	if DefaultConfig().Addr != "127.0.0.1:8080" || refuseOpenListener(DefaultConfig()) != nil {
		t.Fatalf("the default listener %q is not the loopback one", DefaultConfig().Addr)
	}
}

// TestDockerfileListener: the image's environment (Dockerfile ENV) listens
// on every interface, so it is refused without keys, starts with
// MQGATE_INSECURE_OPEN=true or MQGATE_API_KEYS, and its HEALTHCHECK then
// asks 127.0.0.1 (README "Docker", docs/security.md).
func TestDockerfileListener(t *testing.T) {
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	env := regexp.MustCompile(`(?m)^ENV ((?:.*\\\n)*.*)$`).FindStringSubmatch(string(raw))
	if env == nil {
		t.Fatal("no ENV in the Dockerfile")
	}
	for _, kv := range strings.Fields(strings.ReplaceAll(env[1], "\\\n", " ")) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("MQGATE_API_KEYS", "")
	t.Setenv("MQGATE_INSECURE_OPEN", "")
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if isLoopbackAddr(c.Addr) {
		t.Fatalf("the image listens on %q: -p could not reach it", c.Addr)
	}
	if err := refuseOpenListener(c); err == nil || !strings.Contains(err.Error(), "--insecure-open") {
		t.Fatalf("the image without keys: %v", err)
	}
	t.Setenv("MQGATE_INSECURE_OPEN", "true")
	if c, err = parseServeFlags(nil, io.Discard); err != nil || refuseOpenListener(c) != nil {
		t.Fatalf("MQGATE_INSECURE_OPEN=true: %v %v", err, refuseOpenListener(c))
	}
	t.Setenv("MQGATE_INSECURE_OPEN", "")
	t.Setenv("MQGATE_API_KEYS", "/keys.json")
	if c, err = parseServeFlags(nil, io.Discard); err != nil || refuseOpenListener(c) != nil {
		t.Fatalf("MQGATE_API_KEYS: %v %v", err, refuseOpenListener(c))
	}
}
