package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mqgate/mqgate/internal/auth"
)

// TestRateLimitAnswers drives the real router over a real engine: a key
// over its publish limit gets 429 problem+json with Retry-After and the
// RateLimit fields, a batch larger than the bucket 413, a key with
// maxDelay is held instead, and GET /v1/admin/limits reads it all back.
func TestRateLimitAnswers(t *testing.T) {
	eng := openEmbedded(t)
	ks, err := auth.Parse([]byte(`{"keys":[
		{"name":"capped","key":"` + testPubKey + `","grants":["pub:*"],"limits":{"publishPerSecond":2,"publishBurst":3,
			"topics":[{"topic":"slow","publishBytesPerSecond":4}]}},
		{"name":"patient","key":"` + testSubKey + `","grants":["pub:*"],"limits":{"publishPerSecond":20,"publishBurst":1,"maxDelay":"1s"}},
		{"name":"ops","key":"` + testAdminKey + `","grants":["admin"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Backend: eng, Keys: auth.NewKeyring(ks)}))
	t.Cleanup(srv.Close)
	do := func(method, path, key, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, topic := range []string{"orders", "slow"} {
		if resp, _ := do("PUT", "/v1/topics/"+topic, testAdminKey, ""); resp.StatusCode != 201 {
			t.Fatal(resp.Status)
		}
	}
	msg := `{"body":"hi"}`
	for i := range 3 {
		resp, _ := do("POST", "/v1/topics/orders/messages", testPubKey, msg)
		if resp.StatusCode != 201 || resp.Header.Get("RateLimit-Policy") != `"pub";q=2;w=1` {
			t.Fatalf("publish %d: %s, RateLimit-Policy %q", i, resp.Status, resp.Header.Get("RateLimit-Policy"))
		}
	}
	resp, body := do("POST", "/v1/topics/orders/messages", testPubKey, msg)
	if resp.StatusCode != 429 || resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Retry-After") != "1" ||
		resp.Header.Get("RateLimit") != `"pub";r=0;t=1` || resp.Header.Get("RateLimit-Policy") != `"pub";q=2;w=1` {
		t.Fatalf("4th publish: %s %v", resp.Status, resp.Header)
	}
	var p Problem
	if err := json.Unmarshal(body, &p); err != nil || p.Type != "urn:mqgate:problem:rate_limited" || len(p.ViolatedPolicies) != 1 || p.ViolatedPolicies[0] != "pub" ||
		!strings.Contains(p.Detail, `API key "capped" is over its limit`) {
		t.Fatalf("problem %s (%v)", body, err)
	}
	var tp Topic
	if _, b := do("GET", "/v1/topics/orders", testAdminKey, ""); json.Unmarshal(b, &tp) != nil || tp.Stats == nil || tp.Stats.Messages != 3 {
		t.Errorf("topic %s, want 3 messages: the refused publish must store nothing", b)
	}
	// A batch of 5 never fits a bucket of 3: 413, not a 429 to retry.
	resp, body = do("POST", "/v1/topics/orders/messages/batch", testPubKey, `{"messages":[`+strings.Repeat(msg+",", 4)+msg+`]}`)
	if resp.StatusCode != 413 || !strings.Contains(string(body), `exceed the 3 of limit \"pub\"`) {
		t.Fatalf("batch of 5: %s %s", resp.Status, body)
	}
	// Held for up to maxDelay instead: 20/s with a bucket of 1 holds the
	// 2nd..5th publish about 50 ms each, and refuses none.
	start := time.Now()
	for i := range 5 {
		if resp, body := do("POST", "/v1/topics/orders/messages", testSubKey, msg); resp.StatusCode != 201 {
			t.Fatalf("patient publish %d: %s %s", i, resp.Status, body)
		}
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("5 publishes at 20/s took %v, want ≥ 200ms less scheduling slack", d)
	}

	resp, body = do("GET", "/v1/admin/limits", testAdminKey, "")
	var lr LimitsResponse
	if resp.StatusCode != 200 || json.Unmarshal(body, &lr) != nil {
		t.Fatalf("limits: %s %s", resp.Status, body)
	}
	if lr.Scope != "server" || len(lr.Keys) != 2 || lr.Keys[0].Name != "capped" || lr.Keys[0].PublishBurst != 3 ||
		len(lr.Keys[0].Topics) != 1 || lr.Keys[0].Topics[0].PublishBytesPerSecond != 4 || lr.Keys[1].MaxDelaySeconds != 1 {
		t.Errorf("limits %s", body)
	}
	if ps := lr.Keys[0].Policies; len(ps) != 2 || ps[0].Name != "pub" || ps[1].Name != "pub-bytes:slow" || ps[1].Unit != "content-bytes" || ps[1].Remaining != 4 {
		t.Errorf("policies %+v", ps)
	}
	if resp, _ := do("GET", "/v1/admin/limits", testPubKey, ""); resp.StatusCode != 403 {
		t.Errorf("limits without admin: %s", resp.Status)
	}
}
