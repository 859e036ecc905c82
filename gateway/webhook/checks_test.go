package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/core"
)

func wantField(t *testing.T, err error, field, text string) {
	t.Helper()
	var e *core.Error
	if !errors.As(err, &e) || e.Field != field || e.Code != core.EInvalid || !strings.Contains(e.Message, text) {
		t.Fatalf("got %v, want a 400 on %s mentioning %q", err, field, text)
	}
}

// Standard Webhooks: a signing key has at least 24 bytes, counted on the
// decoded key of a whsec_ secret and on the bytes of a raw one.
func TestSecretAtLeast24Bytes(t *testing.T) {
	u := "https://hooks.example/x"
	whsec := func(n int) string { return SecretPrefix + base64.StdEncoding.EncodeToString(make([]byte, n)) }
	for _, s := range []string{whsec(24), whsec(64), strings.Repeat("r", 24)} {
		if err := ValidateConfig(core.PushConfig{URL: u, Secret: s}); err != nil {
			t.Errorf("secret %q refused: %v", s, err)
		}
	}
	for _, s := range []string{whsec(16), whsec(23), strings.Repeat("r", 23)} {
		wantField(t, ValidateConfig(core.PushConfig{URL: u, Secret: s}), "push.secret", "at least 24 bytes")
	}
	// A group stored with a shorter key keeps being delivered.
	if _, err := resolve(core.PushConfig{URL: u, Secret: whsec(16)}); err != nil {
		t.Fatalf("pusher refuses a stored 16-byte key: %v", err)
	}
}

func TestGuardDeniesHostAddresses(t *testing.T) {
	old := interfaceAddrs
	t.Cleanup(func() { interfaceAddrs = old })
	interfaceAddrs = func() ([]net.Addr, error) {
		return []net.Addr{
			&net.IPNet{IP: net.ParseIP("10.1.2.3"), Mask: net.CIDRMask(24, 32)},
			&net.IPNet{IP: net.ParseIP("2001:db8::7"), Mask: net.CIDRMask(64, 128)},
		}, nil
	}
	g, err := newGuard(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"10.1.2.3", "2001:db8::7"} {
		if g.permits(netip.MustParseAddr(a)) {
			t.Errorf("host address %s permitted", a)
		}
	}
	// Only the host's own address, not its network.
	if !g.permits(netip.MustParseAddr("10.1.2.4")) {
		t.Error("a neighbour of the host refused")
	}
	allowed, _ := newGuard(Options{AllowCIDRs: []string{"10.1.2.3"}})
	if !allowed.permits(netip.MustParseAddr("10.1.2.3")) {
		t.Error("--webhook-allow-cidr does not allow a host address")
	}
	check, err := URLChecker(Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantField(t, check(context.Background(), "http://10.1.2.3:9000/hook"), "push.url", "network guard")
}

func TestURLChecker(t *testing.T) {
	check, err := URLChecker(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, u := range []string{"http://127.0.0.1:8080/x", "http://[::1]/x", "http://169.254.169.254/latest", "http://localhost:9/x", "http://0.0.0.0/"} {
		wantField(t, check(ctx, u), "push.url", "network guard")
	}
	for _, u := range []string{"https://192.0.2.10/x", "http://[2001:db8::1]:8443/x", "https://no-such-host.invalid/x"} {
		if err := check(ctx, u); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	loop, _ := URLChecker(Options{AllowLoopback: true})
	if err := loop(ctx, "http://127.0.0.1:8080/x"); err != nil {
		t.Errorf("loopback refused with AllowLoopback: %v", err)
	}
}
