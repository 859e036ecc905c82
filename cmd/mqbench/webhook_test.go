package main

import (
	"encoding/base64"
	"net/http"
	"testing"
)

// The Standard Webhooks specification's published test vector.
func TestVerifyWebhookStandardVector(t *testing.T) {
	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"test": 2432232314}`)
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,bm9ub3Rhc2lnbmF0dXJl v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	if err := verifyWebhook(key, h, body); err != nil {
		t.Fatalf("valid signature refused: %v", err)
	}
	if err := verifyWebhook(key, h, []byte(`{"test": 2432232315}`)); err == nil {
		t.Fatal("signature accepted for another body")
	}
	h.Set("webhook-signature", "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	if err := verifyWebhook(key, h, body); err == nil {
		t.Fatal("signature accepted under another version")
	}
	h.Del("webhook-id")
	if err := verifyWebhook(key, h, body); err == nil {
		t.Fatal("accepted without webhook-id")
	}
}

func TestWebhookModeMeasuresDeliveries(t *testing.T) {
	g := startFakeGateway(t, fakeOptions{})
	var rep WebhookReport
	runMode(t, &rep, "webhook", "--url", g.srv.URL, "--rate", "400", "--duration", "300ms",
		"--warmup", "100ms", "--drain", "5s")
	r := rep.Runs[0]
	// 400/s for 0.4s: 160 slots, 120 after the warm-up.
	if r.Published != 160 || r.Measured != 120 || r.Delivered != 160 || r.Missing != 0 ||
		r.EndToEnd.Count != 120 || r.BadSignatures != 0 || r.Requests != 160 {
		t.Fatalf("run = %+v (first error %q)", r, r.FirstError)
	}
	if r.AfterPublish.Count != 120 {
		t.Fatalf("after-publish = %+v", r.AfterPublish)
	}
	if r.EndToEnd.P50Ms <= 0 || r.EndToEnd.MaxMs < r.EndToEnd.P99Ms {
		t.Fatalf("e2e = %+v", r.EndToEnd)
	}
}

// A webhook with a bad signature is refused with 401 and counted; the
// sender's retry with a good one is delivered.
func TestWebhookModeRefusesBadSignatures(t *testing.T) {
	g := startFakeGateway(t, fakeOptions{forgeEvery: 5})
	var rep WebhookReport
	runMode(t, &rep, "webhook", "--url", g.srv.URL, "--rate", "200", "--duration", "200ms",
		"--warmup", "0", "--drain", "5s")
	r := rep.Runs[0]
	if r.BadSignatures == 0 || r.Missing != 0 || r.Delivered != 40 || r.Requests != 40+r.BadSignatures {
		t.Fatalf("run = %+v, want 40 delivered after refusing the forged ones", r)
	}
}
