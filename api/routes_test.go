package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRouteLabels pins the route label each kind of request is counted
// under now that the /v1 routes share one mux: a route's full pattern,
// the old /v1 mount's patterns for unmatched paths under /v1, and
// "unmatched" elsewhere; and a 405 under /v1 still lists the methods.
func TestRouteLabels(t *testing.T) {
	eng := openEmbedded(t)
	srv := httptest.NewServer(New(Options{Backend: eng}))
	t.Cleanup(srv.Close)

	do := func(method, path string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/topics", 200},
		{"GET", "/v1/topics/nope", 404},
		{"GET", "/v1/no-such-route", 404},
		{"GET", "/v1", 404},
		{"GET", "/nowhere", 404},
		{"PATCH", "/v1/topics", 405},
	} {
		if resp := do(tc.method, tc.path); resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
	if resp := do("PATCH", "/v1/topics"); resp.Header.Get("Allow") != "GET" {
		t.Errorf("405 Allow %q, want GET", resp.Header.Get("Allow"))
	}

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, want := range []string{
		`method="GET",route="/v1/topics",status="200"`,
		`method="GET",route="/v1/topics/{topic}",status="404"`,
		`method="GET",route="/v1/*",status="404"`,
		`method="GET",route="/v1",status="404"`,
		`method="GET",route="unmatched",status="404"`,
		`method="PATCH",route="/v1/*",status="405"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack a series with %s", want)
		}
	}
}

// TestConsoleMethods: the console, now in the OpenAPI document, answers
// only GET and HEAD; other methods are 405 (Schemathesis ST204).
func TestConsoleMethods(t *testing.T) {
	eng := openEmbedded(t)
	srv := httptest.NewServer(New(Options{Backend: eng}))
	t.Cleanup(srv.Close)
	for method, want := range map[string]int{"GET": 200, "HEAD": 200, "TRACE": 405, "POST": 405, "DELETE": 405} {
		for _, p := range []string{"/console", "/console/app.js"} {
			req, _ := http.NewRequest(method, srv.URL+p, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s %s: %d, want %d", method, p, resp.StatusCode, want)
			}
		}
	}
}
