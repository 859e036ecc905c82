package e2e

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestWebhookCreationRules: a push block is refused at PUT, with a 400
// naming the rule, when its secret is under 24 bytes (Standard Webhooks,
// counted on the decoded whsec_ key) or when the network guard would
// refuse its URL (loopback without --webhook-allow-loopback, metadata);
// defaults read back as applied.
func TestWebhookCreationRules(t *testing.T) {
	s := startServer(t, t.TempDir()) // loopback not allowed
	createTopic(t, s, "rules", 1)
	group := func(push map[string]any) map[string]any {
		return map[string]any{"subscriptions": []map[string]any{{"topic": "rules"}}, "push": push}
	}
	short := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))
	p := wantProblem(t, s.do(t, "PUT", "/v1/groups/r", group(map[string]any{"url": "https://192.0.2.1/x", "secret": short})), http.StatusBadRequest, "push.secret")
	if !strings.Contains(string(p.Errors[0].Message), "at least 24 bytes") {
		t.Fatalf("secret rule not named: %+v", p)
	}
	for _, u := range []string{"http://127.0.0.1:9/x", "http://localhost:9/x", "http://169.254.169.254/latest/meta-data"} {
		p := wantProblem(t, s.do(t, "PUT", "/v1/groups/r", group(map[string]any{"url": u, "secret": hookSecret})), http.StatusBadRequest, "push.url")
		if !strings.Contains(p.Errors[0].Message, "network guard") {
			t.Fatalf("%s: guard rule not named: %+v", u, p)
		}
	}
	wantProblem(t, s.do(t, "GET", "/v1/groups/r", nil), http.StatusNotFound)

	// With loopback allowed the same URL is accepted, and the defaults read
	// back as applied.
	s2 := startPushServer(t, t.TempDir())
	createTopic(t, s2, "rules", 1)
	rc := newReceiver(t, nil)
	want(t, s2.do(t, "PUT", "/v1/groups/r", group(map[string]any{"url": rc.srv.URL, "secret": hookSecret})), http.StatusCreated)
	var g struct {
		Push struct {
			MaxInFlight    int `json:"maxInFlight"`
			TimeoutSeconds int `json:"timeoutSeconds"`
			BatchSize      int `json:"batchSize"`
		} `json:"push"`
	}
	s2.do(t, "GET", "/v1/groups/r", nil).JSON(t, &g)
	if g.Push.MaxInFlight != 16 || g.Push.TimeoutSeconds != 15 || g.Push.BatchSize != 1 {
		t.Fatalf("push defaults read back %+v, want maxInFlight 16, timeoutSeconds 15, batchSize 1", g.Push)
	}
}
