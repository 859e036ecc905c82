package quota

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mqgate/mqgate/internal/auth"
)

// keyring writes a key file with one key "a" (secret a-secret-0123456789)
// carrying limits, and opens it.
func keyring(t *testing.T, limits string) (*auth.Keyring, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "keys.json")
	write(t, file, limits)
	kr, err := auth.OpenKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	return kr, file
}

func write(t *testing.T, file, limits string) {
	t.Helper()
	body := `{"keys":[{"name":"a","key":"a-secret-0123456789","grants":["admin"],"limits":` + limits + `},` +
		`{"name":"free","key":"free-secret-0123456789","grants":["admin"]}]}`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func keyA(kr *auth.Keyring) *auth.Key { return kr.Authenticate("a-secret-0123456789") }

func TestPublishBucketRefusesWithoutTakingTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr, _ := keyring(t, `{"publishPerSecond": 10, "publishBurst": 5}`)
		q := New(kr, nil)
		a := keyA(kr)
		for i := range 5 {
			if v := q.Publish(a, "orders", 1, 10); v == nil || v.Refused() || v.Wait != 0 {
				t.Fatalf("publish %d: %+v, want allowed at once", i, v)
			}
		}
		v := q.Publish(a, "orders", 1, 10)
		if !v.Refused() || v.RetryAfter != 100*time.Millisecond {
			t.Fatalf("6th publish: %+v, want refused with RetryAfter 100ms", v)
		}
		if got := v.Violated(); len(got) != 1 || got[0] != "pub" {
			t.Errorf("violated %v, want [pub]", got)
		}
		pol, lim := Header(v.Policies)
		if pol != `"pub";q=10;w=1` || lim != `"pub";r=0;t=1` {
			t.Errorf("headers %q / %q", pol, lim)
		}
		// Refusals take nothing: after 100 ms exactly one token is back
		// however many refusals came in between.
		for range 50 {
			q.Publish(a, "orders", 1, 10)
		}
		time.Sleep(100 * time.Millisecond)
		if v := q.Publish(a, "orders", 1, 10); v.Refused() {
			t.Fatalf("after 100ms: %+v, want allowed", v)
		}
		if v := q.Publish(a, "orders", 1, 10); !v.Refused() {
			t.Fatalf("second after 100ms: %+v, want refused", v)
		}
		if v := q.Publish(kr.Authenticate("free-secret-0123456789"), "orders", 1, 10); v != nil {
			t.Errorf("a key without limits got %+v, want nil", v)
		}
	})
}

func TestPublishAllOrNothingAcrossBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr, _ := keyring(t, `{"publishPerSecond": 100, "topics": [{"topic": "slow-*", "publishPerSecond": 1, "publishBurst": 2}]}`)
		q := New(kr, nil)
		a := keyA(kr)
		if v := q.Publish(a, "slow-eu", 2, 0); v.Refused() {
			t.Fatalf("%+v", v)
		}
		v := q.Publish(a, "slow-us", 1, 0) // the entry is shared by slow-*
		if !v.Refused() || strings.Join(v.Violated(), ",") != "pub:slow-*" {
			t.Fatalf("%+v, want refused by pub:slow-*", v)
		}
		pol, lim := Header(v.Policies)
		if pol != `"pub";q=100;w=1, "pub:slow-*";q=1;w=1` || lim != `"pub";r=98;t=1, "pub:slow-*";r=0;t=1` {
			t.Errorf("headers %q / %q", pol, lim)
		}
		// The key's own bucket gave its token back: 98 left for orders.
		for i := range 98 {
			if v := q.Publish(a, "orders", 1, 0); v.Refused() {
				t.Fatalf("orders %d refused: %+v", i, v)
			}
		}
		if v := q.Publish(a, "orders", 1, 0); !v.Refused() {
			t.Fatal("99th orders publish allowed")
		}
	})
}

func TestTooLargeAndBytes(t *testing.T) {
	kr, _ := keyring(t, `{"publishPerSecond": 10, "publishBytesPerSecond": 1000}`)
	q := New(kr, nil)
	a := keyA(kr)
	if v := q.Publish(a, "t", 11, 0); v.TooLarge == "" || !v.Refused() {
		t.Fatalf("batch of 11 over burst 10: %+v", v)
	}
	v := q.Publish(a, "t", 1, 1001)
	if !strings.Contains(v.TooLarge, `1001 bytes exceed the 1000 of limit "pub-bytes"`) {
		t.Fatalf("%+v", v)
	}
	v = q.Publish(a, "t", 1, 600)
	pol, _ := Header(v.Policies)
	if pol != `"pub";q=10;w=1, "pub-bytes";q=1000;qu="content-bytes";w=1` {
		t.Errorf("policy %q", pol)
	}
	if v := q.Publish(a, "t", 1, 600); !v.Refused() || v.Violated()[0] != "pub-bytes" {
		t.Fatalf("%+v, want refused by pub-bytes", v)
	}
}

func TestMaxDelayWaitsInsteadOfRefusing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr, _ := keyring(t, `{"publishPerSecond": 10, "publishBurst": 1, "maxDelay": "250ms"}`)
		q := New(kr, nil)
		a := keyA(kr)
		q.Publish(a, "t", 1, 0)
		waits := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
		for _, w := range waits {
			if v := q.Publish(a, "t", 1, 0); v.Refused() || v.Wait != w {
				t.Fatalf("%+v, want a wait of %v", v, w)
			}
		}
		v := q.Publish(a, "t", 1, 0) // would wait 300ms > 250ms
		if !v.Refused() || v.RetryAfter != 300*time.Millisecond {
			t.Fatalf("%+v, want refused after 300ms", v)
		}
		// A waiter that gives up hands its token back.
		time.Sleep(100 * time.Millisecond)
		w := q.Publish(a, "t", 1, 0)
		if w.Refused() || w.Wait != 200*time.Millisecond {
			t.Fatalf("%+v, want a wait of 200ms", w)
		}
		w.Cancel()
		if v := q.Publish(a, "t", 1, 0); v.Refused() || v.Wait != 200*time.Millisecond {
			t.Fatalf("after a cancel: %+v, want a wait of 200ms again", v)
		}
	})
}

func TestReceiveConcurrencyAndDeliveries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr, _ := keyring(t, `{"deliveriesPerSecond": 10, "groups": [{"group": "billing", "concurrentReceives": 2}]}`)
		q := New(kr, nil)
		a := keyA(kr)
		r1, r2 := q.Receive(a, "billing", 32), q.Receive(a, "billing", 32)
		if r1.Refused() || r2.Refused() || r1.Max != 10 {
			t.Fatalf("%+v %+v, want both admitted, Max 10", r1, r2)
		}
		r3 := q.Receive(a, "billing", 1)
		if !r3.Refused() || strings.Join(r3.Violated(), ",") != "receives:billing" {
			t.Fatalf("third receive %+v, want refused by receives:billing", r3)
		}
		_, lim := Header(r3.Policies)
		if lim != `"receives:billing";r=0` {
			t.Errorf("RateLimit %q", lim)
		}
		if o := q.Receive(a, "other", 1); o.Refused() {
			t.Fatalf("another group is not capped: %+v", o)
		}
		r1.Delivered(10)
		r1.Delivered(10) // once only
		r2.Delivered(0)
		r4 := q.Receive(a, "billing", 5)
		if !r4.Refused() || r4.RetryAfter != 100*time.Millisecond {
			t.Fatalf("%+v, want refused: the 10 deliveries emptied the bucket", r4)
		}
		time.Sleep(time.Second)
		r5 := q.Receive(a, "billing", 5)
		if r5.Refused() || r5.Max != 5 {
			t.Fatalf("%+v", r5)
		}
		r5.Delivered(5)
	})
}

func TestReloadKeepsStateAndTakesNewRates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr, file := keyring(t, `{"publishPerSecond": 10}`)
		q := New(kr, nil)
		a := keyA(kr)
		for range 10 {
			q.Publish(a, "t", 1, 0)
		}
		write(t, file, `{"publishPerSecond": 1000}`)
		if _, err := kr.Reload(); err != nil {
			t.Fatal(err)
		}
		a = keyA(kr)
		// The bucket is the same one: empty, now refilling at 1000/s.
		v := q.Publish(a, "t", 1, 0)
		if !v.Refused() || v.RetryAfter != time.Millisecond {
			t.Fatalf("%+v, want refused for 1ms", v)
		}
		write(t, file, `{"concurrentReceives": 1}`)
		kr.Reload()
		a = keyA(kr)
		if v := q.Publish(a, "t", 1, 0); v != nil {
			t.Fatalf("publish limit removed, still %+v", v)
		}
	})
}

func TestMetricsCapKeys(t *testing.T) {
	var keys []string
	for i := range MaxKeySeries + 5 {
		keys = append(keys, fmt.Sprintf(`{"name":"k%03d","key":"secret-%03d-0123456789","grants":["admin"],"limits":{"publishPerSecond":1}}`, i, i))
	}
	file := filepath.Join(t.TempDir(), "keys.json")
	os.WriteFile(file, []byte(`{"keys":[`+strings.Join(keys, ",")+`]}`), 0o600)
	kr, err := auth.OpenKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	q := New(kr, NewMetrics(reg))
	for i := range MaxKeySeries + 5 {
		q.Publish(kr.Authenticate(fmt.Sprintf("secret-%03d-0123456789", i)), "t", 1, 0)
	}
	if n := testutil.CollectAndCount(reg, "mqgate_quota_requests_total"); n != (MaxKeySeries+1)*9 {
		t.Errorf("%d series, want %d", n, (MaxKeySeries+1)*9)
	}
	other, err := q.m.requests.GetMetricWithLabelValues(OtherKey, "publish", "allowed")
	if err != nil || testutil.ToFloat64(other) != 5 {
		t.Errorf("_other allowed = %v (%v), want 5", testutil.ToFloat64(other), err)
	}
}

func TestPacedStreamWaitsForDeliveries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kr, _ := keyring(t, `{"groups": [{"group": "billing", "deliveriesPerSecond": 10}]}`)
		q := New(kr, nil)
		a := keyA(kr)
		if rc, err := q.Paced(t.Context(), a, "other", 32); rc != nil || err != nil {
			t.Fatalf("no limit on other: %+v %v", rc, err)
		}
		rc, err := q.Paced(t.Context(), a, "billing", 32)
		if err != nil || rc.Max != 10 {
			t.Fatalf("%+v %v, want Max 10", rc, err)
		}
		rc.Delivered(10)
		start := time.Now()
		rc, err = q.Paced(t.Context(), a, "billing", 32)
		if err != nil || rc.Max != 1 || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("%+v %v after %v, want Max 1 after 100ms", rc, err, time.Since(start))
		}
		rc.Delivered(1)
		// A stream that closes while it waits takes nothing.
		ctx, cancel := context.WithCancel(t.Context())
		go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		if _, err := q.Paced(ctx, a, "billing", 1); err == nil {
			t.Fatal("no error after the context ended")
		}
		time.Sleep(50 * time.Millisecond)
		start = time.Now()
		if rc, _ := q.Paced(t.Context(), a, "billing", 5); rc.Max != 1 || time.Since(start) != 0 {
			t.Fatalf("Max %d after %v, want 1 at once: the cancelled wait gave its token back", rc.Max, time.Since(start))
		}
	})
}
