package api

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzPublishDecode feeds arbitrary bodies through the publish decoder and
// checks: it never panics, and a body it accepts converts to exactly one
// body field.
func FuzzPublishDecode(f *testing.F) {
	for _, seed := range []string{
		`{"body":"x"}`, `{"bodyBase64":"AAE="}`, `{"body":"x","bodyBase64":"eA=="}`,
		`{"body":"x","delayLevel":3,"keys":["a"],"properties":{"k":"v"}}`,
		`{"messages":[{"body":"x"}]}`, `{"deliverAt":"2026-01-02T15:04:05.000Z","body":"x"}`, `{`, `[]`, `null`,
	} {
		f.Add(seed)
	}
	s := New(Options{})
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		var req PublishRequest
		if err := decodeJSON(httptest.NewRecorder(), r, maxPublishJSON, &req, false); err != nil {
			return
		}
		var fe fieldErrors
		s.checkStruct(&req, &fe)
		pm := toPutMessage(&req, -1, time.Now(), &fe)
		if len(fe) == 0 && len(pm.Body) == 0 {
			t.Fatalf("accepted %q with an empty body", body)
		}
		if len(fe) == 0 && (req.Body == nil) == (req.BodyBase64 == nil) {
			t.Fatalf("accepted %q without exactly one body field", body)
		}
	})
}
