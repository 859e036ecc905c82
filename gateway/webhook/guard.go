package webhook

import (
	"fmt"
	"net/netip"
	"syscall"
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
	return fmt.Sprintf("webhook destination %s refused by the network guard (loopback, link-local, metadata and multicast addresses are denied; see allow/deny lists)", e.Addr)
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
	return &guard{allow: allow, deny: append(append([]netip.Prefix(nil), defaultDeny...), deny...)}, nil
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
