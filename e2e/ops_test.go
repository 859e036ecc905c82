package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestOperations(t *testing.T) {
	s := startServer(t, t.TempDir())
	createTopic(t, s, "orders", 1)
	want(t, s.do(t, "POST", "/v1/topics/orders/messages", map[string]string{"body": "x"}), 201)

	for _, p := range []string{"/healthz", "/readyz"} {
		r := s.do(t, "GET", p, nil)
		want(t, r, 200)
		var h struct{ Status string }
		r.JSON(t, &h)
		if h.Status != "ok" {
			t.Fatalf("%s: %s", p, r.Body)
		}
	}

	r := s.do(t, "GET", "/metrics", nil)
	want(t, r, 200)
	for _, series := range []string{
		`mqgate_http_requests_total{method="POST",route="/v1/topics/{topic}/messages",status="201"} 1`,
		`mqgate_published_messages_total 1`,
		`mqgate_http_request_duration_seconds_bucket`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(r.Body), series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	// The publish went through the store's group commit.
	if m := regexp.MustCompile(`(?m)^mqgate_store_commit_requests_total (\d+)`).FindSubmatch(r.Body); m == nil || string(m[1]) == "0" {
		t.Errorf("/metrics: mqgate_store_commit_requests_total missing or 0")
	}
	if !strings.Contains(string(r.Body), "mqgate_store_commit_seconds_total") {
		t.Errorf("/metrics lacks the store's commit time")
	}

	r = s.do(t, "GET", "/openapi.json", nil)
	want(t, r, 200)
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	r.JSON(t, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	for _, p := range []string{"/v1/topics", "/v1/topics/{topic}", "/v1/topics/{topic}/messages", "/v1/topics/{topic}/messages/batch", "/v1/topics/{topic}/messages/{messageId}"} {
		if doc.Paths[p] == nil {
			t.Errorf("openapi.json lacks %s", p)
		}
	}
	if !strings.Contains(string(r.Body), "application/problem+json") {
		t.Error("openapi.json does not describe problem+json answers")
	}

	r = s.do(t, "GET", "/docs", nil)
	want(t, r, 200)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), "/openapi.json") {
		t.Fatalf("/docs: %s", r.Header.Get("Content-Type"))
	}
}
