package main

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// refuseOpenListener enforces the safe default (docs/security.md): without
// --api-keys, /v1 is open to whoever reaches the listener, so only a
// loopback address may be used unless the operator says --insecure-open.
// The refusal is a sentence saying what to do, before anything else starts.
func refuseOpenListener(c Config) error {
	if c.APIKeys != "" || c.InsecureOpen || isLoopbackAddr(c.Addr) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without --api-keys: /v1 would be open to anyone who can reach it. "+
		"Listen on loopback (the default, --addr 127.0.0.1:8080), give --api-keys FILE (docs/security.md), "+
		"or pass --insecure-open (MQGATE_INSECURE_OPEN=true) to serve an open API on purpose", c.Addr)
}

// isLoopbackAddr reports whether host:port names only loopback: 127.0.0.0/8,
// ::1 or localhost. An empty host (":8080"), 0.0.0.0, ::, any other address
// or a host name is not loopback. A malformed address is left to Listen to
// report.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true // not an address: net.Listen words the error
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.SplitN(host, "%", 2)[0], "."))
	return err == nil && ip.IsLoopback()
}
