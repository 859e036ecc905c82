package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/mqgate/mqgate/internal/auth"
)

const (
	testPubKey   = "pub-key-0123456789abcdef"
	testSubKey   = "sub-key-0123456789abcdef"
	testAdminKey = "admin-key-0123456789abcdef"
)

func testKeyring(t *testing.T) *auth.Keyring {
	t.Helper()
	ks, err := auth.Parse([]byte(`{"keys":[
		{"name":"writer","key":"` + testPubKey + `","grants":["pub:orders","pub:orders-*"]},
		{"name":"reader","key":"` + testSubKey + `","grants":["sub:billing"]},
		{"name":"ops","key":"` + testAdminKey + `","grants":["admin"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return auth.NewKeyring(ks)
}

// TestRouteAccessCoversEveryRoute keeps routeAccess and routes.go in step:
// a new /v1 route without a row would be refused to every key, a row
// without a route is a typo.
func TestRouteAccessCoversEveryRoute(t *testing.T) {
	s := New(Options{Keys: testKeyring(t)})
	seen := map[string]bool{}
	err := chi.Walk(s.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(route, "/v1/") {
			return nil
		}
		key := method + " " + route
		seen[key] = true
		if _, ok := routeAccess[key]; !ok {
			t.Errorf("route %s has no row in routeAccess", key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range routeAccess {
		if !seen[key] {
			t.Errorf("routeAccess row %s matches no route", key)
		}
	}
}

// TestAuthorize runs requests through the real router over a real engine
// in a temp dir. Groups are not wired, so a group route that passes the
// key check answers 503 (needConsumption): 401 and 403 come before it.
func TestAuthorize(t *testing.T) {
	eng := openEmbedded(t)
	srv := httptest.NewServer(New(Options{Backend: eng, Keys: testKeyring(t)}))
	t.Cleanup(srv.Close)

	do := func(method, path, key, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Authorization", key)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	bearer := func(k string) string { return "Bearer " + k }
	msg := `{"body":"hi"}`
	for _, tc := range []struct {
		method, path, auth, body string
		want                     int
	}{
		// Authentication.
		{"GET", "/v1/topics", "", "", 401},
		{"GET", "/v1/topics", "Bearer", "", 401},
		{"GET", "/v1/topics", "Basic " + testAdminKey, "", 401},
		{"GET", "/v1/topics", bearer("nope-0123456789abcdef"), "", 401},
		{"GET", "/v1/no-such-route", "", "", 401}, // the surface is not revealed
		{"GET", "/v1/no-such-route", bearer(testPubKey), "", 404},
		{"GET", "/v1/topics", "bearer " + testAdminKey, "", 200}, // scheme is case-insensitive

		// Admin creates; pub publishes to its topics only.
		{"PUT", "/v1/topics/orders", bearer(testPubKey), "", 403},
		{"PUT", "/v1/topics/orders", bearer(testAdminKey), "", 201},
		{"PUT", "/v1/topics/payments", bearer(testAdminKey), "", 201},
		{"POST", "/v1/topics/orders/messages", bearer(testPubKey), msg, 201},
		{"POST", "/v1/topics/ord%65rs/messages", bearer(testPubKey), msg, 201}, // checked as the handler decodes it
		{"POST", "/v1/topics/orders/messages/batch", bearer(testPubKey), `{"messages":[` + msg + `]}`, 201},
		{"POST", "/v1/topics/payments/messages", bearer(testPubKey), msg, 403},
		{"POST", "/v1/topics/orders/messages", bearer(testSubKey), msg, 403},
		{"GET", "/v1/topics/orders", bearer(testPubKey), "", 200},
		{"GET", "/v1/topics/orders/messages?key=x", bearer(testPubKey), "", 200},
		{"GET", "/v1/topics/payments/messages?key=x", bearer(testPubKey), "", 403},
		{"DELETE", "/v1/topics/orders", bearer(testPubKey), "", 403},

		// Groups: sub on its group; admin for config, reset and redrive.
		// Past the keys, the backend answers (no such group; an empty
		// config).
		{"POST", "/v1/groups/billing/receive", bearer(testSubKey), `{}`, 404},
		{"POST", "/v1/groups/billing/receive", bearer(testPubKey), `{}`, 403},
		{"POST", "/v1/groups/other/receive", bearer(testSubKey), `{}`, 403},
		{"GET", "/v1/groups/billing/dlq", bearer(testSubKey), "", 404},
		{"POST", "/v1/groups/billing/dlq/redrive", bearer(testSubKey), `{}`, 403},
		{"POST", "/v1/groups/billing/offsets/reset", bearer(testSubKey), `{}`, 403},
		{"PUT", "/v1/groups/billing", bearer(testSubKey), `{}`, 403},
		{"PUT", "/v1/groups/billing", bearer(testAdminKey), `{}`, 400},

		// Operations stay open.
		{"GET", "/healthz", "", "", 200},
		{"GET", "/metrics", "", "", 200},
	} {
		resp := do(tc.method, tc.path, tc.auth, tc.body)
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s (%q): %d, want %d", tc.method, tc.path, tc.auth, resp.StatusCode, tc.want)
			continue
		}
		if tc.want == 401 || tc.want == 403 {
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, ct)
			}
		}
		if got := resp.Header.Get("WWW-Authenticate"); (tc.want == 401) != (got != "") || (got != "" && !strings.HasPrefix(got, "Bearer ")) {
			t.Errorf("%s %s: %d with WWW-Authenticate %q", tc.method, tc.path, tc.want, got)
		}
	}
}

// TestAuthorizeListsWhatTheKeySees: GET /v1/topics shows a pub key the
// topics it may publish to, admin all of them.
func TestAuthorizeListsWhatTheKeySees(t *testing.T) {
	eng := openEmbedded(t)
	s := New(Options{Backend: eng, Keys: testKeyring(t)})
	list := func(key string) string {
		r := httptest.NewRequest("GET", "/v1/topics", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("list: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	for _, name := range []string{"orders", "orders-eu", "payments"} {
		r := httptest.NewRequest("PUT", "/v1/topics/"+name, nil)
		r.Header.Set("Authorization", "Bearer "+testAdminKey)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 201 {
			t.Fatalf("put %s: %d %s", name, w.Code, w.Body)
		}
	}
	if got := list(testPubKey); !strings.Contains(got, `"orders"`) || !strings.Contains(got, `"orders-eu"`) || strings.Contains(got, "payments") {
		t.Errorf("writer sees %s", got)
	}
	if got := list(testSubKey); strings.Contains(got, "orders") || strings.Contains(got, "payments") {
		t.Errorf("reader sees %s", got)
	}
	if got := list(testAdminKey); !strings.Contains(got, "payments") || !strings.Contains(got, `"orders"`) {
		t.Errorf("admin sees %s", got)
	}
}

// TestNoKeysIsOpen: without Keys nothing changes (today's behaviour).
func TestNoKeysIsOpen(t *testing.T) {
	eng := openEmbedded(t)
	s := New(Options{Backend: eng})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("PUT", "/v1/topics/orders", nil))
	if w.Code != 201 {
		t.Fatalf("PUT without keys configured: %d %s", w.Code, w.Body)
	}
}
