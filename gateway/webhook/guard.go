package webhook

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/mqgate/mqgate/core"
)

// defaultDeny are the destinations a webhook may not reach unless an allow
// network covers them: the gateway's own host, cloud metadata services and
// addresses that are not a single remote host. Private ranges (10/8,
// 192.168/16, fc00::/7) are allowed: intranet receivers are normal; deny
// them with DenyCIDRs where they are not.
var defaultDeny = mustPrefixes(
	"127.0.0.0/8", "::1/128", // loopback
	"0.0.0.0/8", "::/128", // "this host": connecting to 0.0.0.0 reaches loopback
	"169.254.0.0/16", "fe80::/10", // link-local, incl. 169.254.169.254 metadata
	"fd00:ec2::254/128",       // AWS IPv6 metadata
	"100.100.100.200/32",      // Alibaba Cloud metadata
	"224.0.0.0/4", "ff00::/8", // multicast
	"255.255.255.255/32", // limited broadcast
)

var loopback = mustPrefixes("127.0.0.0/8", "::1/128")

func mustPrefixes(cidrs ...string) []netip.Prefix {
	ps, err := parsePrefixes(cidrs)
	if err != nil {
		panic(err)
	}
	return ps
}

func parsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	ps := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			// A bare address is a /32 or /128.
			a, aerr := netip.ParseAddr(c)
			if aerr != nil {
				return nil, fmt.Errorf("webhook: %q is not a CIDR or IP address", c)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		ps = append(ps, p.Masked())
	}
	return ps, nil
}

// BlockedError is the dial error for a destination the guard refuses. It
// shows up, wrapped, as the pusher's last error.
type BlockedError struct {
	Addr netip.Addr
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("webhook destination %s refused by the network guard (loopback, this host's own, link-local, metadata and multicast addresses are denied; see allow/deny lists)", e.Addr)
}

// guard decides, per resolved IP, whether the dialer may connect. It sits
// in net.Dialer.Control, after DNS resolution, so a host name that
// resolves to a denied address (DNS rebinding included) is refused too.
type guard struct {
	allow []netip.Prefix
	deny  []netip.Prefix
}

func newGuard(o Options) (*guard, error) {
	allow, err := parsePrefixes(o.AllowCIDRs)
	if err != nil {
		return nil, err
	}
	deny, err := parsePrefixes(o.DenyCIDRs)
	if err != nil {
		return nil, err
	}
	if o.AllowLoopback {
		allow = append(allow, loopback...)
	}
	deny = append(append(append([]netip.Prefix(nil), defaultDeny...), hostAddrs()...), deny...)
	return &guard{allow: allow, deny: deny}, nil
}

// interfaceAddrs lists the host's interface addresses (a variable for
// tests).
var interfaceAddrs = net.InterfaceAddrs

// hostAddrs are the gateway host's own addresses, each a single-address
// network: a webhook pointed at one of them reaches the host's services
// through a non-loopback address (the same SSRF as 127.0.0.1). Only an
// allow network (--webhook-allow-cidr) lets a webhook reach them. A host
// whose interfaces cannot be listed gets the defaults only.
func hostAddrs() []netip.Prefix {
	addrs, err := interfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Prefix, 0, len(addrs))
	for _, a := range addrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if na, ok := netip.AddrFromSlice(ip); ok {
			na = na.Unmap()
			out = append(out, netip.PrefixFrom(na, na.BitLen()))
		}
	}
	return out
}

// URLChecker returns a check, for group creation, that a push URL is not
// one the network guard of pushers built with o would refuse: an IP
// literal is judged as is, a host name by the addresses it resolves to
// now (every one must be permitted; a name that does not resolve yet
// passes, and the dialer's guard still applies at delivery). A refusal
// is a core.FieldError on push.url naming the rule.
func URLChecker(o Options) (func(ctx context.Context, rawURL string) error, error) {
	g, err := newGuard(o)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, rawURL string) error {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil // ValidateConfig reports malformed URLs
		}
		host := u.Hostname()
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
			addrs = []netip.Addr{a}
		} else {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
				return nil
			}
		}
		for _, a := range addrs {
			if !g.permits(a) {
				return core.FieldError("push.url",
					"%s resolves to %s, which the webhook network guard refuses (loopback, this host's own addresses, link-local and cloud metadata, multicast, and --webhook-deny-cidr networks are denied unless --webhook-allow-cidr or --webhook-allow-loopback allows them)",
					host, a.Unmap())
			}
		}
		return nil
	}, nil
}

// permits: an address is refused when a deny network holds it and no allow
// network does. IPv4-mapped IPv6 addresses are judged as IPv4.
func (g *guard) permits(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range g.allow {
		if p.Contains(a) {
			return true
		}
	}
	for _, p := range g.deny {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// control is the net.Dialer Control hook: address is the resolved
// "ip:port" about to be connected.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: cannot check destination %q: %w", address, err)
	}
	if !g.permits(ap.Addr()) {
		return &BlockedError{Addr: ap.Addr().Unmap()}
	}
	return nil
}
