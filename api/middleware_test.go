package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRequestStateIsContext: the context instrument gives a handler is
// the request's state (the request id) over the parent's values and
// cancellation, and a JSON answer carries both headers as they were.
func TestRequestStateIsContext(t *testing.T) {
	type parentKey struct{}
	s := New(Options{})
	ctx, parentCancel := context.WithCancel(context.WithValue(context.Background(), parentKey{}, "p"))
	defer parentCancel()
	var gotID string
	var gotParent any
	var canceled bool
	h := s.instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID, gotParent = requestIDFrom(r.Context()), r.Context().Value(parentKey{})
		child, cancel := context.WithCancel(r.Context())
		defer cancel()
		parentCancel()
		<-child.Done() // the parent's cancellation reaches derived contexts
		canceled = true
		writeEncoded(w, http.StatusOK, []byte(`{"results":[]}`))
	}))
	r := httptest.NewRequestWithContext(ctx, "POST", "/v1/groups/g/ack", nil)
	r.Header.Set("X-Request-Id", "req-1")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if gotID != "req-1" || gotParent != "p" || !canceled {
		t.Fatalf("id %q, parent value %v, canceled %v", gotID, gotParent, canceled)
	}
	if got := w.Header(); got.Get("Content-Type") != "application/json" || got.Get("Content-Length") != "14" || got.Get("X-Request-Id") != "req-1" {
		t.Fatalf("headers %v", got)
	}
}
