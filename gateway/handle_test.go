package gateway

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

var testKey = bytes.Repeat([]byte{7}, keySize)

func sampleReceipt() receipt {
	return receipt{
		Epoch: 0xfeedface12345678, Seq: 42, Group: "orders-g", ConsumerID: "c1",
		Queue: core.MessageQueue{Topic: "orders", QueueID: 3}, Offset: 1 << 40,
		Expires: time.UnixMilli(1_800_000_000_123).UTC(),
	}
}

func TestHandleRoundTrip(t *testing.T) {
	c := newHandleCodec(testKey)
	for _, r := range []receipt{sampleReceipt(), {Group: "g", Queue: core.MessageQueue{Topic: "%RETRY%g"}, Expires: time.UnixMilli(0).UTC()}} {
		h := c.encode(r)
		if strings.ContainsAny(h, "+/=") {
			t.Fatalf("handle %q is not URL-safe", h)
		}
		got, err := c.decode(h)
		if err != nil {
			t.Fatalf("decode(%q): %v", h, err)
		}
		if got != r {
			t.Fatalf("round trip: got %+v, want %+v", got, r)
		}
	}
}

func TestHandleRejectsTamperingAndOtherKeys(t *testing.T) {
	c := newHandleCodec(testKey)
	h := c.encode(sampleReceipt())
	raw, _ := base64.RawURLEncoding.DecodeString(h)
	for i := range raw {
		b := bytes.Clone(raw)
		b[i] ^= 0x01
		if _, err := c.decode(base64.RawURLEncoding.EncodeToString(b)); err == nil {
			t.Fatalf("flipping byte %d was accepted", i)
		}
	}
	other := newHandleCodec(bytes.Repeat([]byte{8}, keySize))
	if _, err := other.decode(h); err == nil {
		t.Fatal("a handle signed with another key was accepted")
	}
	for _, bad := range []string{"", "!!!", h[:len(h)-1], h + "A", strings.Repeat("A", maxHandleLen+1)} {
		if _, err := c.decode(bad); err == nil {
			t.Fatalf("decode(%q) accepted", bad)
		}
	}
}

func FuzzHandleDecode(f *testing.F) {
	c := newHandleCodec(testKey)
	f.Add(c.encode(sampleReceipt()))
	f.Add("")
	f.Add("AQ")
	f.Fuzz(func(t *testing.T, h string) {
		r, err := c.decode(h)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to itself: the MAC covers it all.
		if again := c.encode(r); again != h {
			t.Fatalf("decoded %q but re-encodes as %q", h, again)
		}
	})
}

// FuzzReceiptParse feeds the parser payloads as if authenticated, to
// check that it never panics and rejects what it cannot re-encode.
func FuzzReceiptParse(f *testing.F) {
	c := newHandleCodec(testKey)
	raw, _ := base64.RawURLEncoding.DecodeString(c.encode(sampleReceipt()))
	f.Add(raw[:len(raw)-handleMACSize])
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := parseReceipt(p)
		if err != nil {
			return
		}
		enc, _ := base64.RawURLEncoding.DecodeString(c.encode(r))
		if !bytes.Equal(enc[:len(enc)-handleMACSize], p) {
			t.Fatalf("parse(%x) = %+v does not re-encode to itself", p, r)
		}
	})
}

func TestLoadOrCreateKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != keySize {
		t.Fatalf("key has %d bytes", len(k1))
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k1, k2) {
		t.Fatal("second start generated a new key")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("data dir holds %d entries, want only the key", len(entries))
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil {
		t.Fatal("a truncated key file was accepted")
	}
}

// TestHandleRefMatchesDecode: decodeTo (the ack path, parsing in place
// into a shared buffer) accepts what decode accepts, and its ref names
// exactly the receipt decode returns: a ref is its receipt and no other
// differing in any one field.
func TestHandleRefMatchesDecode(t *testing.T) {
	c := newHandleCodec(testKey)
	base := sampleReceipt()
	variants := []func(*receipt){
		func(r *receipt) { r.Epoch++ }, func(r *receipt) { r.Seq++ },
		func(r *receipt) { r.Group += "x" }, func(r *receipt) { r.ConsumerID = "" },
		func(r *receipt) { r.Queue.Topic = "orderz" }, func(r *receipt) { r.Queue.QueueID++ },
		func(r *receipt) { r.Offset-- }, func(r *receipt) { r.Expires = r.Expires.Add(time.Millisecond) },
	}
	other := base
	other.Group, other.Seq = "g2", 7
	hs := []string{c.encode(base), "!!", c.encode(other), c.encode(base)[1:]}
	var stack [64]byte // too short for two handles: decodeTo grows it
	buf := stack[:0]
	refs := make([]receiptRef, len(hs))
	oks := make([]bool, len(hs))
	for k, h := range hs {
		refs[k], buf, oks[k] = c.decodeTo(buf, h)
	}
	for k, h := range hs {
		want, err := c.decode(h)
		if oks[k] != (err == nil) {
			t.Fatalf("handle %d: decodeTo ok=%v, decode err=%v", k, oks[k], err)
		}
		if !oks[k] {
			continue
		}
		if !refs[k].is(buf, &want) || !refs[k].inGroup(buf, want.Group) || refs[k].inGroup(buf, want.Group+"x") {
			t.Fatalf("handle %d: ref does not name its receipt %+v", k, want)
		}
		for i, change := range variants {
			r := want
			change(&r)
			if refs[k].is(buf, &r) {
				t.Fatalf("handle %d: ref also names variant %d %+v", k, i, r)
			}
		}
	}
}

// TestApplyAllocs: an ack of one handle whose lease is gone allocates
// only its results (the handle is verified on the stack).
func TestApplyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool items and moves stack buffers")
	}
	c := newHandleCodec(testKey)
	tb := newLeaseTable(base().Epoch, c)
	hs := []string{c.encode(base())}
	now := time.Now()
	allocs := testing.AllocsPerRun(100, func() {
		var calls [4]call
		res, _ := tb.apply(base().Group, hs, opAck, 0, "", now, now, calls[:0])
		if res[0].Status != core.HandleExpired {
			t.Fatalf("status %s", res[0].Status)
		}
	})
	if allocs > 1 {
		t.Fatalf("%.0f allocations per ack of one handle, want 1 (the results)", allocs)
	}
}

func base() receipt { return sampleReceipt() }

// TestSameHandle: the word-at-a-time compare finds a difference in any
// byte, in the words and in the tail, and in the length.
func TestSameHandle(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 97} {
		issued := strings.Repeat("k", n)
		if !sameHandle(issued, strings.Clone(issued)) {
			t.Fatalf("length %d: equal strings compared different", n)
		}
		if sameHandle(issued, issued+"k") || sameHandle(issued+"k", issued) {
			t.Fatalf("length %d: a longer string compared equal", n)
		}
		for i := range n {
			h := []byte(issued)
			h[i] ^= 0x01
			if sameHandle(issued, string(h)) {
				t.Fatalf("length %d: a difference in byte %d went unseen", n, i)
			}
		}
	}
}
