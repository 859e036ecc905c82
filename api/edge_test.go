package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mqgate/mqgate/core"
)

// TestReadyzFollowsStore checks /readyz (GET and HEAD) turns 503 with
// Retry-After while Options.Ready reports the store cannot commit, and
// back to 200 once it can.
func TestReadyzFollowsStore(t *testing.T) {
	var failing atomic.Bool
	s := New(Options{Backend: putOnlyEngine{}, Ready: func() error {
		if failing.Load() {
			return errors.New("the store cannot commit")
		}
		return nil
	}})
	probe := func(method string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(method, "/readyz", nil))
		return w
	}
	for _, m := range []string{"GET", "HEAD"} {
		if w := probe(m); w.Code != 200 {
			t.Fatalf("%s ready: %d", m, w.Code)
		}
		failing.Store(true)
		w := probe(m)
		if w.Code != 503 || w.Header().Get("Retry-After") == "" || w.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s failing: %d %v", m, w.Code, w.Header())
		}
		failing.Store(false)
	}
}

// failingEngine fails every publish the way the store does when the
// disk is full, with the data file's path in the cause.
type failingEngine struct{ core.Backend }

func (failingEngine) Put(context.Context, string, []core.PutMessage) ([]core.PutResult, error) {
	return nil, core.Errorf(core.EUnavailable, "the store could not commit: write /var/lib/mqgate/mqgate.db: no space left on device")
}

func TestUnavailableHidesPaths(t *testing.T) {
	s := New(Options{Backend: failingEngine{}})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/v1/topics/orders/messages", strings.NewReader(`{"body":"x"}`))
	r.Header.Set("Content-Type", "application/json")
	s.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	if strings.Contains(w.Body.String(), "/var/lib") || strings.Contains(w.Body.String(), "mqgate.db") {
		t.Fatalf("the 503 leaks the path: %s", w.Body)
	}
}
