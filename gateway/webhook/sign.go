package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names (https://www.standardwebhooks.com).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	// HeaderAttempt is mqgate's own: the delivery attempt, 1 for the
	// first (webhook-id stays the same across attempts).
	HeaderAttempt = "webhook-attempt"
)

// DefaultTolerance is how far a webhook-timestamp may be from the
// receiver's clock before Verify refuses it (replay protection).
const DefaultTolerance = 5 * time.Minute

// Errors returned by Verify; receivers answer 4xx for all of them.
var (
	ErrMissingHeaders   = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature")
	ErrBadTimestamp     = errors.New("webhook: webhook-timestamp is not unix seconds")
	ErrTimestampSkew    = errors.New("webhook: webhook-timestamp is too far from now")
	ErrNoValidSignature = errors.New("webhook: no signature matches")
)

// Sign returns the webhook-signature value for one request: "v1," and the
// base64 HMAC-SHA256, keyed with the decoded secret, of id + "." +
// timestamp + "." + body.
func Sign(key []byte, id string, ts int64, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, strconv.FormatInt(ts, 10), body))
}

func mac(key []byte, id, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks a received webhook against the group's secret as
// configured ("whsec_<base64>" or raw bytes, see DecodeSecret), with the
// receiver's clock and DefaultTolerance. body must be the raw request body,
// byte for byte, before any JSON decoding.
func Verify(secret string, h http.Header, body []byte) error {
	return VerifyAt(secret, h, body, time.Now(), DefaultTolerance)
}

// VerifyAt is Verify with an explicit clock and tolerance (0: no
// timestamp check). The signature header may list several space-separated
// signatures (secret rotation); one valid "v1," entry is enough.
func VerifyAt(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := DecodeSecret(secret)
	if err != nil {
		return err
	}
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	if tolerance > 0 {
		if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
			return ErrTimestampSkew
		}
	}
	want := mac(key, id, tsText, body)
	for _, s := range strings.Fields(sigs) {
		b64, ok := strings.CutPrefix(s, "v1,")
		if !ok {
			continue // other schemes (v1a, ...) are not ours
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrNoValidSignature
}
