package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// healthcheck is the Docker HEALTHCHECK: scratch images have no curl, so
// the binary asks its own /healthz on the loopback address.
func healthcheck(args []string, stderr io.Writer) int {
	addr := DefaultConfig().Addr
	if v := os.Getenv(envName("addr")); v != "" {
		addr = v
	}
	fs := flag.NewFlagSet("mqgate healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", os.Getenv("MQGATE_URL"), "the server's base URL, as for every client command (env MQGATE_URL); without it, the local server at --addr")
	fs.StringVar(&addr, "addr", addr, "the local server's listen address, when no --url (env MQGATE_ADDR)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	// Exit codes: 0 healthy, 1 anything else (usage errors included):
	// Docker's HEALTHCHECK reserves 2.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	target := strings.TrimRight(*url, "/") + "/healthz"
	if *url == "" {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			fmt.Fprintln(stderr, "healthcheck:", err)
			return 1
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		target = "http://" + net.JoinHostPort(host, port) + "/healthz"
	}
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Get(target)
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(stderr, "healthcheck: status", resp.Status)
		return 1
	}
	return 0
}
