package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBadBase64OneProblem: a bodyBase64 that does not decode answers one
// problem, on bodyBase64, in words ("not valid base64", never the
// pattern), and no problem on body, which the client did not send; the
// same in batches. An empty one is "must not be empty" on bodyBase64.
func TestBadBase64OneProblem(t *testing.T) {
	eng := openEmbedded(t)
	srv := httptest.NewServer(New(Options{Backend: eng}))
	t.Cleanup(srv.Close)
	do := func(method, path, body string) (int, Problem) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var p Problem
		_ = json.Unmarshal(raw, &p)
		return resp.StatusCode, p
	}
	if st, _ := do("PUT", "/v1/topics/t", `{}`); st != 201 {
		t.Fatalf("create topic: %d", st)
	}
	for _, bad := range []string{"eA", "eA=", "!!!!", "eA==\n", "e A=="} {
		raw, _ := json.Marshal(bad)
		for _, tc := range []struct{ path, body, field string }{
			{"/v1/topics/t/messages", `{"bodyBase64": ` + string(raw) + `}`, "bodyBase64"},
			{"/v1/topics/t/messages/batch", `{"messages": [{"body": "ok"}, {"bodyBase64": ` + string(raw) + `}]}`, "messages[1].bodyBase64"},
		} {
			st, p := do("POST", tc.path, tc.body)
			if st != 400 || len(p.Errors) != 1 || p.Errors[0].Field != tc.field ||
				!strings.Contains(p.Errors[0].Message, "not valid base64") || strings.Contains(p.Errors[0].Message, "^(") {
				t.Errorf("%s %q: %d %+v, want one %s problem saying \"not valid base64\"", tc.path, bad, st, p.Errors, tc.field)
			}
		}
	}
	st, p := do("POST", "/v1/topics/t/messages", `{"bodyBase64": ""}`)
	if st != 400 || len(p.Errors) != 1 || p.Errors[0].Field != "bodyBase64" || p.Errors[0].Message != "must not be empty" {
		t.Errorf("empty bodyBase64: %d %+v", st, p.Errors)
	}
	st, p = do("POST", "/v1/topics/t/messages", `{"body": ""}`)
	if st != 400 || len(p.Errors) != 1 || p.Errors[0].Field != "body" {
		t.Errorf("empty body: %d %+v", st, p.Errors)
	}
}
