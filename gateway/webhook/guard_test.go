package webhook

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

func TestGuardPermits(t *testing.T) {
	def, err := newGuard(Options{})
	if err != nil {
		t.Fatal(err)
	}
	loop, _ := newGuard(Options{AllowLoopback: true})
	custom, err := newGuard(Options{DenyCIDRs: []string{"10.0.0.0/8"}, AllowCIDRs: []string{"10.1.2.3", "169.254.10.0/24"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		g    *guard
		addr string
		want bool
	}{
		{def, "127.0.0.1", false},
		{def, "127.9.9.9", false},
		{def, "::1", false},
		{def, "::ffff:127.0.0.1", false}, // IPv4-mapped loopback
		{def, "0.0.0.0", false},
		{def, "::", false},
		{def, "169.254.169.254", false}, // cloud metadata
		{def, "fd00:ec2::254", false},
		{def, "100.100.100.200", false},
		{def, "fe80::1", false},
		{def, "224.0.0.1", false},
		{def, "ff02::1", false},
		{def, "255.255.255.255", false},
		{def, "93.184.216.34", true},
		{def, "10.1.2.3", true}, // private networks are allowed by default
		{def, "2001:db8::1", true},
		{loop, "127.0.0.1", true},
		{loop, "::1", true},
		{loop, "169.254.169.254", false},
		{custom, "10.9.9.9", false},
		{custom, "10.1.2.3", true},
		{custom, "169.254.10.7", true},
		{custom, "169.254.169.254", false},
		{custom, "127.0.0.1", false},
	}
	for _, c := range cases {
		if got := c.g.permits(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("permits(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
	if _, err := newGuard(Options{DenyCIDRs: []string{"nonsense"}}); err == nil {
		t.Error("bad CIDR accepted")
	}
}

// A real request to a loopback receiver is refused unless loopback is
// allowed, and the receiver never sees it.
func TestGuardRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	p := newTestPusher(t, core.PushConfig{URL: srv.URL}, Options{}) // AllowLoopback false
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("m", 0, 3)))
	rec.wait(t, 3, 5*time.Second)
	if acked, nacked, _ := rec.counts(); acked != 0 || nacked != 3 {
		t.Fatalf("acked %d nacked %d, want all nacked", acked, nacked)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("receiver hit %d times", n)
	}
	st := p.Status()
	if !strings.Contains(st.LastError, "refused by the network guard") || st.ConsecutiveFailures != 3 {
		t.Fatalf("status %+v", st)
	}

	// The same receiver with loopback allowed gets them.
	p2 := newTestPusher(t, core.PushConfig{URL: srv.URL}, Options{AllowLoopback: true})
	rec2 := newRecorder()
	p2.Consume(rec2.deliver(0, false, makeMsgs("m", 0, 3)))
	rec2.wait(t, 3, 5*time.Second)
	if acked, _, _ := rec2.counts(); acked != 3 {
		t.Fatalf("acked %d with loopback allowed", acked)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		v      string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"abc", 0, false},
		{"999999999", time.Hour, true}, // capped
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	}
	for _, c := range cases {
		got, ok := parseRetryAfter(c.v, now, time.Hour)
		if got != c.want || ok != c.wantOK {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", c.v, got, ok, c.want, c.wantOK)
		}
	}
}

func TestLevelAtLeast(t *testing.T) {
	f := LevelAtLeast([]time.Duration{time.Second, 5 * time.Second, 10 * time.Second})
	for d, want := range map[time.Duration]int{0: 0, time.Second: 1, 1500 * time.Millisecond: 2, 10 * time.Second: 3, time.Hour: 3} {
		if got := f(d); got != want {
			t.Errorf("level for %s = %d, want %d", d, got, want)
		}
	}
}

func TestValidateConfig(t *testing.T) {
	ok := core.PushConfig{URL: "https://hooks.example/x", Secret: testSecret}
	if err := ValidateConfig(ok); err != nil {
		t.Fatal(err)
	}
	bad := map[string]core.PushConfig{
		"push.url":            {URL: "ftp://x/", Secret: testSecret},
		"push.maxInFlight":    {URL: ok.URL, Secret: testSecret, MaxInFlight: MaxMaxInFlight + 1},
		"push.timeoutSeconds": {URL: ok.URL, Secret: testSecret, TimeoutSeconds: -1},
		"push.batchSize":      {URL: ok.URL, Secret: testSecret, BatchSize: 33},
		"push.secret":         {URL: ok.URL, Secret: "whsec_!!"},
	}
	for field, pc := range bad {
		err := ValidateConfig(pc)
		var e *core.Error
		if !errors.As(err, &e) || e.Field != field || e.Code != core.EInvalid {
			t.Errorf("%s: got %v", field, err)
		}
	}
	if err := ValidateConfig(core.PushConfig{URL: ok.URL}); err != nil {
		t.Errorf("no secret (unsigned pushes) refused: %v", err)
	}
	for _, u := range []string{"", "http://", "https://user:pw@h/"} {
		if err := ValidateConfig(core.PushConfig{URL: u, Secret: testSecret}); err == nil {
			t.Errorf("url %q accepted", u)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "-5", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now, time.Hour)
		if d < 0 || d > time.Hour || (!ok && d != 0) {
			t.Fatalf("parseRetryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}
