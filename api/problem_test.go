package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mqgate/mqgate/core"
)

func TestProblemForCodes(t *testing.T) {
	cases := []struct {
		err    error
		status int
	}{
		{core.Errorf(core.EInvalid, "bad"), 400},
		{core.Errorf(core.EForbidden, "no"), 403},
		{core.Errorf(core.ENotFound, "gone"), 404},
		{core.Errorf(core.EConflict, "shrink"), 409},
		{core.Errorf(core.ETooLarge, "big"), 413},
		{core.Errorf(core.ETooMany, "wait"), 429},
		{core.Errorf(core.EUnavailable, "closing"), 503},
		{fmt.Errorf("wrapped: %w", core.Errorf(core.ENotFound, "gone")), 404},
		{core.Errorf("made_up_code", "secret detail"), 500},
		{errors.New("disk on fire at /var/secret"), 500},
		{&http.MaxBytesError{Limit: 10}, 413},
	}
	for i, c := range cases {
		p := problemFor(c.err)
		if p.Status != c.status {
			t.Errorf("case %d %v: status %d, want %d", i, c.err, p.Status, c.status)
		}
		if p.Status == 500 && strings.Contains(p.Detail, "secret") {
			t.Errorf("case %d: internal error text leaked: %q", i, p.Detail)
		}
		if p.Type == "" || p.Title == "" {
			t.Errorf("case %d: empty type or title: %+v", i, p)
		}
	}
	p := problemFor(core.FieldError("queues", "must be ≤ 256"))
	if p.Status != 400 || len(p.Errors) != 1 || p.Errors[0].Field != "queues" {
		t.Errorf("field error: %+v", p)
	}
}

type decodeTarget struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func TestDecodeJSON(t *testing.T) {
	cases := []struct {
		body  string
		limit int64
		code  string
		field string
	}{
		{`{"name":"a","count":1}`, 100, "", ""},
		{`  {"name":"a"}  ` + "\n", 100, "", ""},
		{`{"name":"a","extra":1}`, 100, core.EInvalid, "extra"},
		{`{"name":"a"} {}`, 100, core.EInvalid, ""},
		{`{"name":"a"} x`, 100, core.EInvalid, ""},
		{`{"count":"1"}`, 100, core.EInvalid, "count"},
		{`{"name":`, 100, core.EInvalid, ""},
		{`[1]`, 100, core.EInvalid, ""},
		{``, 100, core.EInvalid, ""},
		{`{"name":"` + strings.Repeat("x", 200) + `"}`, 100, core.ETooLarge, ""},
	}
	for i, c := range cases {
		r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
		var dst decodeTarget
		err := decodeJSON(httptest.NewRecorder(), r, c.limit, &dst, false)
		if got := core.ErrorCode(err); got != c.code {
			t.Errorf("case %d %q: code %q (%v), want %q", i, c.body, got, err, c.code)
			continue
		}
		var de *core.Error
		if c.field != "" && (!errors.As(err, &de) || de.Field != c.field) {
			t.Errorf("case %d: error %v, want field %q", i, err, c.field)
		}
	}
	// An empty body is fine where the body is optional.
	r := httptest.NewRequest("PUT", "/", http.NoBody)
	if err := decodeJSON(httptest.NewRecorder(), r, 10, &decodeTarget{}, true); err != nil {
		t.Errorf("empty optional body: %v", err)
	}
}

// panicEngine panics on every call: the recoverer must turn that into a
// 500 problem with the request id, and the server must keep serving.
type panicEngine struct{ core.Backend }

func (panicEngine) Topics() ([]core.Topic, error) { panic("boom") }

func TestRecovererAndReadyz(t *testing.T) {
	s := New(Options{Backend: panicEngine{}})
	srv := httptest.NewServer(s)
	defer srv.Close()

	get := func(path string) (*http.Response, Problem) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var p Problem
		_ = json.Unmarshal(b, &p)
		return resp, p
	}
	resp, p := get("/v1/topics")
	if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/problem+json" ||
		p.RequestID == "" || p.RequestID != resp.Header.Get("X-Request-Id") || strings.Contains(p.Detail, "boom") {
		t.Fatalf("panic answered %d %+v", resp.StatusCode, p)
	}
	if resp, _ := get("/readyz"); resp.StatusCode != 200 {
		t.Fatalf("readyz %d before shutdown", resp.StatusCode)
	}
	s.SetShuttingDown()
	if resp, p := get("/readyz"); resp.StatusCode != 503 || p.Status != 503 {
		t.Fatalf("readyz %d during shutdown", resp.StatusCode)
	}
	if resp, _ := get("/healthz"); resp.StatusCode != 200 {
		t.Fatalf("healthz %d during shutdown: the process is still alive", resp.StatusCode)
	}
}

func TestIsJSONContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"Application/JSON":                true,
		"application/merge-patch+json":    true,
		"text/plain":                      false,
		"":                                false,
		"application/jsonx":               false,
		"multipart/form-data; boundary=x": false,
	} {
		if got := isJSONContentType(ct); got != want {
			t.Errorf("%q: %v, want %v", ct, got, want)
		}
	}
}

func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"abc-123":                true,
		"a.b:c_d":                true,
		"":                       false,
		"has space":              false,
		"new\nline":              false,
		strings.Repeat("x", 129): false,
	} {
		if got := validRequestID(id); got != want {
			t.Errorf("%q: %v, want %v", id, got, want)
		}
	}
}
