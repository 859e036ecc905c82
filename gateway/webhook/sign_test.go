package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mqgate/mqgate/core"
)

func signedHeader(key []byte, id string, ts int64, body []byte) http.Header {
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderSignature, Sign(key, id, ts, body))
	return h
}

func TestVerify(t *testing.T) {
	key, err := DecodeSecret(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"messages":[]}`)
	good := signedHeader(key, "m1-0", now.Unix(), body)

	if err := VerifyAt(testSecret, good, body, now, DefaultTolerance); err != nil {
		t.Fatalf("valid signature refused: %v", err)
	}
	cases := []struct {
		name   string
		secret string
		h      http.Header
		body   []byte
		now    time.Time
		want   error
	}{
		{"tampered body", testSecret, good, []byte(`{"messages":[{}]}`), now, ErrNoValidSignature},
		{"other secret", "whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret of 32 bytes......")), good, body, now, ErrNoValidSignature},
		{"too old", testSecret, good, body, now.Add(6 * time.Minute), ErrTimestampSkew},
		{"from the future", testSecret, good, body, now.Add(-6 * time.Minute), ErrTimestampSkew},
		{"missing headers", testSecret, http.Header{}, body, now, ErrMissingHeaders},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := VerifyAt(c.secret, c.h, c.body, c.now, DefaultTolerance); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}

	t.Run("id is signed", func(t *testing.T) {
		h := good.Clone()
		h.Set(HeaderID, "m1-1")
		if err := VerifyAt(testSecret, h, body, now, 0); !errors.Is(err, ErrNoValidSignature) {
			t.Fatalf("changed id accepted: %v", err)
		}
	})
	t.Run("several signatures, one valid", func(t *testing.T) {
		h := good.Clone()
		h.Set(HeaderSignature, "v1,AAAA v1a,xyz "+good.Get(HeaderSignature))
		if err := VerifyAt(testSecret, h, body, now, 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("raw secret is used as bytes", func(t *testing.T) {
		raw := "plain passphrase"
		h := signedHeader([]byte(raw), "m1-0", now.Unix(), body)
		if err := VerifyAt(raw, h, body, now, 0); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDecodeSecret(t *testing.T) {
	if _, err := DecodeSecret(""); err == nil {
		t.Error("empty secret accepted")
	}
	if _, err := DecodeSecret("whsec_not base64!"); err == nil {
		t.Error("bad base64 accepted")
	}
	if _, err := DecodeSecret("whsec_" + base64.StdEncoding.EncodeToString([]byte("short"))); err == nil {
		t.Error("short key accepted")
	}
	k, err := DecodeSecret(testSecret)
	if err != nil || len(k) != 24 {
		t.Fatalf("got %d bytes, %v", len(k), err)
	}
}

// The Standard Webhooks specification's published test vector.
func TestSignStandardWebhooksVector(t *testing.T) {
	key, err := DecodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func FuzzVerify(f *testing.F) {
	key, _ := DecodeSecret(testSecret)
	f.Add("m-0", "1700000000", Sign(key, "m-0", 1700000000, []byte("{}")), []byte("{}"))
	f.Add("", "x", "v1,", []byte(nil))
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		_ = VerifyAt(testSecret, h, body, time.Unix(1700000000, 0), DefaultTolerance)
	})
}

// TestUnsignedWithoutSecret: a push config without a secret sends the id
// and timestamp but no signature (the API makes the secret optional).
func TestUnsignedWithoutSecret(t *testing.T) {
	hdrs := make(chan http.Header, 1)
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { hdrs <- r.Header.Clone() })
	p, err := New("g", core.PushConfig{URL: srv.URL}, Options{AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	rec := newRecorder()
	p.Consume(rec.deliver(0, false, makeMsgs("m", 0, 1)))
	rec.wait(t, 1, 5*time.Second)
	h := <-hdrs
	if h.Get(HeaderID) != "m-0" || h.Get(HeaderAttempt) != "1" || h.Get(HeaderTimestamp) == "" || h.Get(HeaderSignature) != "" {
		t.Fatalf("headers %v", h)
	}
}
