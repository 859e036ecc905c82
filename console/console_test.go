package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandlerServesTheEmbeddedPage(t *testing.T) {
	srv := httptest.NewServer(http.StripPrefix("", Handler("/console")))
	defer srv.Close()
	for _, c := range []struct{ path, ctype, contains string }{
		{"/console", "text/html", `<script src="/console/app.js"`},
		{"/console/", "text/html", "<main id=\"main\""},
		{"/console/app.js", "javascript", "async function api("},
		{"/console/app.css", "text/css", ":focus-visible"},
		{"/console", "text/html", `<script src="/console/tail.js"`},
		{"/console/tail.js", "javascript", "routes.tail = pageTail"},
		{"/console/charts.js", "javascript", "function timeChart("},
	} {
		r, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Type"), c.ctype) || !strings.Contains(string(b), c.contains) {
			t.Errorf("GET %s: %d %q, body lacks %q", c.path, r.StatusCode, r.Header.Get("Content-Type"), c.contains)
		}
		if r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", c.path)
		}
	}
	r, err := http.Get(srv.URL + "/console/nope.js")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown asset: %d, want 404", r.StatusCode)
	}
}
