package main

import (
	"io"
	"slices"
	"testing"
)

func TestWebhookGuardFlags(t *testing.T) {
	t.Setenv("MQGATE_WEBHOOK_ALLOW_LOOPBACK", "true")
	t.Setenv("MQGATE_WEBHOOK_ALLOW_CIDRS", "10.1.0.0/16, 192.0.2.7")
	t.Setenv("MQGATE_WEBHOOK_DENY_CIDRS", "10.0.0.0/8")
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.WebhookAllowLoopback || !slices.Equal(c.WebhookAllowCIDRs, []string{"10.1.0.0/16", "192.0.2.7"}) ||
		!slices.Equal(c.WebhookDenyCIDRs, []string{"10.0.0.0/8"}) {
		t.Fatalf("from env: %+v", c)
	}
	// Flags win: the first --webhook-allow-cidr replaces the env list,
	// repeats add to it.
	c, err = parseServeFlags([]string{"--webhook-allow-loopback=false",
		"--webhook-allow-cidr", "172.16.0.0/12", "--webhook-allow-cidr", "fd00::/8,2001:db8::1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.WebhookAllowLoopback || !slices.Equal(c.WebhookAllowCIDRs, []string{"172.16.0.0/12", "fd00::/8", "2001:db8::1"}) ||
		!slices.Equal(c.WebhookDenyCIDRs, []string{"10.0.0.0/8"}) {
		t.Fatalf("flags over env: %+v", c)
	}
	if _, err := parseServeFlags([]string{"--webhook-deny-cidr", "10.0.0.0/33"}, io.Discard); err == nil {
		t.Fatal("bad CIDR accepted")
	}
}
